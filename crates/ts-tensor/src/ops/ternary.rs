//! Operations with several tensor or number operands: `clamp` (scalar or tensor bounds),
//! `where`, `lerp`, `addcmul`, `addcdiv`.

use crate::cpu::dispatch::not_implemented;
use crate::cpu::iter::{kernel_dtype, kernels, ElementwiseIter};
use crate::cpu::num::{Elem, FloatMath, OpNum};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::Dest;
use crate::promote::{result_type, Operand};
use crate::scalar::Scalar;
use crate::tensor::Tensor;

fn map3<A: Elem, B: Elem, C: Elem, O: Elem>(
    it: &ElementwiseIter<4>,
    f: impl Fn(A, B, C) -> O + Sync,
) {
    it.plan.run(|p, s, n| {
        // SAFETY: the iterator's operands hold O (output), A, B and C at the plan's strides.
        unsafe { kernels::ternary::<A, B, C, O>(p, s, n, &f) }
    });
}

fn materialize(o: Operand<'_>, dtype: DType) -> Result<Tensor> {
    match o {
        Operand::Tensor(t) => t.cast_if_needed(dtype),
        Operand::Scalar(s) => Tensor::scalar_tensor(s, dtype),
    }
}

/// `max(x, lo)` then `min(., hi)`, propagating NaN from the input and from the bounds.
#[inline(always)]
fn clamp_one<O: OpNum>(x: O, lo: Option<O>, hi: Option<O>) -> O {
    if x.is_nan() {
        return x;
    }
    let mut r = x;
    if let Some(l) = lo {
        if l.is_nan() {
            return l;
        }
        if r < l {
            r = l;
        }
    }
    if let Some(h) = hi {
        if h.is_nan() {
            return h;
        }
        if r > h {
            r = h;
        }
    }
    r
}

