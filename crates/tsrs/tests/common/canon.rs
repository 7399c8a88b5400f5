//! The canonical form of ../shared/corpus/ir_canon.py, for comparing printed graphs.

use std::collections::HashMap;

/// The canonical form of a printed graph, as ir_canon.py defines it.
pub fn canon(text: &str) -> Vec<String> {
    let strip_loc = |l: &str| -> String {
        // A trailing `# file:line:col` with a non-empty file.
        if let Some(p) = l.rfind(" # ") {
            let c = &l[p + 3..];
            let parts: Vec<&str> = c.rsplitn(3, ':').collect();
            if parts.len() == 3
                && !parts[2].is_empty()
                && !parts[2].contains(char::is_whitespace)
                && parts[0].chars().all(|x| x.is_ascii_digit())
                && parts[1].chars().all(|x| x.is_ascii_digit())
                && !parts[0].is_empty()
                && !parts[1].is_empty()
            {
                return l[..p].trim_end().to_string();
            }
        }
        l.trim_end().to_string()
    };
    let mut consts: HashMap<String, String> = HashMap::new();
    let mut kept = Vec::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let l = strip_loc(l);
        let t = l.trim_start();
        if let Some((lhs, rhs)) = t.split_once(" = prim::Constant") {
            if let Some((name, ty)) = lhs.split_once(" : ") {
                if name.starts_with('%') && !name.contains(',') {
                    let rest = rhs;
                    if rest == "()" {
                        consts.insert(name.to_string(), "None".into());
                        continue;
                    }
                    if let Some(v) = rest
                        .strip_prefix("[value=")
                        .and_then(|r| r.strip_suffix("]()"))
                    {
                        consts.insert(name.to_string(), format!("{}({v})", ty.trim()));
                        continue;
                    }
                }
            }
        }
        kept.push(l);
    }
    let mut names: HashMap<String, String> = HashMap::new();
    kept.iter()
        .map(|l| {
            let mut out = String::new();
            let b = l.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'%' {
                    let mut j = i + 1;
                    while j < b.len()
                        && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.')
                    {
                        j += 1;
                    }
                    if j > i + 1 {
                        let v = &l[i..j];
                        if let Some(c) = consts.get(v) {
                            out.push_str(c);
                        } else {
                            let n = names.len();
                            out.push_str(
                                names
                                    .entry(v.to_string())
                                    .or_insert_with(|| format!("%{n}")),
                            );
                        }
                        i = j;
                        continue;
                    }
                }
                let ch = l[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
            out
        })
        .collect()
}
