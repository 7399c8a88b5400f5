//! Matrix products: `mm`, `bmm`, `mv`, `dot`, `matmul`, `addmm`, `baddbmm`, `addmv`, `linear`,
//! `outer`. Floating dtypes run the strided GEMM of `cpu::gemm` (transposed and expanded operands
//! are read in place); integers use a wrapping row-parallel loop.
//!
//! The submodules are the rest of `torch.linalg`, in pure Rust: LAPACK-style factorizations
//! (`lu`, `qr`, `cholesky`, `eigh`, `ldl`), a Jacobi `svd`, and the tensor-level operators
//! built on them (`decompose`, `solve`, `functions`).

mod cholesky;
mod decompose;
mod eig;
mod eigh;
pub mod functions;
mod ldl;
mod lu;
pub(crate) mod mat;
mod qr;
mod real;
mod solve;
mod svd;
#[cfg(test)]
mod tensor_tests;

pub use functions::{linalg_check_errors, linalg_multi_dot, parse_str_ord, MatrixNormOrd};

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::Scalar;
use crate::shape::broadcast_shapes;
use crate::tensor::{Dims, Tensor};

/// Integer matrix products wrap on overflow, as ATen's integer kernels do.
fn wrapping_gemm(a: &[i64], b: &[i64], batch: usize, m: usize, k: usize, n: usize) -> Vec<i64> {
    let mut c = vec![0i64; batch * m * n];
    if n == 0 {
        return c;
    }
    let one = |(row, out): (usize, &mut [i64])| {
        let bi = row / m.max(1);
        let i = row % m.max(1);
        for kk in 0..k {
            let av = a[(bi * m + i) * k + kk];
            let brow = &b[(bi * k + kk) * n..(bi * k + kk + 1) * n];
            for (o, &bv) in out.iter_mut().zip(brow) {
                *o = o.wrapping_add(av.wrapping_mul(bv));
            }
        }
    };
    let work = batch.saturating_mul(m).saturating_mul(n).saturating_mul(k);
    if crate::threads::should_split(work >= crate::cpu::blocked_gemm::PARALLEL_WORK) {
        c.par_chunks_mut(n).enumerate().for_each(one);
    } else {
        c.chunks_mut(n).enumerate().for_each(one);
    }
    c
}

/// `beta * base + alpha * (a @ b)` for `a: [B, M, K]` and `b: [B, K, N]` of one dtype (any
/// strides, expanded batch dimensions included); `base` broadcasts to `[B, M, N]` and is ignored
/// when absent or when `beta` is zero. Floats use the strided GEMM, bf16 goes through f32 and
/// integers use a wrapping loop.
pub(crate) fn product(
    a: &Tensor,
    b: &Tensor,
    base: Option<&Tensor>,
    beta: Scalar,
    alpha: Scalar,
) -> Result<Tensor> {
    let dt = a.dtype();
    if dt == DType::Bool {
        return Err(crate::cpu::dispatch::not_implemented("addmm_impl_cpu_", dt));
    }
    let (sa, sb) = (a.sizes(), b.sizes());
    let (batch, m, k, n) = (sa[0], sa[1], sa[2], sb[2]);
    let shape = [batch, m, n];
    let base = match base {
        Some(t) if beta.to_f64() != 0.0 => Some(t.expand(&shape, false)?),
        _ => None,
    };
    match dt {
        DType::Float32 | DType::Float64 | DType::Float16 | DType::Complex64 | DType::Complex128 => {
            // Every element is written (by the copy of the base, or by the product, which
            // overwrites C unless it reads the base); only an empty inner dimension without
            // a base leaves the zeros standing. Skipping the fill saved a pass over C.
            let out = if k > 0 || base.is_some() {
                crate::cpu::contiguous::uninit_contiguous(&shape, dt)?
            } else {
                Tensor::zeros(&shape, dt)?
            };
            if let Some(t) = &base {
                out.copy_(t)?;
            }
            crate::cpu::gemm::gemm_batched(
                &out.meta(),
                &a.meta(),
                &b.meta(),
                base.is_some(),
                beta.to_f64(),
                alpha.to_f64(),
                crate::threads::num_threads(),
            )?;
            Ok(out)
        }
        DType::BFloat16 => {
            let f = |t: &Tensor| t.to_dtype(DType::Float32, false);
            let base32 = base.as_ref().map(f).transpose()?;
            product(&f(a)?, &f(b)?, base32.as_ref(), beta, alpha)?.to_dtype(dt, false)
        }
        _ => {
            let c = wrapping_gemm(
                &a.contiguous_vec::<i64>()?,
                &b.contiguous_vec::<i64>()?,
                batch as usize,
                m as usize,
                k as usize,
                n as usize,
            );
            let mut out = Tensor::from_vec(c, &shape)?.to_dtype(dt, false)?;
            if alpha != Scalar::Int(1) {
                out = out.mul_scalar(alpha)?;
            }
            if let Some(t) = base {
                let t = if beta == Scalar::Int(1) {
                    t
                } else {
                    t.mul_scalar(beta)?
                };
                out = t.add(&out, Scalar::Int(1))?;
            }
            Ok(out)
        }
    }
}

