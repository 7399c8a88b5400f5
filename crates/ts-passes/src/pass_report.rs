//! An HTML page of what the optimizer did: the graph after every pass, in order, each shown as
//! a line diff against the graph before the pass (added lines green, removed lines red), with
//! the final graph drawn as an SVG. One self-contained file: inline style and script, no
//! external resources.

use std::fmt::Write;

use crate::pass_manager::PassSnapshot;

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A line diff: each line of `a` and `b` marked kept (' '), removed ('-') or added ('+').
pub fn line_diff<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    // Trim the common prefix and suffix, then LCS on the rest.
    let mut pre = 0;
    while pre < a.len() && pre < b.len() && a[pre] == b[pre] {
        pre += 1;
    }
    let mut suf = 0;
    while suf < a.len() - pre && suf < b.len() - pre && a[a.len() - 1 - suf] == b[b.len() - 1 - suf]
    {
        suf += 1;
    }
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<(char, &str)> = a[..pre].iter().map(|l| (' ', *l)).collect();
    if ma.len().saturating_mul(mb.len()) > 25_000_000 {
        // Too large for a table: everything in the middle changed.
        out.extend(ma.iter().map(|l| ('-', *l)));
        out.extend(mb.iter().map(|l| ('+', *l)));
    } else {
        let (n, m) = (ma.len(), mb.len());
        let mut t = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                t[i * (m + 1) + j] = if ma[i] == mb[j] {
                    t[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                out.push((' ', ma[i]));
                i += 1;
                j += 1;
            } else if j < m && (i == n || t[i * (m + 1) + j + 1] >= t[(i + 1) * (m + 1) + j]) {
                out.push(('+', mb[j]));
                j += 1;
            } else {
                out.push(('-', ma[i]));
                i += 1;
            }
        }
    }
    out.extend(a[a.len() - suf..].iter().map(|l| (' ', *l)));
    out
}

/// The report for `snapshots` (the first is the input graph).
pub fn html_report(title: &str, snapshots: &[PassSnapshot]) -> String {
    let mut body = String::new();
    let texts: Vec<String> = snapshots.iter().map(|s| s.graph.to_string()).collect();
    let mut changed_count = 0;
    for (i, snap) in snapshots.iter().enumerate() {
        let cur: Vec<&str> = texts[i].lines().collect();
        let (diff, changed) = if i == 0 {
            (cur.iter().map(|l| (' ', *l)).collect::<Vec<_>>(), true)
        } else {
            let prev: Vec<&str> = texts[i - 1].lines().collect();
            let d = line_diff(&prev, &cur);
            let changed = d.iter().any(|(k, _)| *k != ' ');
            (d, changed)
        };
        changed_count += usize::from(changed && i > 0);
        let added = diff.iter().filter(|(k, _)| *k == '+').count();
        let removed = diff.iter().filter(|(k, _)| *k == '-').count();
        let summary = if i == 0 {
            format!("{} lines", cur.len())
        } else if changed {
            format!("+{added} −{removed}")
        } else {
            "no change".to_string()
        };
        let _ = write!(
            body,
            "<details class=\"pass{}\"{}><summary><span class=\"idx\">{i}</span> <span class=\"name\">{}</span> <span class=\"stat\">{summary}</span></summary><pre>",
            if changed { " changed" } else { " same" },
            if changed { " open" } else { "" },
            html_escape(&snap.pass)
        );
        for (k, line) in diff {
            let class = match k {
                '+' => "add",
                '-' => "del",
                _ => "ctx",
            };
            // The spans are blocks: a newline after each would show as an empty line.
            let _ = write!(
                body,
                "<span class=\"{class}\">{k} {}</span>",
                html_escape(line)
            );
        }
        body.push_str("</pre></details>\n");
    }
    let picture = snapshots
        .last()
        .map(|s| ts_ir::render::to_svg(&s.graph, &[]))
        .unwrap_or_default();
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>\nbody{{font-family:sans-serif;margin:1.5em;color:#222}}\nh1{{font-size:1.3em}}\n.info{{color:#555}}\ndetails{{border:1px solid #ccc;border-radius:4px;margin:.4em 0}}\nsummary{{cursor:pointer;padding:.3em .6em;background:#f4f4f4}}\ndetails.changed summary{{background:#eef3ff}}\n.idx{{color:#888;display:inline-block;min-width:2em}}\n.name{{font-weight:bold}}\n.stat{{color:#666;margin-left:1em}}\npre{{margin:0;padding:.5em;overflow-x:auto;font-size:12px;line-height:1.35}}\n.add{{background:#d8f5d8;display:block}}\n.del{{background:#fbd9d9;display:block;text-decoration:line-through;color:#844}}\n.ctx{{display:block}}\n.picture{{overflow:auto;border:1px solid #ccc;margin:.5em 0;max-height:40em}}\nbutton{{margin-right:.5em}}\n</style></head><body>\n<h1>{t}</h1>\n<p class=\"info\">{n} passes, {c} changed the graph. Each section is the graph after that pass, diffed against the graph before it.</p>\n<p><button onclick=\"document.querySelectorAll('details').forEach(d=>d.open=true)\">expand all</button><button onclick=\"document.querySelectorAll('details.same').forEach(d=>d.open=false)\">collapse unchanged</button></p>\n<h2>Final graph</h2><div class=\"picture\">{picture}</div>\n<h2>Passes</h2>\n{body}</body></html>\n",
        t = html_escape(title),
        n = snapshots.len().saturating_sub(1),
        c = changed_count,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_lines() {
        let a = ["x", "a", "b", "y"];
        let b = ["x", "a", "c", "y"];
        let d = line_diff(&a, &b);
        assert_eq!(
            d,
            vec![(' ', "x"), (' ', "a"), ('+', "c"), ('-', "b"), (' ', "y")]
        );
    }

    #[test]
    fn report_marks_changes() {
        let g1 = ts_ir::parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  %z : Tensor = aten::relu(%x)\n  return (%y)\n").unwrap();
        let mut g2 = g1.clone();
        crate::dead_code_elimination::eliminate_dead_code(&mut g2);
        let snaps = vec![
            PassSnapshot {
                pass: "Input".into(),
                changed: true,
                graph: g1,
            },
            PassSnapshot {
                pass: "EliminateDeadCode".into(),
                changed: true,
                graph: g2.clone(),
            },
            PassSnapshot {
                pass: "ConstantPooling".into(),
                changed: false,
                graph: g2,
            },
        ];
        let h = html_report("f", &snaps);
        assert!(
            h.contains("class=\"del\">- ") && h.contains("aten::relu(%x)"),
            "{h}"
        );
        assert!(h.contains("no change"));
        assert!(h.contains("<svg"));
        assert!(!h.contains("http://") || h.contains("http://www.w3.org/2000/svg"));
    }
}