fn clamp_impl(
    x: &Tensor,
    min: Option<Operand<'_>>,
    max: Option<Operand<'_>>,
    dest: Dest<'_>,
) -> Result<Tensor> {
    if min.is_none() && max.is_none() {
        return Err(Error::runtime(
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    let mut ops = vec![Operand::Tensor(x)];
    ops.extend(min);
    ops.extend(max);
    let result = result_type(&ops);
    if let Dest::InPlace(t) = dest {
        if !crate::promote::can_cast(result, t.dtype()) {
            return Err(Error::runtime(format!(
                "result type {} can't be cast to the desired output type {}",
                result.scalar_type_name(),
                t.dtype().cpp_name()
            )));
        }
    }
    let out = dest.out(result)?;
    let result = kernel_dtype(result);
    let xt = x.cast_if_needed(result)?;
    // Missing bounds are passed as the input itself and ignored by the kernel.
    let lo = match min {
        Some(o) => materialize(o, result)?,
        None => xt.clone(),
    };
    let hi = match max {
        Some(o) => materialize(o, result)?,
        None => xt.clone(),
    };
    let (has_lo, has_hi) = (min.is_some(), max.is_some());
    let it = ElementwiseIter::<4>::new(out, result, &[&xt, &lo, &hi])?;
    dispatch_compute!(result, T => map3::<T, T, T, T>(&it, move |a, l, h| {
        T::from_op(clamp_one(a.op(), has_lo.then(|| l.op()), has_hi.then(|| h.op())))
    }));
    it.finish()
}

impl Tensor {
    /// `clamp(min, max)` with Python-number bounds (either may be `None`, not both). The result
    /// dtype follows type promotion (`clamp(int_tensor, 0.5)` is float). NaN propagates.
    pub fn clamp(&self, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
        clamp_impl(
            self,
            min.map(Operand::Scalar),
            max.map(Operand::Scalar),
            Dest::New,
        )
    }

    /// In-place `clamp_`.
    pub fn clamp_(&self, min: Option<Scalar>, max: Option<Scalar>) -> Result<()> {
        clamp_impl(
            self,
            min.map(Operand::Scalar),
            max.map(Operand::Scalar),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }

    /// `clamp(min, max, out=out)`.
    pub fn clamp_out(
        &self,
        min: Option<Scalar>,
        max: Option<Scalar>,
        out: &Tensor,
    ) -> Result<Tensor> {
        clamp_impl(
            self,
            min.map(Operand::Scalar),
            max.map(Operand::Scalar),
            Dest::Into(out),
        )
    }

    /// `clamp(Tensor? min, Tensor? max)`: elementwise bounds, broadcast with `self`.
    pub fn clamp_tensor(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        clamp_impl(
            self,
            min.map(Operand::Tensor),
            max.map(Operand::Tensor),
            Dest::New,
        )
    }

    /// In-place `clamp_` with tensor bounds.
    pub fn clamp_tensor_(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<()> {
        clamp_impl(
            self,
            min.map(Operand::Tensor),
            max.map(Operand::Tensor),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }

    /// `clamp_min(min)`.
    pub fn clamp_min(&self, min: Scalar) -> Result<Tensor> {
        self.clamp(Some(min), None)
    }

    /// `clamp_max(max)`.
    pub fn clamp_max(&self, max: Scalar) -> Result<Tensor> {
        self.clamp(None, Some(max))
    }

    /// `lerp(end, weight)`: `self + weight * (end - self)` (floating dtypes; all must match).
    pub fn lerp(&self, end: &Tensor, weight: Scalar) -> Result<Tensor> {
        let w = Tensor::scalar_tensor(weight, self.dtype())?;
        self.lerp_impl(end, &w, "lerp_kernel_scalar", Dest::New)
    }

    /// `lerp(end, Tensor weight)`.
    pub fn lerp_tensor(&self, end: &Tensor, weight: &Tensor) -> Result<Tensor> {
        if weight.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "expected dtype {} for `weight` but got dtype {}",
                self.dtype()
                    .name()
                    .replace("float32", "float")
                    .replace("float64", "double"),
                weight
                    .dtype()
                    .name()
                    .replace("float32", "float")
                    .replace("float64", "double")
            )));
        }
        self.lerp_impl(end, weight, "lerp_kernel_tensor", Dest::New)
    }

    /// In-place `lerp_(end, weight)`.
    pub fn lerp_(&self, end: &Tensor, weight: Scalar) -> Result<()> {
        let w = Tensor::scalar_tensor(weight, self.dtype())?;
        self.lerp_impl(end, &w, "lerp_kernel_scalar", Dest::InPlace(self))
            .map(|_| ())
    }

    fn lerp_impl(
        &self,
        end: &Tensor,
        weight: &Tensor,
        name: &str,
        dest: Dest<'_>,
    ) -> Result<Tensor> {
        let dt = self.dtype();
        if end.dtype() != dt {
            let n = |d: DType| {
                d.name()
                    .replace("float32", "float")
                    .replace("float64", "double")
            };
            return Err(Error::runtime(format!(
                "expected dtype {} for `end` but got dtype {}",
                n(dt),
                n(end.dtype())
            )));
        }
        if !dt.is_floating_point() {
            return Err(not_implemented(name, dt));
        }
        let out = dest.out(dt)?;
        let kd = kernel_dtype(dt);
        let (s, e, w) = (
            self.cast_if_needed(kd)?,
            end.cast_if_needed(kd)?,
            weight.cast_if_needed(kd)?,
        );
        let it = ElementwiseIter::<4>::new(out, kd, &[&s, &e, &w])?;
        dispatch_compute_float!(kd, name, T => map3::<T, T, T, T>(&it, |s, e, w| T::from_op(lerp_one(s.op(), e.op(), w.op()))));
        it.finish()
    }

    /// `addcmul(tensor1, tensor2, value)`: `self + value * tensor1 * tensor2`.
    pub fn addcmul(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        self.addc(tensor1, tensor2, value, false, Dest::New)
    }

    /// In-place `addcmul_`.
    pub fn addcmul_(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<()> {
        self.addc(tensor1, tensor2, value, false, Dest::InPlace(self))
            .map(|_| ())
    }

    /// `addcdiv(tensor1, tensor2, value)`: `self + value * tensor1 / tensor2` (no integers).
    pub fn addcdiv(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        self.addc(tensor1, tensor2, value, true, Dest::New)
    }

    /// In-place `addcdiv_`.
    pub fn addcdiv_(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<()> {
        self.addc(tensor1, tensor2, value, true, Dest::InPlace(self))
            .map(|_| ())
    }

    fn addc(
        &self,
        t1: &Tensor,
        t2: &Tensor,
        value: Scalar,
        div: bool,
        dest: Dest<'_>,
    ) -> Result<Tensor> {
        let result = result_type(&[
            Operand::Tensor(self),
            Operand::Tensor(t1),
            Operand::Tensor(t2),
        ]);
        if div && !t1.dtype().is_floating_point() && !t2.dtype().is_floating_point() {
            return Err(Error::runtime(
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.",
            ));
        }
        let out = dest.out(result)?;
        let result = kernel_dtype(result);
        let (s, a, b) = (
            self.cast_if_needed(result)?,
            t1.cast_if_needed(result)?,
            t2.cast_if_needed(result)?,
        );
        let it = ElementwiseIter::<4>::new(out, result, &[&s, &a, &b])?;
        if div {
            dispatch_compute_float!(result, "addcdiv_cpu_out", T => {
                let v = <<T as Elem>::Op as OpNum>::from_scalar(value);
                map3::<T, T, T, T>(&it, move |x, y, z| T::from_op(x.op() + v * (y.op() / z.op())))
            });
        } else {
            dispatch_compute!(result, T => {
                let v = <<T as Elem>::Op as OpNum>::from_scalar(value);
                map3::<T, T, T, T>(&it, move |x, y, z| T::from_op(x.op().add(v.mul(y.op()).mul(z.op()))))
            });
        }
        it.finish()
    }
}

#[inline(always)]
fn lerp_one<F: FloatMath>(s: F, e: F, w: F) -> F {
    let half = F::from_f64(0.5);
    if w.wabs() < half {
        s + w * (e - s)
    } else {
        e - (e - s) * (F::one() - w)
    }
}

/// `torch.where(condition, input, other)`: picks from `input` where `condition` is true, else
/// from `other`; the three broadcast together and the values promote. `condition` must be bool
/// (uint8 is accepted, as PyTorch still does with a deprecation warning).
pub fn where_(condition: &Tensor, input: Operand<'_>, other: Operand<'_>) -> Result<Tensor> {
    let cdt = condition.dtype();
    if cdt != DType::Bool && cdt != DType::UInt8 {
        return Err(Error::runtime(format!(
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            cdt.scalar_type_name()
        )));
    }
    let cond = condition.cast_if_needed(DType::Bool)?;
    let result = result_type(&[input, other]);
    let kd = kernel_dtype(result);
    let a = materialize(input, kd)?;
    let b = materialize(other, kd)?;
    let it = ElementwiseIter::<4>::new(crate::cpu::iter::Out::New(result), kd, &[&cond, &a, &b])?;
    dispatch_compute_c!(kd, T => map3::<bool, T, T, T>(&it, |c, x, y| if c { x } else { y }));
    it.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Tensor {
        Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap()
    }

    #[test]
    fn clamp_promotes_and_propagates_nan() {
        let i = Tensor::from_vec(vec![-2i64, 0, 3], &[3]).unwrap();
        // torch: clamp(int, 0.5) -> [0.5, 0.5, 3.]; clamp(int, 0, 1) -> [0, 0, 1]
        let r = i.clamp(Some(Scalar::Float(0.5)), None).unwrap();
        assert_eq!(r.dtype(), DType::Float32);
        assert_eq!(r.to_vec::<f32>(), vec![0.5, 0.5, 3.]);
        assert_eq!(
            i.clamp(Some(Scalar::Int(0)), Some(Scalar::Int(1)))
                .unwrap()
                .to_vec::<i64>(),
            vec![0, 0, 1]
        );
        assert_eq!(
            i.clamp(None, None).unwrap_err().message,
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        );
        // torch: clamp_ of int with 0.5 -> "... desired output type long int"
        assert_eq!(
            i.clamp_(Some(Scalar::Float(0.5)), None)
                .unwrap_err()
                .message,
            "result type Float can't be cast to the desired output type long int"
        );
        let x = f32s(&[-2., f32::NAN, 3.]);
        let r = x
            .clamp(Some(Scalar::Int(-1)), Some(Scalar::Int(1)))
            .unwrap()
            .to_vec::<f32>();
        assert_eq!((r[0], r[2]), (-1., 1.));
        assert!(r[1].is_nan());
        // torch: clamp(x, 2, 1) -> [1., nan, 1.]
        let r = x
            .clamp(Some(Scalar::Int(2)), Some(Scalar::Int(1)))
            .unwrap()
            .to_vec::<f32>();
        assert_eq!((r[0], r[2]), (1., 1.));
        let lo = f32s(&[0., 0., 0.]);
        let hi = Tensor::scalar_tensor(Scalar::Int(1), DType::Int64).unwrap();
        let r = x
            .clamp_tensor(Some(&lo), Some(&hi))
            .unwrap()
            .to_vec::<f32>();
        assert_eq!((r[0], r[2]), (0., 1.));
    }

    #[test]
    fn where_promotes_and_broadcasts() {
        let c = Tensor::from_vec(vec![true, false], &[2, 1]).unwrap();
        let a = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        // torch: where([[T],[F]], tensor([1,2]), 0) -> [[1,2],[0,0]] int64
        let r = where_(&c, Operand::Tensor(&a), Operand::Scalar(Scalar::Int(0))).unwrap();
        assert_eq!(r.sizes().as_slice(), &[2, 2]);
        assert_eq!(r.to_vec::<i64>(), vec![1, 2, 0, 0]);
        let c1 = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        let r = where_(
            &c1,
            Operand::Tensor(&a),
            Operand::Scalar(Scalar::Float(2.5)),
        )
        .unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![1.0, 2.5]);
        let bad = f32s(&[1., 0.]);
        assert_eq!(
            where_(&bad, Operand::Tensor(&a), Operand::Tensor(&a))
                .unwrap_err()
                .message,
            "where expected condition to be a boolean tensor, but got a tensor with dtype Float"
        );
    }

    #[test]
    fn lerp_and_addc() {
        // torch: lerp([1,2],[3,6],0.75) -> [2.5, 5.]; with tensor weight [0.25, 0.9] -> [1.5, 5.6]
        let s = f32s(&[1., 2.]);
        let e = f32s(&[3., 6.]);
        assert_eq!(
            s.lerp(&e, Scalar::Float(0.75)).unwrap().to_vec::<f32>(),
            vec![2.5, 5.]
        );
        let r = s
            .lerp_tensor(&e, &f32s(&[0.25, 0.9]))
            .unwrap()
            .to_vec::<f32>();
        assert!((r[0] - 1.5).abs() < 1e-6 && (r[1] - 5.6).abs() < 1e-6);
        let i = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        assert_eq!(
            i.lerp(&i, Scalar::Float(0.5)).unwrap_err().message,
            "\"lerp_kernel_scalar\" not implemented for 'Long'"
        );
        let d = e.to_dtype(DType::Float64, false).unwrap();
        assert_eq!(
            s.lerp(&d, Scalar::Float(0.5)).unwrap_err().message,
            "expected dtype float for `end` but got dtype double"
        );
        // torch: addcmul(int [-2,0,3], same, same, value=2) -> [6, 0, 21]
        let j = Tensor::from_vec(vec![-2i64, 0, 3], &[3]).unwrap();
        assert_eq!(
            j.addcmul(&j, &j, Scalar::Int(2)).unwrap().to_vec::<i64>(),
            vec![6, 0, 21]
        );
        assert!(j.addcdiv(&j, &j, Scalar::Int(2)).is_err());
        assert_eq!(
            f32s(&[1.])
                .addcdiv(&f32s(&[3.]), &f32s(&[2.]), Scalar::Int(2))
                .unwrap()
                .to_vec::<f32>(),
            vec![4.]
        );
    }
}
