//! Identifier rules of the printed source: which names are valid, which are reserved, and how
//! PyTorch's printer makes a candidate name unique (`x`, `x0`, `x1`, ...).

use std::collections::{HashMap, HashSet};

/// Names that are valid identifiers but may not be bound in printed code: Python keywords and
/// the names the importer's environment defines (`ops`, `CONSTANTS`, `fork`, `inf`, ...).
const RESERVED: &[&str] = &[
    "_",
    "as",
    "aten",
    "attribute",
    "CONSTANTS",
    "fork",
    "getattr",
    "inf",
    "nan",
    "infj",
    "nanj",
    "ops",
    "__torch__",
    "and",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "False",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "None",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "True",
    "try",
    "while",
    "with",
    "yield",
    "uninitialized",
    "unchecked_cast",
];

/// True when `name` may be written as a Python identifier (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_valid_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Rewrites a debug name into an identifier: other characters become `_`, and a leading digit
/// (or an empty name) gets a `_` prefix.
pub fn make_valid_identifier(candidate: &str) -> String {
    let mut out = String::with_capacity(candidate.len() + 1);
    if candidate.is_empty() || candidate.starts_with(|c: char| c.is_ascii_digit()) {
        out.push('_');
    }
    out.extend(candidate.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        }
    }));
    out
}

/// A value's debug name without PyTorch's `.N` uniquing suffix (`x.1` → `x`).
pub fn debug_name_base(name: &str) -> &str {
    match name.rfind('.') {
        Some(dot)
            if dot + 1 < name.len() && name[dot + 1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            &name[..dot]
        }
        _ => name,
    }
}

/// True for a name the IR printer shows for unnamed values (`%5`): such values have no debug
/// name.
pub fn is_unnamed(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_digit())
}

/// The name generator of one printed file. `used` is reset for every function; the suffix
/// counters live as long as the file, which is why temporaries are numbered `_0`, `_1`, ...
/// across all the functions of a file.
#[derive(Default, Debug)]
pub struct NameGen {
    next_id: HashMap<String, usize>,
    used: HashSet<String>,
}

impl NameGen {
    /// Forgets the names bound by the previous function.
    pub fn reset_used(&mut self) {
        self.used.clear();
    }

    /// A fresh name from `candidate`: the candidate itself when free, else the candidate with
    /// the next number of the counter of the last name tried (PyTorch's exact sequence).
    pub fn fresh(&mut self, candidate: &str) -> String {
        let mut name = candidate.to_string();
        while self.used.contains(&name) || RESERVED.contains(&name.as_str()) {
            let counter = self.next_id.entry(name).or_insert(0);
            let n = *counter;
            *counter += 1;
            name = format!("{candidate}{n}");
        }
        self.used.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_valid_identifier("_x1"));
        assert!(!is_valid_identifier("1x"));
        assert!(!is_valid_identifier(""));
        assert!(!is_valid_identifier("a.b"));
        assert_eq!(make_valid_identifier("0"), "_0");
        assert_eq!(make_valid_identifier("a.b"), "a_b");
        assert_eq!(make_valid_identifier(""), "_");
        assert_eq!(debug_name_base("x.12"), "x");
        assert_eq!(debug_name_base("x."), "x.");
        assert_eq!(debug_name_base("x.a"), "x.a");
        assert!(is_unnamed("12"));
        assert!(!is_unnamed("x"));
    }

    #[test]
    fn fresh_names_follow_pytorch_counters() {
        let mut g = NameGen::default();
        assert_eq!(g.fresh("_"), "_0");
        assert_eq!(g.fresh("_"), "_1");
        assert_eq!(g.fresh("x"), "x");
        assert_eq!(g.fresh("x"), "x0");
        assert_eq!(g.fresh("if"), "if0");
        g.reset_used();
        // Counters survive the reset: the next temporary of the file is `_2`.
        assert_eq!(g.fresh("_"), "_2");
        assert_eq!(g.fresh("x"), "x");
        // `x0` is free again but the counter for `x` moved on.
        assert_eq!(g.fresh("x"), "x1");
        // When the numbered name is taken too, the counter of that name is used.
        let mut g = NameGen::default();
        g.fresh("y");
        g.fresh("y0");
        assert_eq!(g.fresh("y"), "y1");
    }
}
