//! Tensor-level factorizations: LU, QR, Cholesky, symmetric eigen, SVD and LDL, batched over
//! leading dimensions, with ATen's argument checks, error messages and `_ex` info tensors.

use rayon::prelude::*;

use super::cholesky::potrf_lower;
use super::eigh::syev;
use super::ldl::sytf2_lower;
use super::lu::{getrf, permutation};
use super::mat::{
    by_real, check_matrix, check_square, rebatch, rebatch_scalar, rebatch_vec, unbatch, Mat,
};
use super::qr::{geqrf, orgqr, ormqr};
use super::real::Real;
use super::svd::svd;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Maps `f` over matrices, in parallel when there are several.
pub(crate) fn map_mats<T: Real, R: Send>(
    mats: Vec<Mat<T>>,
    f: impl Fn(Mat<T>) -> R + Sync + Send,
) -> Vec<R> {
    if crate::threads::should_split(mats.len() > 1) {
        mats.into_par_iter().map(f).collect()
    } else {
        mats.into_iter().map(f).collect()
    }
}

/// Raises ATen's `_linalg_check_errors` message for the first nonzero `info`.
pub(crate) fn check_infos(infos: &[i32], batched: bool, api: &str) -> Result<()> {
    let Some((b, &info)) = infos.iter().enumerate().find(|(_, &i)| i != 0) else {
        return Ok(());
    };
    let prefix = if batched {
        format!("{api}: (Batch element {b}): ")
    } else {
        format!("{api}: ")
    };
    let body = if info < 0 {
        format!("Argument {} has illegal value. Most certainly there is a bug in the implementation calling the backend library.", -info)
    } else if api.contains("solve") {
        "The solver failed because the input matrix is singular.".to_string()
    } else if api.contains("inv") {
        format!("The diagonal element {info} is zero, the inversion could not be completed because the input matrix is singular.")
    } else if api.contains("cholesky") {
        format!("The factorization could not be completed because the input is not positive-definite (the leading minor of order {info} is not positive-definite).")
    } else if api.contains("eig") {
        format!("The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues (error code: {info}).")
    } else if api.contains("svd") {
        format!("The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values (error code: {info}).")
    } else if api.contains("lu_factor") {
        format!("U[{info},{info}] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    } else {
        format!("The factorization could not be completed (error code: {info}).")
    };
    Err(Error::runtime(format!("{prefix}{body}")))
}

/// The info tensor (`int32`, batch-shaped).
pub(crate) fn info_tensor(batch: &[i64], infos: Vec<i32>) -> Result<Tensor> {
    rebatch_scalar(batch, infos)
}

impl Tensor {
    /// `linalg.lu_factor_ex(A, pivot, check_errors)`: `(LU, pivots, info)`.
    pub fn linalg_lu_factor_ex(
        &self,
        pivot: bool,
        check_errors: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let op = "torch.linalg.lu_factor_ex";
        check_matrix(self, op)?;
        if !pivot {
            return Err(Error::runtime(
                "linalg.lu_factor: LU without pivoting is not implemented on the CPU",
            ));
        }
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let s = self.sizes();
            let (m, n) = (s[s.len() - 2] as usize, s[s.len() - 1] as usize);
            let k = m.min(n);
            let fs = map_mats(b.mats, getrf);
            let infos: Vec<i32> = fs.iter().map(|f| f.info).collect();
            if check_errors {
                check_infos(&infos, self.dim() > 2, "torch.linalg.lu_factor_ex")?;
            }
            let lus: Vec<Mat<T>> = fs.iter().map(|f| f.lu.clone()).collect();
            let pivs: Vec<Vec<i32>> = fs.into_iter().map(|f| f.piv).collect();
            Ok((
                rebatch(&b.batch, &lus, m, n)?,
                rebatch_vec(&b.batch, pivs, k)?,
                info_tensor(&b.batch, infos)?,
            ))
        })
    }

    /// `linalg.lu_factor(A, pivot)`: `(LU, pivots)`, raising on a zero pivot.
    pub fn linalg_lu_factor(&self, pivot: bool) -> Result<(Tensor, Tensor)> {
        let (lu, piv, info) = self.linalg_lu_factor_ex(pivot, false)?;
        check_infos(
            &info.to_vec::<i32>(),
            self.dim() > 2,
            "torch.linalg.lu_factor",
        )?;
        Ok((lu, piv))
    }

    /// `lu_unpack(LU, pivots, unpack_data, unpack_pivots)`: `(P, L, U)` with `A = P L U`.
    pub fn lu_unpack(
        &self,
        pivots: &Tensor,
        unpack_data: bool,
        unpack_pivots: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        check_matrix(self, "torch.lu_unpack")?;
        let s = self.sizes();
        let nd = s.len();
        let (m, n) = (s[nd - 2], s[nd - 1]);
        let k = m.min(n);
        let dt = self.dtype();
        let (l, u) = if unpack_data {
            let u = self.narrow(-2, 0, k)?.triu(0)?;
            let l = self.narrow(-1, 0, k)?.tril(-1)?;
            let eye = crate::ops::factory::eye(m, Some(k), Some(dt))?;
            (l.add(&eye, crate::scalar::Scalar::Int(1))?, u)
        } else {
            (Tensor::zeros(&[0], dt)?, Tensor::zeros(&[0], dt)?)
        };
        let p = if unpack_pivots {
            if pivots.dtype() != DType::Int32 {
                return Err(Error::runtime(
                    "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\nNote: this function is intended to be used with the output produced by torch.linalg.lu_factor",
                ));
            }
            let ps = pivots.sizes();
            let count: usize = ps[..ps.len().saturating_sub(1)].iter().product::<i64>() as usize;
            let kk = *ps.last().unwrap_or(&0) as usize;
            let pv = pivots.to_vec::<i32>();
            let mm = m as usize;
            let mut data = vec![0f64; count * mm * mm];
            for b in 0..count {
                let perm = permutation(&pv[b * kk..(b + 1) * kk], mm);
                // Row perm[i] of A is row i of P^T A, so P[perm[i], i] = 1.
                for (i, &r) in perm.iter().enumerate() {
                    data[b * mm * mm + r * mm + i] = 1.0;
                }
            }
            let mut shape = ps[..ps.len().saturating_sub(1)].to_vec();
            shape.extend([m, m]);
            Tensor::from_vec(data, &shape)?.to_dtype(dt, false)?
        } else {
            Tensor::zeros(&[0], dt)?
        };
        Ok((p, l, u))
    }

    /// `linalg.lu(A, pivot)`: `(P, L, U)`.
    pub fn linalg_lu(&self, pivot: bool) -> Result<(Tensor, Tensor, Tensor)> {
        check_matrix(self, "linalg.lu")?;
        let (lu, piv, _) = self.linalg_lu_factor_ex(pivot, false)?;
        lu.lu_unpack(&piv, true, true)
    }

    /// `linalg.cholesky_ex(A, upper, check_errors)`: `(L, info)`.
    pub fn linalg_cholesky_ex(&self, upper: bool, check_errors: bool) -> Result<(Tensor, Tensor)> {
        let op = "linalg.cholesky";
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let n = self.sizes()[self.dim() - 1] as usize;
            let fs = map_mats(b.mats, |a| {
                // The upper factor of A is the transposed lower factor of A^T.
                let src = if upper { a.t() } else { a };
                let (l, info) = potrf_lower(&src);
                let l = l.triangle(false);
                (if upper { l.t() } else { l }, info)
            });
            let infos: Vec<i32> = fs.iter().map(|f| f.1).collect();
            if check_errors {
                check_infos(&infos, self.dim() > 2, op)?;
            }
            let ls: Vec<Mat<T>> = fs.into_iter().map(|f| f.0).collect();
            Ok((rebatch(&b.batch, &ls, n, n)?, info_tensor(&b.batch, infos)?))
        })
    }

    /// `linalg.cholesky(A, upper)`.
    pub fn linalg_cholesky(&self, upper: bool) -> Result<Tensor> {
        let (l, info) = self.linalg_cholesky_ex(upper, false)?;
        check_infos(&info.to_vec::<i32>(), self.dim() > 2, "linalg.cholesky")?;
        Ok(l)
    }

    /// `geqrf(A)`: `(a, tau)`, LAPACK's compact QR.
    pub fn geqrf(&self) -> Result<(Tensor, Tensor)> {
        let op = "geqrf";
        check_matrix(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let s = self.sizes();
            let (m, n) = (s[s.len() - 2] as usize, s[s.len() - 1] as usize);
            let fs = map_mats(b.mats, geqrf);
            let taus: Vec<Vec<T>> = fs.iter().map(|f| f.1.clone()).collect();
            let as_: Vec<Mat<T>> = fs.into_iter().map(|f| f.0).collect();
            Ok((rebatch(&b.batch, &as_, m, n)?, rebatch_vec(&b.batch, taus, m.min(n))?))
        })
    }

    /// `linalg.householder_product(A, tau)` (`orgqr`): the first `n` columns of
    /// `H(0) ... H(k-1)`.
    pub fn linalg_householder_product(&self, tau: &Tensor) -> Result<Tensor> {
        let op = "torch.linalg.householder_product";
        check_matrix(self, op)?;
        let s = self.sizes();
        let nd = s.len();
        let (m, n) = (s[nd - 2], s[nd - 1]);
        if m < n {
            return Err(Error::runtime(format!(
                "{op}: input.shape[-2] must be greater than or equal to input.shape[-1]"
            )));
        }
        let k = *tau.sizes().last().unwrap_or(&0);
        if tau.dim() != nd - 1 {
            return Err(Error::runtime(format!(
                "{op}: input.dim() - tau.dim() must be equal to 1 but got: {}",
                nd as i64 - tau.dim() as i64
            )));
        }
        if k > n {
            return Err(Error::runtime(format!(
                "{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
            )));
        }
        if self.dtype() != tau.dtype() {
            return Err(Error::runtime(format!(
                "{op}: tau dtype {} does not match input dtype {}",
                tau.dtype().scalar_type_name(),
                self.dtype().scalar_type_name()
            )));
        }
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let tv = tau.to_vec::<T>();
            let ku = k as usize;
            let qs: Vec<Mat<T>> = b
                .mats
                .iter()
                .enumerate()
                .map(|(i, a)| orgqr(a, &tv[i * ku..(i + 1) * ku], n as usize))
                .collect();
            rebatch(&b.batch, &qs, m as usize, n as usize)
        })
    }

    /// `ormqr(A, tau, C, left, transpose)`: `op(Q) C` or `C op(Q)` for the reflectors of `A`.
    pub fn ormqr(
        &self,
        tau: &Tensor,
        other: &Tensor,
        left: bool,
        transpose: bool,
    ) -> Result<Tensor> {
        let op = "torch.ormqr";
        check_matrix(self, op)?;
        check_matrix(other, op)?;
        let (sa, sc) = (self.sizes(), other.sizes());
        let (na, nc) = (sa.len(), sc.len());
        let qdim = if left { sc[nc - 2] } else { sc[nc - 1] };
        if sa[na - 2] != qdim {
            return Err(Error::runtime(format!(
                "{op}: other.shape[{}] must be equal to input.shape[-2]",
                if left { -2 } else { -1 }
            )));
        }
        if *tau.sizes().last().unwrap_or(&0) > sa[na - 1] {
            return Err(Error::runtime(format!(
                "{op}: tau.shape[-1] must be less than or equal to input.shape[-1]"
            )));
        }
        by_real!(self, op, T => {
            let a = unbatch::<T>(self)?;
            let c = unbatch::<T>(other)?;
            let tv = tau.to_vec::<T>();
            let k = *tau.sizes().last().unwrap_or(&0) as usize;
            if a.mats.len() != c.mats.len() {
                return Err(Error::runtime(format!(
                    "{op}: input and other must have the same batch dimensions"
                )));
            }
            let outs: Vec<Mat<T>> = a
                .mats
                .iter()
                .zip(&c.mats)
                .enumerate()
                .map(|(i, (am, cm))| ormqr(am, &tv[i * k..(i + 1) * k], cm, left, transpose))
                .collect();
            rebatch(&c.batch, &outs, sc[nc - 2] as usize, sc[nc - 1] as usize)
        })
    }

    /// `linalg.qr(A, mode)`: `(Q, R)` for `mode` `reduced`, `complete` or `r` (empty `Q`).
    pub fn linalg_qr(&self, mode: &str) -> Result<(Tensor, Tensor)> {
        let op = "linalg.qr";
        check_matrix(self, op)?;
        if !matches!(mode, "reduced" | "complete" | "r") {
            return Err(Error::runtime(format!(
                "qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
            )));
        }
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let s = self.sizes();
            let (m, n) = (s[s.len() - 2] as usize, s[s.len() - 1] as usize);
            let k = m.min(n);
            let qcols = if mode == "complete" { m } else { k };
            let rrows = if mode == "complete" { m } else { k };
            let fs = map_mats(b.mats, |a| {
                let (f, tau) = geqrf(a);
                let r = f.rows(0, rrows.min(m)).triangle(true);
                let q = if mode == "r" { None } else { Some(orgqr(&f, &tau, qcols)) };
                (q, r)
            });
            let rs: Vec<Mat<T>> = fs.iter().map(|f| f.1.clone()).collect();
            let r = rebatch(&b.batch, &rs, rrows, n)?;
            let q = if mode == "r" {
                Tensor::zeros(&[0], self.dtype())?
            } else {
                let qs: Vec<Mat<T>> = fs.into_iter().map(|f| f.0.unwrap_or_else(|| Mat::zeros(0, 0))).collect();
                rebatch(&b.batch, &qs, m, qcols)?
            };
            Ok((q, r))
        })
    }

    /// `linalg.eigh(A, UPLO)`: ascending eigenvalues and eigenvector columns.
    pub fn linalg_eigh(&self, uplo: &str) -> Result<(Tensor, Tensor)> {
        let (w, v) = self.eigh_impl(uplo, true, "linalg.eigh")?;
        Ok((w, v.unwrap_or(Tensor::zeros(&[0], self.dtype())?)))
    }

    /// `linalg.eigvalsh(A, UPLO)`.
    pub fn linalg_eigvalsh(&self, uplo: &str) -> Result<Tensor> {
        Ok(self.eigh_impl(uplo, false, "linalg.eigvalsh")?.0)
    }

    fn eigh_impl(&self, uplo: &str, vectors: bool, op: &str) -> Result<(Tensor, Option<Tensor>)> {
        check_square(self, op)?;
        let upper = match uplo {
            "U" | "u" => true,
            "L" | "l" => false,
            _ => {
                return Err(Error::runtime(format!(
                    "Expected UPLO argument to be 'L' or 'U', but got {uplo}"
                )))
            }
        };
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let n = self.sizes()[self.dim() - 1] as usize;
            let rs = map_mats(b.mats, |a| syev(&a, upper, vectors));
            let infos: Vec<i32> = rs.iter().map(|r| r.2).collect();
            check_infos(&infos, self.dim() > 2, op)?;
            let ws: Vec<Vec<T>> = rs.iter().map(|r| r.0.clone()).collect();
            let w = rebatch_vec(&b.batch, ws, n)?;
            let v = if vectors {
                let vs: Vec<Mat<T>> = rs.into_iter().map(|r| r.1.unwrap_or_else(|| Mat::zeros(n, n))).collect();
                Some(rebatch(&b.batch, &vs, n, n)?)
            } else {
                None
            };
            Ok((w, v))
        })
    }

    /// `linalg.svd(A, full_matrices)`: `(U, S, Vh)`.
    pub fn linalg_svd(&self, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
        let op = "linalg.svd";
        check_matrix(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let s = self.sizes();
            let (m, n) = (s[s.len() - 2] as usize, s[s.len() - 1] as usize);
            let k = m.min(n);
            let rs = map_mats(b.mats, |a| svd(&a, full_matrices));
            let (ur, vr) = if full_matrices { (m, n) } else { (k, k) };
            let conv = |x: &Mat<f64>| Mat {
                r: x.r,
                c: x.c,
                d: x.d.iter().map(|v| T::of(*v)).collect::<Vec<T>>(),
            };
            let us: Vec<Mat<T>> = rs.iter().map(|r| conv(&r.u)).collect();
            let vs: Vec<Mat<T>> = rs.iter().map(|r| conv(&r.vt)).collect();
            let ss: Vec<Vec<T>> = rs.iter().map(|r| r.s.iter().map(|v| T::of(*v)).collect()).collect();
            Ok((
                rebatch(&b.batch, &us, m, ur)?,
                rebatch_vec(&b.batch, ss, k)?,
                rebatch(&b.batch, &vs, vr, n)?,
            ))
        })
    }

    /// `linalg.svdvals(A)`: singular values, descending.
    pub fn linalg_svdvals(&self) -> Result<Tensor> {
        let op = "linalg.svd";
        check_matrix(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let s = self.sizes();
            let k = (s[s.len() - 2].min(s[s.len() - 1])) as usize;
            let ss = map_mats(b.mats, |a| svd(&a, false).s.iter().map(|v| T::of(*v)).collect::<Vec<T>>());
            rebatch_vec(&b.batch, ss, k)
        })
    }

    /// `torch.svd(A, some, compute_uv)`: `(U, S, V)` (`V` not transposed; zero-filled
    /// `U`/`V` when `compute_uv` is false).
    pub fn svd(&self, some: bool, compute_uv: bool) -> Result<(Tensor, Tensor, Tensor)> {
        check_matrix(self, "linalg.svd")?;
        if !compute_uv {
            let s = self.linalg_svdvals()?;
            let sz = self.sizes();
            let nd = sz.len();
            let mut us = sz[..nd - 2].to_vec();
            us.extend([sz[nd - 2], sz[nd - 2]]);
            let mut vs = sz[..nd - 2].to_vec();
            vs.extend([sz[nd - 1], sz[nd - 1]]);
            return Ok((
                Tensor::zeros(&us, self.dtype())?,
                s,
                Tensor::zeros(&vs, self.dtype())?,
            ));
        }
        let (u, s, vh) = self.linalg_svd(!some)?;
        Ok((u, s, vh.transpose(-2, -1)?))
    }

    /// `linalg.ldl_factor_ex(A, hermitian, check_errors)`: `(LD, pivots, info)`.
    pub fn linalg_ldl_factor_ex(
        &self,
        _hermitian: bool,
        check_errors: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let op = "torch.linalg.ldl_factor_ex";
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let n = self.sizes()[self.dim() - 1] as usize;
            let rs = map_mats(b.mats, |a| sytf2_lower(&a));
            let infos: Vec<i32> = rs.iter().map(|r| r.2).collect();
            if check_errors && infos.iter().any(|&i| i != 0) {
                return Err(Error::runtime(format!(
                    "{op}: The factorization could not be completed because the input is singular."
                )));
            }
            let pivs: Vec<Vec<i32>> = rs.iter().map(|r| r.1.clone()).collect();
            let lds: Vec<Mat<T>> = rs.into_iter().map(|r| r.0).collect();
            Ok((
                rebatch(&b.batch, &lds, n, n)?,
                rebatch_vec(&b.batch, pivs, n)?,
                info_tensor(&b.batch, infos)?,
            ))
        })
    }
}
