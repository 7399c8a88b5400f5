//! Operator upgraders: the behaviour older file-format versions gave an operator whose meaning
//! has since changed (PyTorch's `upgraders` namespace). The archive importer points nodes of an
//! old archive at these instead of the current operator.
//!
//! | upgrader | versions | old meaning |
//! |---|---|---|
//! | `div_Tensor_0_3`, `div_Scalar_0_3`, `div__Tensor_0_3`, `div__Scalar_0_3`, `div_out_0_3` | 0–3 | `torch.div` of two integral operands truncates |
//! | `full_0_4` | 0–4 | `torch.full` without a dtype makes the default float dtype |

use ts_tensor::{factory, Error, RoundingMode, Scalar, Tensor};

use crate::registry::{op, Registry, Stack};
use crate::stack::{
    pop, pop_int_list, pop_opt_device, pop_opt_dtype, pop_scalar, pop_tensor, push,
};

/// The division an integral `a / b` meant before file-format version 4: truncation when both
/// operands are integral, true division otherwise.
fn legacy_div(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    if a.dtype().is_floating_point() || b.dtype().is_floating_point() {
        a.div(b)
    } else {
        a.div_mode(b, RoundingMode::Trunc)
    }
}

fn legacy_div_scalar(a: &Tensor, b: Scalar) -> Result<Tensor, Error> {
    if a.dtype().is_floating_point() || b.is_floating_point() {
        a.div_scalar(b)
    } else {
        a.div_scalar_mode(b, RoundingMode::Trunc)
    }
}

/// Writes `value` into `target` (the in-place forms), refusing a result `target` cannot hold,
/// as the current `div_` does.
fn write_into(target: &Tensor, value: &Tensor) -> Result<(), Error> {
    if target.sizes() != value.sizes() {
        return Err(Error::runtime(format!(
            "output with shape {:?} doesn't match the broadcast shape {:?}",
            target.sizes().as_slice(),
            value.sizes().as_slice()
        )));
    }
    ts_tensor::promote::check_can_cast(value.dtype(), target.dtype())?;
    target.copy_(value)
}

/// Registers every upgrader.
pub fn register(r: &Registry) {
    let ops: Vec<(&str, crate::Operation)> = vec![
        (
            "upgraders::div_Tensor_0_3(Tensor self, Tensor other) -> Tensor",
            op(|s: &mut Stack| {
                let b = pop_tensor(s)?;
                let a = pop_tensor(s)?;
                push(s, legacy_div(&a, &b)?);
                Ok(())
            }),
        ),
        (
            "upgraders::div_Scalar_0_3(Tensor self, Scalar other) -> Tensor",
            op(|s: &mut Stack| {
                let b = pop_scalar(s)?;
                let a = pop_tensor(s)?;
                push(s, legacy_div_scalar(&a, b)?);
                Ok(())
            }),
        ),
        (
            "upgraders::div__Tensor_0_3(Tensor(a!) self, Tensor other) -> Tensor(a!)",
            op(|s: &mut Stack| {
                let b = pop_tensor(s)?;
                let a = pop_tensor(s)?;
                write_into(&a, &legacy_div(&a, &b)?)?;
                push(s, a);
                Ok(())
            }),
        ),
        (
            "upgraders::div__Scalar_0_3(Tensor(a!) self, Scalar other) -> Tensor(a!)",
            op(|s: &mut Stack| {
                let b = pop_scalar(s)?;
                let a = pop_tensor(s)?;
                write_into(&a, &legacy_div_scalar(&a, b)?)?;
                push(s, a);
                Ok(())
            }),
        ),
        (
            "upgraders::div_out_0_3(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
            op(|s: &mut Stack| {
                let out = pop_tensor(s)?;
                let b = pop_tensor(s)?;
                let a = pop_tensor(s)?;
                let v = legacy_div(&a, &b)?;
                push(s, ts_tensor::resize_out_and_copy(&out, &v)?);
                Ok(())
            }),
        ),
        (
            "upgraders::full_0_4(int[] size, Scalar fill_value, *, ScalarType? dtype=None, \
             Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
            op(|s: &mut Stack| {
                let _pin_memory = pop(s)?;
                let _device = pop_opt_device(s)?;
                let _layout = pop(s)?;
                let dtype = pop_opt_dtype(s)?;
                let fill = pop_scalar(s)?;
                let size = pop_int_list(s)?;
                // Before version 5 an integral fill value did not make an integral tensor.
                let fill = match (dtype, fill) {
                    (None, Scalar::Int(i)) => Scalar::Float(i as f64),
                    (None, Scalar::Bool(b)) => Scalar::Float(b as i64 as f64),
                    (_, f) => f,
                };
                push(s, factory::full(&size, fill, dtype)?);
                Ok(())
            }),
        ),
    ];
    for (schema, f) in ops {
        if let Err(e) = r.register(schema, f) {
            crate::tensor_ops::note_registration_error(e.message);
        }
    }
}

