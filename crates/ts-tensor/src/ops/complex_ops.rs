//! Complex-number operations: `view_as_real`/`view_as_complex`, `real`/`imag`, `conj`,
//! `angle`, `polar`, `complex`, and the conjugate/negative-bit queries.
//!
//! PyTorch marks `conj()` of a complex tensor lazily with a "conjugate bit"; this library has no
//! such bits, so `conj` materializes the conjugate (as `conj_physical` does), `is_conj` and
//! `is_neg` are always false and `resolve_conj`/`resolve_neg` return the tensor itself. Values
//! are the same; only aliasing differs (writing into `x.conj()` does not change `x`).

use crate::complex::{Complex32, Complex64};
use crate::config::default_dtype;
use crate::cpu::iter::{ElementwiseIter, Out};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::binary::map2;
use crate::ops::unary::{complex_to_real, map1};
use crate::tensor::{Dims, Tensor};

impl Tensor {
    /// True for complex dtypes (`is_complex()`).
    pub fn is_complex(&self) -> bool {
        self.dtype().is_complex()
    }

    /// `view_as_real`: a complex tensor seen as real with a trailing dimension of size 2
    /// (real, imaginary), sharing its storage.
    pub fn view_as_real(&self) -> Result<Tensor> {
        let m = self.meta_snapshot();
        if !m.dtype.is_complex() {
            return Err(Error::new(
                ErrorKind::TypeError,
                "view_as_real is only supported for complex tensors",
            ));
        }
        let mut sizes: Dims = m.sizes.clone();
        sizes.push(2);
        let mut strides: Dims = m.strides.iter().map(|&s| s * 2).collect();
        strides.push(1);
        Ok(Tensor::from_meta(crate::tensor::TensorMeta {
            storage: m.storage.clone(),
            sizes,
            strides,
            offset: m.offset * 2,
            dtype: m.dtype.to_real(),
            requires_grad: m.requires_grad,
        }))
    }

    /// `view_as_complex`: a float/double tensor whose last dimension has size 2 and stride 1,
    /// seen as complex (sharing its storage).
    pub fn view_as_complex(&self) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let cdt = match m.dtype {
            DType::Float32 => DType::Complex64,
            DType::Float64 => DType::Complex128,
            other => {
                return Err(Error::new(
                    ErrorKind::NotImplementedError,
                    format!(
                        "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
                        other.scalar_type_name()
                    ),
                ))
            }
        };
        let nd = m.dim();
        if nd == 0 {
            return Err(Error::runtime(
                "Input tensor must have one or more dimensions",
            ));
        }
        if m.sizes[nd - 1] != 2 {
            return Err(Error::runtime(
                "Tensor must have a last dimension of size 2",
            ));
        }
        if m.strides[nd - 1] != 1 {
            return Err(Error::runtime(
                "Tensor must have a last dimension with stride 1",
            ));
        }
        if m.strides[..nd - 1].iter().any(|s| s % 2 != 0) {
            return Err(Error::runtime(
                "Tensor must have a stride divisible by 2 for all but last dimension",
            ));
        }
        if !m.offset.is_multiple_of(2) {
            return Err(Error::runtime(
                "Tensor must have a storage_offset divisible by 2",
            ));
        }
        Ok(Tensor::from_meta(crate::tensor::TensorMeta {
            storage: m.storage.clone(),
            sizes: m.sizes[..nd - 1].into(),
            strides: m.strides[..nd - 1].iter().map(|&s| s / 2).collect(),
            offset: m.offset / 2,
            dtype: cdt,
            requires_grad: m.requires_grad,
        }))
    }

    /// `real`: the real parts of a complex tensor (a view); a real tensor is returned itself.
    pub fn real(&self) -> Result<Tensor> {
        if !self.is_complex() {
            return Ok(self.clone());
        }
        self.view_as_real()?.select(-1, 0)
    }

    /// `imag`: the imaginary parts of a complex tensor (a view).
    pub fn imag(&self) -> Result<Tensor> {
        if !self.is_complex() {
            return Err(Error::new(
                ErrorKind::TypeError,
                "imag is not implemented for tensors with non-complex dtypes.",
            ));
        }
        self.view_as_real()?.select(-1, 1)
    }

    /// `conj`: the complex conjugate (materialized; see the module notes); real tensors are
    /// returned themselves.
    pub fn conj(&self) -> Result<Tensor> {
        self.conj_physical()
    }

    /// `conj_physical`: the complex conjugate as a new tensor; real tensors are returned
    /// themselves, as ATen does.
    pub fn conj_physical(&self) -> Result<Tensor> {
        let dt = self.dtype();
        if !dt.is_complex() {
            return Ok(self.clone());
        }
        let it = ElementwiseIter::<2>::new(Out::New(dt), dt, &[self])?;
        dispatch_complex!(dt, "conj_cpu", T => map1::<T, T>(&it, |z| z.conj()));
        it.finish()
    }

    /// In-place `conj_physical_`.
    pub fn conj_physical_(&self) -> Result<()> {
        if self.is_complex() {
            let c = self.conj_physical()?;
            self.copy_(&c)?;
        }
        Ok(())
    }

    /// `resolve_conj`: materializes a conjugate bit; without such bits, the tensor itself.
    pub fn resolve_conj(&self) -> Tensor {
        self.clone()
    }

    /// `resolve_neg`: materializes a negative bit; without such bits, the tensor itself.
    pub fn resolve_neg(&self) -> Tensor {
        self.clone()
    }

    /// `is_conj()`: always false (no lazy conjugation here).
    pub fn is_conj(&self) -> bool {
        false
    }

    /// `is_neg()`: always false (no lazy negation here).
    pub fn is_neg(&self) -> bool {
        false
    }

    /// `angle`: the argument of complex elements (a real tensor); for real inputs π where
    /// negative, 0 elsewhere, NaN kept (integers promote to the default dtype).
    pub fn angle(&self) -> Result<Tensor> {
        let dt = self.dtype();
        if dt.is_complex() {
            return complex_to_real(self, "angle_cpu", |z| z.arg());
        }
        let x = if dt.is_floating_point() {
            self.clone()
        } else {
            self.to_dtype(default_dtype(), false)?
        };
        let pi = std::f64::consts::PI;
        let f = move |v: f64| {
            if v.is_nan() {
                v
            } else if v < 0.0 {
                pi
            } else {
                0.0
            }
        };
        let xdt = x.dtype();
        let kd = crate::cpu::iter::kernel_dtype(xdt);
        let input = x.cast_if_needed(kd)?;
        let it = ElementwiseIter::<2>::new(Out::New(xdt), kd, &[&input])?;
        match kd {
            DType::Float32 => map1::<f32, f32>(&it, move |v| f(v as f64) as f32),
            _ => map1::<f64, f64>(&it, f),
        }
        it.finish()
    }
}

