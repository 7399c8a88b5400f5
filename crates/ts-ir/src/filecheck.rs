//! FileCheck: substring-based checks over printed graphs, as PyTorch's `torch._C.FileCheck`.
//!
//! Checks are matched in order with a cursor. `CHECK` finds the next occurrence; `CHECK-NEXT`
//! must be on the next line; `CHECK-SAME` on the same line; `CHECK-COUNT-N` finds N successive
//! occurrences (`CHECK-COUNT-EXACTLY-N` also forbids an (N+1)th before the next match);
//! consecutive `CHECK-NOT`s must not occur between the previous match and the next positive
//! match (or the end); consecutive `CHECK-DAG`s match in any order from the cursor.
//! `CHECK-SOURCE-HIGHLIGHTED` requires the string to be underlined by `~` on the next line.

use std::fmt;

/// The kind of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckKind {
    Check,
    Next,
    Same,
    Not,
    Dag,
    Count(usize),
    CountExactly(usize),
    SourceHighlighted,
}

/// One check directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub kind: CheckKind,
    pub text: String,
}

/// A failed check, with the text and where matching stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileCheckError {
    pub message: String,
}

impl fmt::Display for FileCheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FileCheckError {}

/// A sequence of checks, built with the builder methods or parsed from `# CHECK:` lines.
#[derive(Clone, Debug, Default)]
pub struct FileCheck {
    checks: Vec<Check>,
}

impl FileCheck {
    /// An empty set of checks.
    pub fn new() -> FileCheck {
        FileCheck::default()
    }

    fn push(mut self, kind: CheckKind, text: &str) -> FileCheck {
        self.checks.push(Check {
            kind,
            text: text.to_string(),
        });
        self
    }

    /// `CHECK`.
    pub fn check(self, s: &str) -> FileCheck {
        self.push(CheckKind::Check, s)
    }

    /// `CHECK-NEXT`.
    pub fn check_next(self, s: &str) -> FileCheck {
        self.push(CheckKind::Next, s)
    }

    /// `CHECK-SAME`.
    pub fn check_same(self, s: &str) -> FileCheck {
        self.push(CheckKind::Same, s)
    }

    /// `CHECK-NOT`.
    pub fn check_not(self, s: &str) -> FileCheck {
        self.push(CheckKind::Not, s)
    }

    /// `CHECK-DAG`.
    pub fn check_dag(self, s: &str) -> FileCheck {
        self.push(CheckKind::Dag, s)
    }

    /// `CHECK-COUNT-N` (`exactly` for `CHECK-COUNT-EXACTLY-N`).
    pub fn check_count(self, s: &str, n: usize, exactly: bool) -> FileCheck {
        self.push(
            if exactly {
                CheckKind::CountExactly(n)
            } else {
                CheckKind::Count(n)
            },
            s,
        )
    }

    /// `CHECK-SOURCE-HIGHLIGHTED`.
    pub fn check_source_highlighted(self, s: &str) -> FileCheck {
        self.push(CheckKind::SourceHighlighted, s)
    }