/// The upgrader replacing the operator `full_name` (`aten::div.Tensor`, ...) in an archive of
/// file-format `version`, if that operator meant something else then.
pub fn upgrader_for(full_name: &str, version: u64) -> Option<&'static str> {
    match full_name {
        "aten::div.Tensor" if version <= 3 => Some("upgraders::div_Tensor_0_3"),
        "aten::div.Scalar" if version <= 3 => Some("upgraders::div_Scalar_0_3"),
        "aten::div_.Tensor" if version <= 3 => Some("upgraders::div__Tensor_0_3"),
        "aten::div_.Scalar" if version <= 3 => Some("upgraders::div__Scalar_0_3"),
        "aten::div.out" if version <= 3 => Some("upgraders::div_out_0_3"),
        "aten::full" if version <= 4 => Some("upgraders::full_0_4"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_core::IValue;

    fn run(name: &str, args: Vec<IValue>) -> Result<IValue, Error> {
        let reg = crate::registry();
        let o = reg
            .find(name)
            .unwrap_or_else(|| panic!("{name} is registered"));
        let crate::OperatorKind::Op(f) = &o.kind else {
            panic!("plain op")
        };
        let mut s = args;
        f(&mut s)?;
        Ok(s.pop().unwrap())
    }

    fn ints(v: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap()
    }

    #[test]
    fn old_integer_division_truncates() {
        // torch 1.4 (file format 3) gave torch.div(tensor([-7, 7]), tensor([2, 2])) == [-3, 3].
        let out = run(
            "upgraders::div_Tensor_0_3",
            vec![ints(&[-7, 7]).into(), ints(&[2, 2]).into()],
        )
        .unwrap();
        let IValue::Tensor(t) = out else { panic!() };
        assert_eq!(t.to_vec::<i64>(), vec![-3, 3]);
        assert_eq!(t.dtype(), ts_tensor::DType::Int64);
        // A float operand keeps true division.
        let out = run(
            "upgraders::div_Scalar_0_3",
            vec![ints(&[-7, 7]).into(), IValue::Double(2.0)],
        )
        .unwrap();
        let IValue::Tensor(t) = out else { panic!() };
        assert_eq!(t.to_vec::<f64>(), vec![-3.5, 3.5]);
        // In place, through the alias.
        let a = ints(&[9, -9]);
        run(
            "upgraders::div__Scalar_0_3",
            vec![a.clone().into(), IValue::Int(4)],
        )
        .unwrap();
        assert_eq!(a.to_vec::<i64>(), vec![2, -2]);
    }

    #[test]
    fn old_full_infers_float() {
        let out = run(
            "upgraders::full_0_4",
            vec![
                IValue::int_list(vec![2]),
                IValue::Int(3),
                IValue::None,
                IValue::None,
                IValue::None,
                IValue::None,
            ],
        )
        .unwrap();
        let IValue::Tensor(t) = out else { panic!() };
        assert_eq!(t.dtype(), ts_tensor::DType::Float32);
        assert_eq!(t.to_vec::<f64>(), vec![3.0, 3.0]);
    }

    #[test]
    fn mapping_follows_versions() {
        assert_eq!(
            upgrader_for("aten::div.Tensor", 3),
            Some("upgraders::div_Tensor_0_3")
        );
        assert_eq!(upgrader_for("aten::div.Tensor", 4), None);
        assert_eq!(upgrader_for("aten::full", 4), Some("upgraders::full_0_4"));
        assert_eq!(upgrader_for("aten::full", 5), None);
        assert_eq!(upgrader_for("aten::add.Tensor", 1), None);
    }
}