/// Checks the operands of `complex`/`polar`: the same floating dtype; returns the complex one.
fn complex_operands(a: &Tensor, b: &Tensor, both_msg: bool) -> Result<DType> {
    let (da, db) = (a.dtype(), b.dtype());
    if both_msg && !(da.is_floating_point() && db.is_floating_point()) {
        return Err(Error::new(
            ErrorKind::NotImplementedError,
            format!(
                "Expected both inputs to be Half, Float or Double tensors but got {} and {}",
                da.scalar_type_name(),
                db.scalar_type_name()
            ),
        ));
    }
    if da != db {
        return Err(Error::runtime(format!(
            "Expected object of scalar type {} but got scalar type {} for second argument",
            da.scalar_type_name(),
            db.scalar_type_name()
        )));
    }
    match da {
        DType::Float32 => Ok(DType::Complex64),
        DType::Float64 => Ok(DType::Complex128),
        other => Err(crate::cpu::dispatch::not_implemented("complex_cpu", other)),
    }
}

/// `torch.complex(real, imag)`: a complex tensor from broadcast real and imaginary parts.
pub fn complex(real: &Tensor, imag: &Tensor) -> Result<Tensor> {
    let cdt = complex_operands(real, imag, true)?;
    let it = ElementwiseIter::<3>::new(Out::New(cdt), cdt, &[real, imag])?;
    if cdt == DType::Complex64 {
        map2::<f32, f32, Complex32>(&it, Complex32::new);
    } else {
        map2::<f64, f64, Complex64>(&it, Complex64::new);
    }
    it.finish()
}