    /// Parses directives from text: `#` then up to 6 spaces/tabs, then `CHECK` with a suffix
    /// (`:`, `-NEXT:`, `-SAME:`, `-NOT:`, `-DAG:`, `-COUNT-N:`, `-COUNT-EXACTLY-N:`,
    /// `-SOURCE-HIGHLIGHTED:`), then a space and the string to the end of the line.
    pub fn parse(text: &str) -> Result<FileCheck, FileCheckError> {
        let mut fc = FileCheck::new();
        for line in text.lines() {
            let mut rest = line;
            while let Some(h) = rest.find('#') {
                rest = &rest[h + 1..];
                let ws = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                if ws > 6 {
                    continue;
                }
                let body = &rest[ws..];
                let Some(after) = body.strip_prefix("CHECK") else {
                    continue;
                };
                let (kind, tail) = if let Some(t) = after.strip_prefix(": ") {
                    (CheckKind::Check, t)
                } else if let Some(t) = after.strip_prefix("-NEXT: ") {
                    (CheckKind::Next, t)
                } else if let Some(t) = after.strip_prefix("-SAME: ") {
                    (CheckKind::Same, t)
                } else if let Some(t) = after.strip_prefix("-NOT: ") {
                    (CheckKind::Not, t)
                } else if let Some(t) = after.strip_prefix("-DAG: ") {
                    (CheckKind::Dag, t)
                } else if let Some(t) = after.strip_prefix("-SOURCE-HIGHLIGHTED: ") {
                    (CheckKind::SourceHighlighted, t)
                } else if let Some(t) = after.strip_prefix("-COUNT-EXACTLY-") {
                    let (n, t) = split_count(t, line)?;
                    (CheckKind::CountExactly(n), t)
                } else if let Some(t) = after.strip_prefix("-COUNT-") {
                    let (n, t) = split_count(t, line)?;
                    (CheckKind::Count(n), t)
                } else {
                    return Err(FileCheckError {
                        message: format!("malformed check directive: {line}"),
                    });
                };
                fc.checks.push(Check {
                    kind,
                    text: tail.to_string(),
                });
                break;
            }
        }
        Ok(fc)
    }

    /// The parsed checks.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// Runs the checks over a printed graph.
    pub fn run_graph(&self, g: &crate::graph::Graph) -> Result<(), FileCheckError> {
        self.run(&g.to_string())
    }

    /// Runs the checks over `text`.
    pub fn run(&self, text: &str) -> Result<(), FileCheckError> {
        let mut cursor = 0usize;
        let mut i = 0;
        while i < self.checks.len() {
            let c = &self.checks[i];
            match c.kind {
                CheckKind::Not => {
                    let j = self.group_end(i, CheckKind::Not);
                    let nots = &self.checks[i..j];
                    // The region ends where the next positive group matches.
                    let (end, next_cursor) = if j < self.checks.len() {
                        let (start, e) = self.match_group(text, cursor, j)?;
                        (start, Some((e, self.group_end_any(j))))
                    } else {
                        (text.len(), None)
                    };
                    for n in nots {
                        if let Some(p) = text[cursor..end].find(&n.text) {
                            return Err(self.fail(
                                text,
                                cursor + p,
                                &format!("CHECK-NOT: {}", n.text),
                                "found a string that must not occur",
                            ));
                        }
                    }
                    match next_cursor {
                        Some((e, nj)) => {
                            cursor = e;
                            i = nj;
                        }
                        None => i = j,
                    }
                }
                _ => {
                    let (_, e) = self.match_group(text, cursor, i)?;
                    // COUNT-EXACTLY: no further occurrence before the next positive match.
                    if let CheckKind::CountExactly(_) = c.kind {
                        let nj = i + 1;
                        let limit =
                            if nj < self.checks.len() && self.checks[nj].kind != CheckKind::Not {
                                self.match_group(text, e, nj)
                                    .map(|(s, _)| s)
                                    .unwrap_or(text.len())
                            } else {
                                text.len()
                            };
                        if let Some(p) = text[e..limit].find(&c.text) {
                            return Err(self.fail(
                                text,
                                e + p,
                                &format!("CHECK-COUNT-EXACTLY: {}", c.text),
                                "found one occurrence too many",
                            ));
                        }
                    }
                    if c.kind != CheckKind::SourceHighlighted {
                        cursor = e;
                    }
                    i = self.group_end_any(i);
                }
            }
        }
        Ok(())
    }

    fn group_end(&self, i: usize, kind: CheckKind) -> usize {
        let mut j = i;
        while j < self.checks.len() && self.checks[j].kind == kind {
            j += 1;
        }
        j
    }

    fn group_end_any(&self, i: usize) -> usize {
        match self.checks[i].kind {
            CheckKind::Dag => self.group_end(i, CheckKind::Dag),
            CheckKind::Not => self.group_end(i, CheckKind::Not),
            _ => i + 1,
        }
    }

