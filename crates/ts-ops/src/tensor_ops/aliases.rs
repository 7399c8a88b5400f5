//! PyTorch's operator aliases (`torch.less` is `torch.lt`, `torch.special.expit` is
//! `torch.sigmoid`, ...): every overload of an alias whose target overload is registered runs
//! the target's operation under the alias's own schema, so aliases never drift from their
//! targets and need no kernels of their own.

use crate::registry::Registry;
use crate::schema_table;

/// `(alias, target)` operator names; overloads map to the overload of the same name.
const ALIASES: &[(&str, &str)] = &[
    ("less", "lt"),
    ("less_", "lt_"),
    ("less_equal", "le"),
    ("less_equal_", "le_"),
    ("greater", "gt"),
    ("greater_", "gt_"),
    ("greater_equal", "ge"),
    ("greater_equal_", "ge_"),
    ("not_equal", "ne"),
    ("not_equal_", "ne_"),
    ("multiply", "mul"),
    ("multiply_", "mul_"),
    ("divide", "div"),
    ("divide_", "div_"),
    ("subtract", "sub"),
    ("subtract_", "sub_"),
    ("arccosh", "acosh"),
    ("arccosh_", "acosh_"),
    ("arcsinh", "asinh"),
    ("arcsinh_", "asinh_"),
    ("arctanh", "atanh"),
    ("arctanh_", "atanh_"),
    ("special_erf", "erf"),
    ("special_erfc", "erfc"),
    ("special_erfinv", "erfinv"),
    ("special_exp2", "exp2"),
    ("special_expit", "sigmoid"),
    ("special_expm1", "expm1"),
    ("special_log1p", "log1p"),
    ("special_logit", "logit"),
    ("special_logsumexp", "logsumexp"),
];

/// Aliases whose overload names differ from their targets'.
const OVERLOAD_ALIASES: &[(&str, &str)] = &[
    ("special_round", "round.decimals"),
    ("special_round.out", "round.decimals_out"),
    ("special_softmax", "softmax.int"),
    ("special_log_softmax", "log_softmax.int"),
];

/// The target full name of an alias full name (`aten::less.Scalar` -> `aten::lt.Scalar`).
fn target_of(full: &str) -> Option<String> {
    let rest = full.strip_prefix("aten::")?;
    if let Some((_, t)) = OVERLOAD_ALIASES.iter().find(|(a, _)| *a == rest) {
        return Some(format!("aten::{t}"));
    }
    let (base, overload) = match rest.split_once('.') {
        Some((b, o)) => (b, Some(o)),
        None => (rest, None),
    };
    let (_, target) = ALIASES.iter().find(|(a, _)| *a == base)?;
    Some(match overload {
        Some(o) => format!("aten::{target}.{o}"),
        None => format!("aten::{target}"),
    })
}

/// Defines every alias overload whose target is defined; it runs the target's operation when
/// the arities agree (checked when the alias is first looked up).
pub fn register(r: &Registry) {
    for line in schema_table::all_lines() {
        let full = crate::coverage::full_name_of(line);
        if r.is_defined(full) {
            continue;
        }
        let Some(target) = target_of(full) else {
            continue;
        };
        if !r.might_define(&target) {
            continue;
        }
        r.define(
            line,
            Box::new(move |r, s| {
                let op = r.find(&target)?;
                (s.arguments.len() == op.schema.arguments.len()).then(|| op.kind.clone())
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_names_map_to_their_targets() {
        assert_eq!(
            target_of("aten::less.Scalar").as_deref(),
            Some("aten::lt.Scalar")
        );
        assert_eq!(
            target_of("aten::divide_.Tensor_mode").as_deref(),
            Some("aten::div_.Tensor_mode")
        );
        assert_eq!(
            target_of("aten::special_round").as_deref(),
            Some("aten::round.decimals")
        );
        assert_eq!(target_of("aten::lt.Scalar"), None);
    }

    #[test]
    fn aliases_are_registered() {
        let r = crate::registry();
        for name in [
            "aten::less.Tensor",
            "aten::multiply.Tensor",
            "aten::special_expit",
            "aten::arcsinh",
        ] {
            assert!(r.find(name).is_some(), "{name} is not registered");
        }
    }
}
