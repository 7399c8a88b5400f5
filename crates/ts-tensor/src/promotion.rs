//! Type promotion exactly as `torch.result_type`: categories bool < integer < floating; within a
//! category, dimensioned tensors beat zero-dim tensors, which beat Python scalars.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tensor::Tensor;

static DEFAULT_DTYPE: AtomicU8 = AtomicU8::new(DType::Float32 as u8);

/// The default floating dtype (`torch.get_default_dtype()`), float32 unless changed.
pub fn default_dtype() -> DType {
    DType::from_scalar_type_index(DEFAULT_DTYPE.load(Ordering::Relaxed) as i64)
        .unwrap_or(DType::Float32)
}

/// Sets the default floating dtype; only floating dtypes are accepted.
pub fn set_default_dtype(d: DType) -> Result<()> {
    if !d.is_floating_point() {
        return Err(Error::new(
            crate::error::ErrorKind::TypeError,
            format!("only floating-point types are supported as the default type, got {d}"),
        ));
    }
    DEFAULT_DTYPE.store(d as u8, Ordering::Relaxed);
    Ok(())
}

/// `torch.promote_types`.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (Bool, x) | (x, Bool) => x,
        (Float64, _) | (_, Float64) => Float64,
        (Float32, _) | (_, Float32) => Float32,
        (Float16, BFloat16) | (BFloat16, Float16) => Float32,
        (Float16, _) | (_, Float16) => Float16,
        (BFloat16, _) | (_, BFloat16) => BFloat16,
        (Int64, _) | (_, Int64) => Int64,
        (Int32, _) | (_, Int32) => Int32,
        (Int16, _) | (_, Int16) => Int16,
        // uint8 with int8 needs int16 to hold both ranges.
        (UInt8, Int8) | (Int8, UInt8) => Int16,
        (x, _) => x,
    }
}

fn category(d: DType) -> u8 {
    if d == DType::Bool {
        0
    } else if d.is_floating_point() {
        2
    } else {
        1
    }
}

/// An operand of an elementwise operation, for promotion and broadcasting.
#[derive(Clone, Copy)]
pub enum Operand<'a> {
    Tensor(&'a Tensor),
    Scalar(Scalar),
}

impl Operand<'_> {
    /// The dtype the operand contributes on its own.
    pub fn dtype(&self) -> DType {
        match self {
            Operand::Tensor(t) => t.dtype(),
            Operand::Scalar(Scalar::Bool(_)) => DType::Bool,
            Operand::Scalar(Scalar::Int(_)) => DType::Int64,
            Operand::Scalar(Scalar::Float(_)) => DType::Float64,
        }
    }
}

/// `torch.result_type` over operands.
pub fn result_type(ops: &[Operand<'_>]) -> DType {
    let (mut dim, mut zero, mut wrapped): (Option<DType>, Option<DType>, Option<DType>) =
        (None, None, None);
    fn upd(slot: &mut Option<DType>, d: DType) {
        *slot = Some(match *slot {
            None => d,
            Some(x) => promote_types(x, d),
        });
    }
    for op in ops {
        match op {
            Operand::Tensor(t) => {
                if t.dim() > 0 {
                    upd(&mut dim, t.dtype());
                } else {
                    upd(&mut zero, t.dtype());
                }
            }
            Operand::Scalar(s) => {
                let d = match s {
                    Scalar::Bool(_) => DType::Bool,
                    Scalar::Int(_) => DType::Int64,
                    Scalar::Float(_) => default_dtype(),
                };
                upd(&mut wrapped, d);
            }
        }
    }
    combine(dim, combine(zero, wrapped)).unwrap_or_else(default_dtype)
}

fn combine(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (None, l) => l,
        (h, None) => h,
        (Some(h), Some(l)) => {
            if h.is_floating_point() {
                Some(h)
            } else if h == DType::Bool || category(l) > category(h) {
                Some(promote_types(h, l))
            } else {
                Some(h)
            }
        }
    }
}

/// Whether a value of dtype `from` may be written into `to` by an in-place or `out=` op.
pub fn can_cast(from: DType, to: DType) -> bool {
    category(from) <= category(to)
}

/// The error for a result that cannot be written to the output's dtype.
pub fn cast_error(from: DType, to: DType) -> Error {
    Error::runtime(format!(
        "result type {} can't be cast to the desired output type {}",
        from.scalar_type_name(),
        to.scalar_type_name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_type_rules() {
        // Expected values from torch.result_type in PyTorch 2.15.
        let i = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        let f0 = Tensor::from_vec(vec![1.0f64], &[]).unwrap();
        let u8t = Tensor::from_vec(vec![1u8], &[1]).unwrap();
        let i32t = Tensor::from_vec(vec![1i32], &[1]).unwrap();
        let f16 = Tensor::from_vec(vec![half::f16::ONE], &[1]).unwrap();
        let b = Tensor::from_vec(vec![true], &[1]).unwrap();
        // int tensor + python float -> default float
        assert_eq!(
            result_type(&[Operand::Tensor(&i), Operand::Scalar(Scalar::Float(1.0))]),
            DType::Float32
        );
        // int tensor + zero-dim double tensor -> double (higher category)
        assert_eq!(
            result_type(&[Operand::Tensor(&i), Operand::Tensor(&f0)]),
            DType::Float64
        );
        // uint8 + python int stays uint8
        assert_eq!(
            result_type(&[Operand::Tensor(&u8t), Operand::Scalar(Scalar::Int(1000))]),
            DType::UInt8
        );
        // int32 + int64 zero-dim stays int32
        let l0 = Tensor::from_vec(vec![1i64], &[]).unwrap();
        assert_eq!(
            result_type(&[Operand::Tensor(&i32t), Operand::Tensor(&l0)]),
            DType::Int32
        );
        // half + python float stays half
        assert_eq!(
            result_type(&[Operand::Tensor(&f16), Operand::Scalar(Scalar::Float(1.0))]),
            DType::Float16
        );
        // bool + python int -> int64
        assert_eq!(
            result_type(&[Operand::Tensor(&b), Operand::Scalar(Scalar::Int(1))]),
            DType::Int64
        );
        assert_eq!(promote_types(DType::UInt8, DType::Int8), DType::Int16);
        assert_eq!(
            promote_types(DType::Float16, DType::BFloat16),
            DType::Float32
        );
        assert!(!can_cast(DType::Float32, DType::Int64));
        assert!(can_cast(DType::Int64, DType::Float32));
    }
}
