//! Type promotion (`torch.result_type`, `torch.promote_types`, `torch.can_cast`).
//!
//! Operands fall into categories bool < integer < floating < complex. The result takes the
//! highest category present; within it, tensors with dimensions beat zero-dim tensors, which beat Python
//! numbers ("wrapped numbers"). A Python float counts as the default dtype, a Python int as
//! int64.
//!
//! uint16, uint32 and uint64 are "barebones" dtypes in PyTorch: they promote only with
//! themselves and the floating dtypes; any other pair is an error ([`try_promote_types`]).

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
        DType::UInt16 => 2,
        DType::UInt32 => 3,
        DType::UInt64 => 4,
        DType::Complex64 => 8,
        DType::Complex128 => 9,
    }
}

/// The error PyTorch gives when promoting a barebones unsigned dtype with an integer, bool or
/// complex dtype.
fn barebones_error(a: DType, b: DType) -> Error {
    Error::runtime(format!(
        "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote {} and {}",
        a.scalar_type_name(),
        b.scalar_type_name()
    ))
}

/// `torch.promote_types(a, b)`, failing as PyTorch does for barebones unsigned dtypes paired with
/// anything but themselves and the floating dtypes.
pub fn try_promote_types(a: DType, b: DType) -> Result<DType> {
    if a != b
        && (a.is_barebones_unsigned() || b.is_barebones_unsigned())
        && !a.is_floating_point()
        && !b.is_floating_point()
    {
        return Err(barebones_error(a, b));
    }
    Ok(promote_types(a, b))
}

/// `torch.promote_types(a, b)`: the smallest dtype both convert to without losing category.
/// Pairs PyTorch rejects (a barebones unsigned dtype with an integer, bool or complex dtype; see
/// [`try_promote_types`]) give the wider of the two.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    if a.is_complex() || b.is_complex() {
        // complex64 with float64 (or complex128) is complex128; otherwise the complex operand.
        let wide = |d: DType| matches!(d, Float64 | Complex128);
        return if wide(a) || wide(b) {
            Complex128
        } else {
            Complex64
        };
    }
    if (a.is_barebones_unsigned() || b.is_barebones_unsigned())
        && !a.is_floating_point()
        && !b.is_floating_point()
    {
        return if rank(a) >= rank(b) { a } else { b };
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

/// `torch.can_cast(from, to)`: false when the cast would lower the category (complex → real,
/// float → int, number → bool).
pub fn can_cast(from: DType, to: DType) -> bool {
    if from.is_complex() && !to.is_complex() {
        return false;
    }
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

    /// Like [`ResultTypeState::result`], failing where PyTorch refuses to promote a barebones
    /// unsigned dtype (`uint16` tensor + `int64` tensor).
    pub fn try_result(&self) -> Result<DType> {
        let low = try_combine(self.zero_dim, self.wrapped)?;
        Ok(try_combine(self.dim, low)?.unwrap_or(DType::Int64))
    }
}

/// [`combine`] with [`try_promote_types`] where it promotes.
fn try_combine(higher: Option<DType>, lower: Option<DType>) -> Result<Option<DType>> {
    match (higher, lower) {
        (Some(h), Some(l)) => match combine_rule(h, l) {
            Combined::Promote => try_promote_types(h, l).map(Some),
            Combined::Is(d) => Ok(Some(d)),
        },
        _ => Ok(combine(higher, lower)),
    }
}

/// How two tiers combine.
enum Combined {
    Is(DType),
    Promote,
}

/// ATen's `combine_categories` for a higher tier `h` and a lower tier `l`: a complex higher tier
/// wins; a complex lower tier makes a floating higher tier complex (keeping its precision:
/// float16 tensor + complex128 0-dim tensor is complex32 in PyTorch, complex64 here) and
/// otherwise wins; a floating higher tier wins; bool, or a floating lower tier, promote; else
/// the higher tier wins.
fn combine_rule(h: DType, l: DType) -> Combined {
    if h.is_complex() {
        Combined::Is(h)
    } else if l.is_complex() {
        if h.is_floating_point() {
            Combined::Is(h.to_complex().unwrap_or(l))
        } else {
            Combined::Is(l)
        }
    } else if h.is_floating_point() {
        Combined::Is(h)
    } else if h == DType::Bool || l.is_floating_point() {
        Combined::Promote
    } else {
        Combined::Is(h)
    }
}

/// ATen's `combine_categories` (see [`combine_rule`]).
fn combine(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (None, l) => l,
        (h, None) => h,
        (Some(h), Some(l)) => Some(match combine_rule(h, l) {
            Combined::Is(d) => d,
            Combined::Promote => promote_types(h, l),
        }),
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

/// `torch.result_type`, failing as PyTorch does for barebones unsigned dtypes that would need
/// promotion with an integer, bool or complex dtype.
pub fn try_result_type(ops: &[Operand<'_>]) -> Result<DType> {
    let mut st = ResultTypeState::default();
    for &op in ops {
        st.add(op);
    }
    st.try_result()
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