/// Plain `a @ b` of 3-d operands.
fn batched(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    product(a, b, None, Scalar::Int(0), Scalar::Int(1))
}

/// addmm-style dtype check of the accumulated tensor against both factors.
fn same_operand_dtypes(base: &Tensor, a: &Tensor, b: &Tensor) -> Result<()> {
    for other in [a, b] {
        if base.dtype() != other.dtype() {
            return Err(Error::runtime(format!(
                "self and mat2 must have the same dtype, but got {} and {}",
                base.dtype().scalar_type_name(),
                other.dtype().scalar_type_name()
            )));
        }
    }
    same_dtype(a, b)
}

fn same_dtype(a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "expected m1 and m2 to have the same dtype, but got: {} != {}",
            a.dtype().cpp_name(),
            b.dtype().cpp_name()
        )));
    }
    Ok(())
}

impl Tensor {
    /// `mm(mat2)`: matrix product of two 2-d tensors of the same dtype.
    pub fn mm(&self, mat2: &Tensor) -> Result<Tensor> {
        if self.dim() != 2 {
            return Err(Error::runtime(format!(
                "mm: self must be a matrix, got {}-D tensor",
                self.dim()
            )));
        }
        if mat2.dim() != 2 {
            return Err(Error::runtime(format!(
                "mm: mat2 must be a matrix, got {}-D tensor",
                mat2.dim()
            )));
        }
        let (a, b) = (self.sizes(), mat2.sizes());
        if a[1] != b[0] {
            return Err(Error::runtime(format!(
                "mm: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                a[0], a[1], b[0], b[1]
            )));
        }
        same_dtype(self, mat2)?;
        batched(&self.unsqueeze(0)?, &mat2.unsqueeze(0)?)?.reshape(&[a[0], b[1]])
    }