/// `torch.polar(abs, angle)`: `abs · e^{i·angle}` elementwise (broadcast).
pub fn polar(abs: &Tensor, angle: &Tensor) -> Result<Tensor> {
    let cdt = complex_operands(abs, angle, false)?;
    let it = ElementwiseIter::<3>::new(Out::New(cdt), cdt, &[abs, angle])?;
    if cdt == DType::Complex64 {
        map2::<f32, f32, Complex32>(&it, Complex32::from_polar);
    } else {
        map2::<f64, f64, Complex64>(&it, Complex64::from_polar);
    }
    it.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c32(v: &[(f32, f32)]) -> Tensor {
        let data: Vec<Complex32> = v.iter().map(|&(r, i)| Complex32::new(r, i)).collect();
        Tensor::from_vec(data, &[v.len() as i64]).unwrap()
    }

    fn parts(t: &Tensor) -> Vec<(f64, f64)> {
        t.to_vec::<Complex64>()
            .iter()
            .map(|z| (z.re, z.im))
            .collect()
    }

    #[test]
    fn views_share_storage() {
        let z = c32(&[(1.0, 2.0), (3.0, -4.0)]);
        let r = z.view_as_real().unwrap();
        assert_eq!(r.sizes().as_slice(), &[2, 2]);
        assert_eq!(r.strides().as_slice(), &[2, 1]);
        assert_eq!(r.to_vec::<f32>(), vec![1.0, 2.0, 3.0, -4.0]);
        z.imag().unwrap().fill_(crate::Scalar::Float(9.0)).unwrap();
        assert_eq!(parts(&z), vec![(1.0, 9.0), (3.0, 9.0)]);
        assert_eq!(z.real().unwrap().to_vec::<f32>(), vec![1.0, 3.0]);
        assert_eq!(z.real().unwrap().strides().as_slice(), &[2]);
        let back = r.view_as_complex().unwrap();
        assert_eq!(back.dtype(), DType::Complex64);
        assert_eq!(parts(&back), parts(&z));
        // An offset view: the second complex number alone.
        let tail = Tensor::from_vec(vec![0f64, 1.0, 2.0, 3.0], &[2, 2])
            .unwrap()
            .slice(0, Some(1), None, 1)
            .unwrap()
            .view_as_complex()
            .unwrap();
        assert_eq!(tail.storage_offset(), 1);
        assert_eq!(parts(&tail), vec![(2.0, 3.0)]);
    }

    #[test]
    fn errors_match_torch() {
        let f = Tensor::zeros(&[3], DType::Float32).unwrap();
        assert_eq!(
            f.view_as_complex().unwrap_err().message,
            "Tensor must have a last dimension of size 2"
        );
        assert_eq!(
            f.view_as_real().unwrap_err().message,
            "view_as_real is only supported for complex tensors"
        );
        assert_eq!(
            f.imag().unwrap_err().message,
            "imag is not implemented for tensors with non-complex dtypes."
        );
        let odd = Tensor::zeros(&[5], DType::Float32)
            .unwrap()
            .slice(0, Some(1), None, 1)
            .unwrap()
            .view(&[2, 2])
            .unwrap();
        assert_eq!(
            odd.view_as_complex().unwrap_err().message,
            "Tensor must have a storage_offset divisible by 2"
        );
        assert_eq!(
            Tensor::zeros(&[], DType::Float32)
                .unwrap()
                .view_as_complex()
                .unwrap_err()
                .message,
            "Input tensor must have one or more dimensions"
        );
        let d = Tensor::zeros(&[2], DType::Float64).unwrap();
        assert_eq!(
            complex(&f.slice(0, Some(0), Some(2), 1).unwrap(), &d)
                .unwrap_err()
                .message,
            "Expected object of scalar type Float but got scalar type Double for second argument"
        );
        let i = Tensor::zeros(&[2], DType::Int64).unwrap();
        assert_eq!(
            complex(&i, &i).unwrap_err().message,
            "Expected both inputs to be Half, Float or Double tensors but got Long and Long"
        );
    }

    #[test]
    fn values_match_torch() {
        // torch: angle([1+2j, 3-4j]) = [1.1071, -0.9273]; angle([1., -2., 0., nan, -0.]) =
        // [0, pi, 0, nan, 0]; polar(2, pi/2) = 0+2j; conj(1+2j) = 1-2j.
        let z = c32(&[(1.0, 2.0), (3.0, -4.0)]);
        let a = z.angle().unwrap().to_vec::<f64>();
        assert!((a[0] - 1.1071487).abs() < 1e-6 && (a[1] + 0.9272952).abs() < 1e-6);
        let r = Tensor::from_vec(vec![1f32, -2.0, 0.0, f32::NAN, -0.0], &[5]).unwrap();
        let ra = r.angle().unwrap().to_vec::<f32>();
        assert_eq!(ra[..3], [0.0, std::f32::consts::PI, 0.0]);
        assert!(ra[3].is_nan() && ra[4] == 0.0);
        let ia = Tensor::from_vec(vec![-3i64], &[1])
            .unwrap()
            .angle()
            .unwrap();
        assert_eq!(ia.dtype(), DType::Float32);
        assert_eq!(parts(&z.conj().unwrap()), vec![(1.0, -2.0), (3.0, 4.0)]);
        assert_eq!(z.abs().unwrap().to_vec::<f32>(), vec![5f32.sqrt(), 5.0]);
        let p = polar(
            &Tensor::from_vec(vec![2f64], &[1]).unwrap(),
            &Tensor::from_vec(vec![std::f64::consts::FRAC_PI_2], &[]).unwrap(),
        )
        .unwrap();
        assert_eq!(p.dtype(), DType::Complex128);
        let v = parts(&p);
        assert!(v[0].0.abs() < 1e-15 && (v[0].1 - 2.0).abs() < 1e-15);
        let c = complex(
            &Tensor::from_vec(vec![1f32, 2.0], &[2, 1]).unwrap(),
            &Tensor::from_vec(vec![5f32, 6.0, 7.0], &[3]).unwrap(),
        )
        .unwrap();
        assert_eq!(c.sizes().as_slice(), &[2, 3]);
        assert_eq!(parts(&c)[5], (2.0, 7.0));
        assert_eq!(z.isreal().unwrap().to_vec::<bool>(), vec![false, false]);
    }
}