    /// Matches the positive group starting at check `i` from `cursor`; returns its range.
    fn match_group(
        &self,
        text: &str,
        cursor: usize,
        i: usize,
    ) -> Result<(usize, usize), FileCheckError> {
        let c = &self.checks[i];
        let label = |k: &CheckKind| match k {
            CheckKind::Check => "CHECK".to_string(),
            CheckKind::Next => "CHECK-NEXT".to_string(),
            CheckKind::Same => "CHECK-SAME".to_string(),
            CheckKind::Dag => "CHECK-DAG".to_string(),
            CheckKind::Not => "CHECK-NOT".to_string(),
            CheckKind::Count(n) => format!("CHECK-COUNT-{n}"),
            CheckKind::CountExactly(n) => format!("CHECK-COUNT-EXACTLY-{n}"),
            CheckKind::SourceHighlighted => "CHECK-SOURCE-HIGHLIGHTED".to_string(),
        };
        let missing = |at: usize| {
            self.fail(
                text,
                at,
                &format!("{}: {}", label(&c.kind), c.text),
                "could not find the string",
            )
        };
        match &c.kind {
            CheckKind::Check => {
                let p = text[cursor..]
                    .find(&c.text)
                    .ok_or_else(|| missing(cursor))?
                    + cursor;
                Ok((p, p + c.text.len()))
            }
            CheckKind::Next => {
                let nl = text[cursor..].find('\n').ok_or_else(|| missing(cursor))? + cursor + 1;
                let line_end = text[nl..].find('\n').map(|e| nl + e).unwrap_or(text.len());
                let p = text[nl..line_end]
                    .find(&c.text)
                    .ok_or_else(|| missing(nl))?
                    + nl;
                Ok((p, p + c.text.len()))
            }
            CheckKind::Same => {
                let line_end = text[cursor..]
                    .find('\n')
                    .map(|e| cursor + e)
                    .unwrap_or(text.len());
                let p = text[cursor..line_end]
                    .find(&c.text)
                    .ok_or_else(|| missing(cursor))?
                    + cursor;
                Ok((p, p + c.text.len()))
            }
            CheckKind::Count(n) | CheckKind::CountExactly(n) => {
                let mut pos = cursor;
                let mut first = None;
                for _ in 0..*n {
                    let p = text[pos..].find(&c.text).ok_or_else(|| missing(pos))? + pos;
                    first.get_or_insert(p);
                    pos = p + c.text.len();
                }
                Ok((first.unwrap_or(cursor), pos))
            }
            CheckKind::Dag => {
                let j = self.group_end(i, CheckKind::Dag);
                let (mut lo, mut hi) = (usize::MAX, cursor);
                for d in &self.checks[i..j] {
                    let p = text[cursor..].find(&d.text).ok_or_else(|| {
                        self.fail(
                            text,
                            cursor,
                            &format!("CHECK-DAG: {}", d.text),
                            "could not find the string",
                        )
                    })? + cursor;
                    lo = lo.min(p);
                    hi = hi.max(p + d.text.len());
                }
                Ok((lo.min(hi), hi))
            }
            CheckKind::SourceHighlighted => {
                let mut from = cursor;
                while let Some(p) = text[from..].find(&c.text) {
                    let p = p + from;
                    let line_start = text[..p].rfind('\n').map(|x| x + 1).unwrap_or(0);
                    let col = p - line_start;
                    if let Some(nl) = text[p..].find('\n') {
                        let next = &text[p + nl + 1..];
                        let next_line = next.split('\n').next().unwrap_or("");
                        let under = next_line.get(col..col + c.text.len()).unwrap_or("");
                        if !under.is_empty() && under.chars().all(|ch| ch == '~') {
                            return Ok((p, p + c.text.len()));
                        }
                    }
                    from = p + 1;
                }
                Err(missing(cursor))
            }
            CheckKind::Not => Ok((cursor, cursor)),
        }
    }