    /// `bmm(mat2)`: batched matrix product of two 3-d tensors.
    pub fn bmm(&self, mat2: &Tensor) -> Result<Tensor> {
        if self.dim() != 3 {
            return Err(Error::runtime("batch1 must be a 3D tensor"));
        }
        if mat2.dim() != 3 {
            return Err(Error::runtime("batch2 must be a 3D tensor"));
        }
        let (a, b) = (self.sizes(), mat2.sizes());
        if b[0] != a[0] || b[1] != a[2] {
            return Err(Error::runtime(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a[0], a[2], b[0], b[1]
            )));
        }
        same_dtype(self, mat2)?;
        batched(self, mat2)
    }

    /// `mv(vec)`: matrix-vector product.
    pub fn mv(&self, vec: &Tensor) -> Result<Tensor> {
        if self.dim() != 2 || vec.dim() != 1 {
            return Err(Error::runtime(format!(
                "vector + matrix @ vector expected, got 1, {}, {}",
                self.dim(),
                vec.dim()
            )));
        }
        let (a, v) = (self.sizes(), vec.sizes());
        if a[1] != v[0] {
            return Err(Error::runtime(format!(
                "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                a[0], a[0], a[1], v[0]
            )));
        }
        if self.dtype() != vec.dtype() {
            return Err(Error::runtime(format!(
                "addmv input tensors must have the same dtype, but got {}, {}, and {}",
                vec.dtype().scalar_type_name(),
                self.dtype().scalar_type_name(),
                vec.dtype().scalar_type_name()
            )));
        }
        batched(&self.unsqueeze(0)?, &vec.unsqueeze(1)?.unsqueeze(0)?)?.reshape(&[a[0]])
    }

    /// `dot(other)`: inner product of two 1-d tensors (a 0-dim result).
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() != 1 || other.dim() != 1 {
            return Err(Error::runtime(format!(
                "1D tensors expected, but got {}D and {}D tensors",
                self.dim(),
                other.dim()
            )));
        }
        if self.dtype() != other.dtype() {
            return Err(Error::runtime(format!(
                "dot : expected both vectors to have same dtype, but found {} and {}",
                self.dtype().scalar_type_name(),
                other.dtype().scalar_type_name()
            )));
        }
        let (n, m) = (self.numel(), other.numel());
        if n != m {
            return Err(Error::runtime(format!(
                "inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of elements, but got {n} and {m} elements respectively"
            )));
        }
        batched(
            &self.unsqueeze(0)?.unsqueeze(0)?,
            &other.unsqueeze(0)?.unsqueeze(2)?,
        )?
        .reshape(&[])
    }

    /// `matmul(other)` (`@`): dot, matrix-vector, matrix-matrix or broadcast batched products
    /// depending on the ranks, as `torch.matmul`.
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        let (d1, d2) = (self.dim(), other.dim());
        if d1 == 0 || d2 == 0 {
            return Err(Error::runtime(format!(
                "both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D"
            )));
        }
        match (d1, d2) {
            (1, 1) => self.dot(other),
            (2, 1) => self.mv(other),
            (1, 2) => self.unsqueeze(0)?.mm(other)?.squeeze_dim(0),
            (2, 2) => self.mm(other),
            (_, 1) | (_, 2) if d1 >= 3 => {
                // Fold the batch dimensions of `self` into its rows.
                let s = self.sizes();
                let k = s[d1 - 1];
                let rows: i64 = s[..d1 - 1].iter().product();
                let folded = self.reshape(&[rows, k])?;
                let mut out_shape: Vec<i64> = s[..d1 - 1].to_vec();
                if d2 == 1 {
                    folded.mv(other)?.reshape(&out_shape)
                } else {
                    out_shape.push(other.sizes()[1]);
                    folded.mm(other)?.reshape(&out_shape)
                }
            }
            _ => {
                let a = if d1 == 1 {
                    self.unsqueeze(0)?
                } else {
                    self.clone()
                };
                let b = if d2 == 1 {
                    other.unsqueeze(1)?
                } else {
                    other.clone()
                };
                let (sa, sb) = (a.sizes(), b.sizes());
                let (n, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
                let (k2, p) = (sb[sb.len() - 2], sb[sb.len() - 1]);
                let batch: Dims = broadcast_shapes(&sa[..sa.len() - 2], &sb[..sb.len() - 2])?;
                let bn: i64 = batch.iter().product();
                let mut ea: Vec<i64> = batch.to_vec();
                ea.extend([n, k]);
                let mut eb: Vec<i64> = batch.to_vec();
                eb.extend([k2, p]);
                let a3 = a.expand(&ea, false)?.reshape(&[bn, n, k])?;
                let b3 = b.expand(&eb, false)?.reshape(&[bn, k2, p])?;
                let r = a3.bmm(&b3)?;
                let mut out: Vec<i64> = batch.to_vec();
                if d1 > 1 {
                    out.push(n);
                }
                if d2 > 1 {
                    out.push(p);
                }
                r.reshape(&out)
            }
        }
    }

    /// `addmm(mat1, mat2, beta, alpha)`: `beta * self + alpha * (mat1 @ mat2)`; `self` broadcasts
    /// to the product's shape and is ignored when `beta` is zero.
    pub fn addmm(
        &self,
        mat1: &Tensor,
        mat2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
    ) -> Result<Tensor> {
        for (t, name) in [(mat1, "self"), (mat2, "mat2")] {
            if t.dim() != 2 {
                return Err(Error::runtime(format!(
                    "addmm: {name} must be a matrix, got {}-D tensor",
                    t.dim()
                )));
            }
        }
        let (a, b) = (mat1.sizes(), mat2.sizes());
        if a[1] != b[0] {
            return Err(Error::runtime(format!(
                "addmm: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                a[0], a[1], b[0], b[1]
            )));
        }
        let target = [a[0], b[1]];
        let base = self.expand(&target, false)?;
        same_operand_dtypes(self, mat1, mat2)?;
        product(
            &mat1.unsqueeze(0)?,
            &mat2.unsqueeze(0)?,
            Some(&base.unsqueeze(0)?),
            beta,
            alpha,
        )?
        .reshape(&target)
    }

    /// `baddbmm(batch1, batch2, beta, alpha)`: `beta * self + alpha * (batch1 @ batch2)` for
    /// 3-d batches; `self` broadcasts to `[B, M, N]`.
    pub fn baddbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
    ) -> Result<Tensor> {
        if batch1.dim() != 3 {
            return Err(Error::runtime("batch1 must be a 3D tensor"));
        }
        if batch2.dim() != 3 {
            return Err(Error::runtime("batch2 must be a 3D tensor"));
        }
        let (a, b) = (batch1.sizes(), batch2.sizes());
        if b[0] != a[0] || b[1] != a[2] {
            return Err(Error::runtime(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a[0], a[2], b[0], b[1]
            )));
        }
        let base = self.expand(&[a[0], a[1], b[2]], false)?;
        same_operand_dtypes(self, batch1, batch2)?;
        product(batch1, batch2, Some(&base), beta, alpha)
    }

    /// `addmv(mat, vec, beta, alpha)`: `beta * self + alpha * (mat @ vec)`.
    pub fn addmv(&self, mat: &Tensor, vec: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        let prod = mat.mv(vec)?;
        let base = self.expand(&prod.sizes(), false)?;
        product(
            &mat.unsqueeze(0)?,
            &vec.unsqueeze(1)?.unsqueeze(0)?,
            Some(&base.unsqueeze(1)?.unsqueeze(0)?),
            beta,
            alpha,
        )?
        .reshape(&prod.sizes())
    }
    /// `linear(weight, bias)` (`F.linear`): `self @ weight.T + bias` over the last dimension.
    pub fn linear(&self, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        if let Some(out) = crate::cpu::linear_packed::linear(self, weight, bias)? {
            return Ok(out);
        }
        if self.dim() == 2 && weight.dim() == 2 {
            if let Some(b) = bias {
                return b.addmm(self, &weight.t()?, Scalar::Int(1), Scalar::Int(1));
            }
        }
        let w = if weight.dim() == 2 {
            weight.t()?
        } else {
            weight.clone()
        };
        let out = if self.dim() >= 3 && w.dim() == 2 {
            let s = self.sizes();
            let rows: i64 = s[..s.len() - 1].iter().product();
            let folded = self.reshape(&[rows, s[s.len() - 1]])?;
            let mut shape: Vec<i64> = s[..s.len() - 1].to_vec();
            shape.push(w.sizes()[1]);
            match bias {
                Some(b) => {
                    return b
                        .addmm(&folded, &w, Scalar::Int(1), Scalar::Int(1))?
                        .reshape(&shape)
                }
                None => folded.mm(&w)?.reshape(&shape)?,
            }
        } else {
            self.matmul(&w)?
        };
        match bias {
            Some(b) => out.add(b, Scalar::Int(1)),
            None => Ok(out),
        }
    }

    /// `outer(vec2)`: the outer product of two vectors.
    pub fn outer(&self, vec2: &Tensor) -> Result<Tensor> {
        if self.dim() != 1 || vec2.dim() != 1 {
            return Err(Error::new(
                ErrorKind::RuntimeError,
                format!(
                    "outer: Expected 1-D argument self, but got {}-D",
                    self.dim()
                ),
            ));
        }
        self.unsqueeze(1)?.mul(&vec2.unsqueeze(0)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar(n: i64, s: &[i64]) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), s).unwrap()
    }

    #[test]
    fn products() {
        let a = ar(6, &[2, 3]);
        let b = ar(6, &[3, 2]);
        assert_eq!(a.mm(&b).unwrap().to_vec::<f32>(), vec![10., 13., 28., 40.]);
        // Transposed operands use logical layout.
        assert_eq!(
            a.mm(&a.t().unwrap()).unwrap().to_vec::<f32>(),
            vec![5., 14., 14., 50.]
        );
        assert_eq!(
            a.mm(&ar(20, &[4, 5])).unwrap_err().message,
            "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
        );
        assert_eq!(
            a.mm(&Tensor::zeros(&[3, 2], DType::Float64).unwrap())
                .unwrap_err()
                .message,
            "expected m1 and m2 to have the same dtype, but got: float != double"
        );
        let v = ar(3, &[3]);
        assert_eq!(a.mv(&v).unwrap().to_vec::<f32>(), vec![5., 14.]);
        assert_eq!(v.dot(&v).unwrap().to_vec::<f32>(), vec![5.]);
        let i = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap();
        assert_eq!(i.mm(&i).unwrap().to_vec::<i64>(), vec![7, 10, 15, 22]);
        let bo = Tensor::zeros(&[2, 2], DType::Bool).unwrap();
        assert!(bo.mm(&bo).is_err());
    }

    #[test]
    fn matmul_shapes() {
        let s = |a: &[i64], b: &[i64]| -> Vec<i64> {
            let x = Tensor::zeros(a, DType::Float32).unwrap();
            let y = Tensor::zeros(b, DType::Float32).unwrap();
            x.matmul(&y).unwrap().sizes().to_vec()
        };
        assert_eq!(s(&[2, 1, 2, 3], &[5, 3, 4]), vec![2, 5, 2, 4]);
        assert_eq!(s(&[3], &[5, 3, 4]), vec![5, 4]);
        assert_eq!(s(&[6, 2, 3], &[3]), vec![6, 2]);
        assert_eq!(s(&[3], &[3]), Vec::<i64>::new());
        let e = Tensor::zeros(&[6, 2, 3], DType::Float32)
            .unwrap()
            .matmul(&Tensor::zeros(&[6, 4, 5], DType::Float32).unwrap())
            .unwrap_err();
        assert_eq!(e.message, "Expected size for first two dimensions of batch2 tensor to be: [6, 3] but got: [6, 4].");
        let b = ar(24, &[2, 3, 4]);
        let c = ar(8, &[2, 4, 1]);
        // [[0*0+1*1+2*2+3*3], ...] per batch
        assert_eq!(
            b.bmm(&c).unwrap().to_vec::<f32>(),
            vec![14., 38., 62., 302., 390., 478.]
        );
        let r = Tensor::from_vec(vec![1f32; 3], &[3])
            .unwrap()
            .addmm(
                &ar(8, &[2, 4]),
                &ar(12, &[4, 3]),
                Scalar::Float(0.5),
                Scalar::Int(2),
            )
            .unwrap();
        assert_eq!(r.to_vec::<f32>()[0], 0.5 + 2.0 * 42.0);
    }

    #[test]
    fn gemm_reads_strided_and_expanded_operands() {
        // [2, 3] @ [3, 2] where the right operand is a transposed view and the batch of a bmm is
        // an expanded (stride 0) dimension; expected values are plain integer arithmetic.
        let a = ar(6, &[2, 3]);
        let bt = ar(6, &[2, 3]).t().unwrap();
        assert_eq!(a.mm(&bt).unwrap().to_vec::<f32>(), vec![5., 14., 14., 50.]);
        let a3 = a.unsqueeze(0).unwrap().expand(&[4, 2, 3], false).unwrap();
        let b3 = ar(6, &[3, 2])
            .unsqueeze(0)
            .unwrap()
            .expand(&[4, 3, 2], false)
            .unwrap();
        let r = a3.bmm(&b3).unwrap();
        assert_eq!(r.sizes().as_slice(), &[4, 2, 2]);
        assert_eq!(r.to_vec::<f32>()[12..], [10., 13., 28., 40.]);
        // Inner dimension 0: zeros, and addmm keeps beta * self.
        let e = Tensor::zeros(&[2, 0], DType::Float32).unwrap();
        let f = Tensor::zeros(&[0, 3], DType::Float32).unwrap();
        assert_eq!(e.mm(&f).unwrap().to_vec::<f32>(), vec![0.0; 6]);
        let base = Tensor::from_vec(vec![1f32, 2., 3.], &[3]).unwrap();
        let r = base.addmm(&e, &f, Scalar::Int(2), Scalar::Int(1)).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![2., 4., 6., 2., 4., 6.]);
    }

    #[test]
    fn half_precision_products() {
        let a = ar(6, &[2, 3]).to_dtype(DType::Float16, false).unwrap();
        let b = ar(6, &[3, 2]).to_dtype(DType::Float16, false).unwrap();
        let r = a.mm(&b).unwrap();
        assert_eq!(r.dtype(), DType::Float16);
        assert_eq!(r.to_vec::<f32>(), vec![10., 13., 28., 40.]);
        let a = a.to_dtype(DType::BFloat16, false).unwrap();
        let b = b.to_dtype(DType::BFloat16, false).unwrap();
        let r = a.mm(&b).unwrap();
        assert_eq!(r.dtype(), DType::BFloat16);
        assert_eq!(r.to_vec::<f32>(), vec![10., 13., 28., 40.]);
    }
}
