//! Type promotion (`torch.result_type`, `torch.promote_types`, `torch.can_cast`).
//!
//! Operands fall into categories bool < integer < floating. The result takes the highest
//! category present; within it, tensors with dimensions beat zero-dim tensors, which beat Python
//! numbers ("wrapped numbers"). A Python float counts as the default dtype, a Python int as
//! int64.

use crate::config::default_dtype;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// An operand of an operation for promotion purposes: a tensor or a Python number.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a> {
    Tensor(&'a Tensor),
    Scalar(Scalar),
}

/// The dtype a Python number gets as a wrapped-number operand (float → default dtype).
pub fn scalar_dtype(s: Scalar) -> DType {
    match s {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::Int64,
        Scalar::Float(_) => default_dtype(),
    }
}

/// The dtype a Python number gets as a tensor (`torch.tensor(2.5)`): float → default dtype.
pub fn scalar_tensor_dtype(s: Scalar) -> DType {
    scalar_dtype(s)
}

fn rank(d: DType) -> u8 {
    // Position in the lattice used for same-category ordering.
    match d {
        DType::Bool => 0,
        DType::UInt8 => 1,
        DType::Int8 => 1,
        DType::Int16 => 2,
        DType::Int32 => 3,
        DType::Int64 => 4,
        DType::Float16 => 5,
        DType::BFloat16 => 5,
        DType::Float32 => 6,
        DType::Float64 => 7,
    }
}

/// `torch.promote_types(a, b)`: the smallest dtype both convert to without losing category.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (Bool, x) | (x, Bool) => x,
        (UInt8, Int8) | (Int8, UInt8) => Int16,
        (Float16, BFloat16) | (BFloat16, Float16) => Float32,
        _ => {
            if a.is_floating_point() != b.is_floating_point() {
                if a.is_floating_point() {
                    a
                } else {
                    b
                }
            } else if rank(a) >= rank(b) {
                a
            } else {
                b
            }
        }
    }
}

/// `torch.can_cast(from, to)`: false when the cast would lower the category (float → int,
/// number → bool).
pub fn can_cast(from: DType, to: DType) -> bool {
    if from.is_floating_point() && to.is_integral() {
        return false;
    }
    if from != DType::Bool && to == DType::Bool {
        return false;
    }
    true
}

/// Errors unless a result of dtype `result` may be written to an output of dtype `out`.
pub fn check_can_cast(result: DType, out: DType) -> Result<()> {
    if !can_cast(result, out) {
        return Err(Error::runtime(format!(
            "result type {} can't be cast to the desired output type {}",
            result.scalar_type_name(),
            out.scalar_type_name()
        )));
    }
    Ok(())
}

/// Accumulates operands into ATen's three-tier result-type state.
#[derive(Clone, Copy, Default, Debug)]
pub struct ResultTypeState {
    dim: Option<DType>,
    zero_dim: Option<DType>,
    wrapped: Option<DType>,
}

fn promote_opt(a: Option<DType>, b: DType) -> Option<DType> {
    Some(match a {
        None => b,
        Some(a) => promote_types(a, b),
    })
}

impl ResultTypeState {
    /// Adds a tensor operand (zero-dim tensors rank below dimensioned ones).
    pub fn add_tensor(&mut self, t: &Tensor) {
        let m = t.meta();
        self.add_tensor_parts(m.sizes.len(), m.dtype);
    }

    /// Adds a tensor operand given its rank and dtype.
    pub fn add_tensor_parts(&mut self, ndim: usize, dtype: DType) {
        if ndim == 0 {
            self.zero_dim = promote_opt(self.zero_dim, dtype);
        } else {
            self.dim = promote_opt(self.dim, dtype);
        }
    }

    /// Adds a Python number.
    pub fn add_scalar(&mut self, s: Scalar) {
        self.wrapped = promote_opt(self.wrapped, scalar_dtype(s));
    }

    /// Adds any operand.
    pub fn add(&mut self, op: Operand<'_>) {
        match op {
            Operand::Tensor(t) => self.add_tensor(t),
            Operand::Scalar(s) => self.add_scalar(s),
        }
    }

    /// The promoted dtype (int64 when nothing was added, which does not happen in practice).
    pub fn result(&self) -> DType {
        combine(self.dim, combine(self.zero_dim, self.wrapped)).unwrap_or(DType::Int64)
    }
}

fn category(d: DType) -> u8 {
    if d == DType::Bool {
        0
    } else if d.is_integral() {
        1
    } else {
        2
    }
}

/// ATen's `combine_categories`: the higher tier wins unless the lower one is of a higher
/// category, in which case the two are promoted.
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

/// `torch.result_type` over any number of operands.
pub fn result_type(ops: &[Operand<'_>]) -> DType {
    let mut st = ResultTypeState::default();
    for &op in ops {
        st.add(op);
    }
    st.result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    fn t(sizes: &[i64], dt: DType) -> Tensor {
        Tensor::zeros(sizes, dt).unwrap()
    }

    #[test]
    fn promote_table() {
        // torch.promote_types: uint8+int8 -> int16, half+bfloat16 -> float32, int64+half -> half.
        assert_eq!(promote_types(UInt8, Int8), Int16);
        assert_eq!(promote_types(Float16, BFloat16), Float32);
        assert_eq!(promote_types(Int64, Float16), Float16);
        assert_eq!(promote_types(Bool, UInt8), UInt8);
        assert_eq!(promote_types(UInt8, Int32), Int32);
        assert_eq!(promote_types(Float64, Float32), Float64);
    }

    #[test]
    fn result_type_tiers() {
        let i32v = t(&[2], Int32);
        let f64z = t(&[], Float64);
        let i64z = t(&[], Int64);
        let f16v = t(&[2], Float16);
        let bv = t(&[2], Bool);
        // torch.result_type(int32 vec, 0-dim int64) -> int32 (dimensioned wins in category).
        assert_eq!(
            result_type(&[Operand::Tensor(&i32v), Operand::Tensor(&i64z)]),
            Int32
        );
        // int32 vec + 0-dim float64 -> float64 (higher category from lower tier promotes)
        // -- torch gives float64? No: result_type(int32 vec, tensor(1.0, dtype=float64)) is float64.
        assert_eq!(
            result_type(&[Operand::Tensor(&i32v), Operand::Tensor(&f64z)]),
            Float64
        );
        // float16 vec + python float -> float16; int32 vec + python float -> float32 (default).
        assert_eq!(
            result_type(&[Operand::Tensor(&f16v), Operand::Scalar(Scalar::Float(1.5))]),
            Float16
        );
        assert_eq!(
            result_type(&[Operand::Tensor(&i32v), Operand::Scalar(Scalar::Float(1.5))]),
            Float32
        );
        // bool vec + python int -> int64; int32 vec + python int -> int32.
        assert_eq!(
            result_type(&[Operand::Tensor(&bv), Operand::Scalar(Scalar::Int(1))]),
            Int64
        );
        assert_eq!(
            result_type(&[Operand::Tensor(&i32v), Operand::Scalar(Scalar::Int(1))]),
            Int32
        );
        // float16 vec + 0-dim float64 -> float16.
        assert_eq!(
            result_type(&[Operand::Tensor(&f16v), Operand::Tensor(&f64z)]),
            Float16
        );
    }

    #[test]
    fn cast_rules() {
        assert!(!can_cast(Float32, Int64));
        assert!(!can_cast(Int64, Bool));
        assert!(can_cast(Int64, Float16));
        assert_eq!(
            check_can_cast(Float32, Int64).unwrap_err().message,
            "result type Float can't be cast to the desired output type Long"
        );
    }
}