    fn fail(&self, text: &str, at: usize, check: &str, why: &str) -> FileCheckError {
        let at = at.min(text.len());
        let line_start = text[..at].rfind('\n').map(|x| x + 1).unwrap_or(0);
        let line_end = text[at..].find('\n').map(|e| at + e).unwrap_or(text.len());
        let line_no = text[..at].matches('\n').count() + 1;
        FileCheckError {
            message: format!(
                "{why}\nFrom {check}\nmatching stopped at line {line_no}:\n{}\n{}^\nin:\n{text}",
                &text[line_start..line_end],
                " ".repeat(at - line_start)
            ),
        }
    }
}

fn split_count<'a>(t: &'a str, line: &str) -> Result<(usize, &'a str), FileCheckError> {
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n = t[..digits].parse().map_err(|_| FileCheckError {
        message: format!("malformed CHECK-COUNT directive: {line}"),
    })?;
    let rest = t[digits..]
        .strip_prefix(": ")
        .ok_or_else(|| FileCheckError {
            message: format!("malformed CHECK-COUNT directive: {line}"),
        })?;
    Ok((n, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "graph(%x : Tensor):\n  %1 : int = prim::Constant[value=1]()\n  %2 : Tensor = aten::add(%x, %x, %1)\n  %3 : Tensor = aten::mul(%2, %2)\n  return (%3)\n";

    #[test]
    fn positive_checks() {
        FileCheck::new()
            .check("graph")
            .check_next("prim::Constant")
            .check_next("aten::add")
            .check_same("%1")
            .run(TEXT)
            .unwrap();
        FileCheck::new()
            .check_count("Tensor =", 2, true)
            .check("return")
            .run(TEXT)
            .unwrap();
        FileCheck::new()
            .check_dag("aten::mul")
            .check_dag("aten::add")
            .check("return")
            .run(TEXT)
            .unwrap();
        FileCheck::new()
            .check("aten::add")
            .check_not("aten::sub")
            .check("aten::mul")
            .run(TEXT)
            .unwrap();
        FileCheck::new()
            .check("aten::mul")
            .check_not("aten::add")
            .run(TEXT)
            .unwrap();
    }

    #[test]
    fn negative_checks_fail_with_location() {
        let e = FileCheck::new()
            .check("aten::mul")
            .check("aten::add")
            .run(TEXT)
            .unwrap_err();
        assert!(e.message.contains("From CHECK: aten::add"), "{e}");
        assert!(e.message.contains("line 4"), "{e}");
        assert!(FileCheck::new()
            .check("graph")
            .check_next("aten::add")
            .run(TEXT)
            .is_err());
        assert!(FileCheck::new()
            .check("prim::Constant")
            .check_same("aten::add")
            .run(TEXT)
            .is_err());
        assert!(FileCheck::new()
            .check_not("aten::add")
            .check("aten::mul")
            .run(TEXT)
            .is_err());
        assert!(FileCheck::new()
            .check_count("Tensor =", 1, true)
            .run(TEXT)
            .is_err());
        assert!(FileCheck::new()
            .check_count("Tensor =", 3, false)
            .run(TEXT)
            .is_err());
    }

    #[test]
    fn parses_directives() {
        let fc = FileCheck::parse("# CHECK: graph\n#   CHECK-NEXT: prim::Constant\n# CHECK-COUNT-2: Tensor =\n# CHECK-NOT: aten::sub\n# CHECK-DAG: return").unwrap();
        assert_eq!(fc.checks().len(), 5);
        assert_eq!(fc.checks()[2].kind, CheckKind::Count(2));
        fc.run(TEXT).unwrap();
        assert!(FileCheck::parse("# CHECK-BOGUS: x").is_err());
    }

    #[test]
    fn source_highlighted() {
        let t = "error\n    return x\n           ~ <--- HERE\n";
        FileCheck::new()
            .check_source_highlighted("x")
            .run(t)
            .unwrap();
        assert!(FileCheck::new()
            .check_source_highlighted("return")
            .run(t)
            .is_err());
    }
}
