//! Which of PyTorch's operator schemas have no kernel here, and why (`tsrs ops --missing`).
//!
//! The reasons are data (`data/missing_reasons.txt`: category + glob pattern rules, first
//! match wins), so the list of what is merely "not yet implemented" stays visible and can only
//! be hidden by writing down a reason.

use std::sync::OnceLock;

static RULES_TEXT: &str = include_str!("../data/missing_reasons.txt");

/// The category of a schema that no rule explains.
pub const NOT_YET_IMPLEMENTED: &str = "not-yet-implemented";

/// The parsed `(category, pattern)` rules, in file order.
fn rules() -> &'static [(&'static str, &'static str)] {
    static RULES: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    RULES.get_or_init(|| {
        RULES_TEXT
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| {
                let mut parts = l.split_whitespace();
                Some((parts.next()?, parts.next()?))
            })
            .collect()
    })
}

/// Glob match where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(p) => rest = &rest[p + mid.len()..],
            None => return false,
        }
    }
    true
}

/// Why the operator `ns::name.overload` has no kernel: a category of the rules file, or
/// [`NOT_YET_IMPLEMENTED`].
pub fn missing_reason(full_name: &str) -> &'static str {
    rules()
        .iter()
        .find(|(_, p)| glob(p, full_name))
        .map(|(c, _)| *c)
        .unwrap_or(NOT_YET_IMPLEMENTED)
}

/// `ns::name.overload` of a schema line.
pub fn full_name_of(line: &str) -> &str {
    &line[..line.find('(').unwrap_or(line.len())]
}

/// Every schema line of PyTorch's table without a registered operator, with its reason, in
/// the table's order.
pub fn missing_schemas() -> Vec<(&'static str, &'static str)> {
    let r = crate::registry();
    crate::schema_table::all_lines()
        .filter(|l| r.find(full_name_of(l)).is_none())
        .map(|l| (l, missing_reason(full_name_of(l))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("aten::*cudnn*", "aten::_cudnn_rnn.default"));
        assert!(glob("c10d::*", "c10d::allreduce_"));
        assert!(glob("aten::*_backward*", "aten::elu_backward.grad_input"));
        assert!(!glob("aten::*_backward*", "aten::backward"));
        assert!(glob("prim::Guard", "prim::Guard"));
        assert!(!glob("prim::Guard", "prim::GuardX"));
        assert!(glob("a*b*c", "abc"));
        assert!(!glob("a*b*c", "ac"));
    }

    #[test]
    fn every_rule_is_well_formed_and_used() {
        let cats = [
            "jit-internal",
            "compiler",
            "needs-python",
            "cuda-only",
            "other-backend",
            "distributed",
            "sparse",
            "quantized",
            "backward-only",
            "nested",
            "unsupported-dtype",
        ];
        let lines: Vec<&str> = crate::schema_table::all_lines().map(full_name_of).collect();
        for (cat, pat) in rules() {
            assert!(cats.contains(cat), "unknown category {cat} for {pat}");
            assert!(
                lines.iter().any(|l| glob(pat, l)),
                "rule {cat} {pat} matches no schema"
            );
        }
    }

    #[test]
    fn every_missing_schema_has_a_reason() {
        let unexplained: Vec<&str> = missing_schemas()
            .into_iter()
            .filter(|(_, reason)| *reason == NOT_YET_IMPLEMENTED)
            .map(|(schema, _)| schema)
            .collect();
        assert!(unexplained.is_empty(), "{unexplained:#?}");
    }

    #[test]
    fn reasons_for_known_operators() {
        assert_eq!(missing_reason("aten::_cudnn_rnn"), "cuda-only");
        assert_eq!(missing_reason("c10d::allreduce_"), "distributed");
        assert_eq!(missing_reason("aten::_sparse_mm"), "sparse");
        assert_eq!(missing_reason("prim::Guard"), "jit-internal");
        assert_eq!(missing_reason("aten::wait"), "compiler");
        assert_eq!(missing_reason("aten::some_future_op"), NOT_YET_IMPLEMENTED);
    }
}
