//! Linear solves on tensors: `linalg.solve`, `inv`, `lu_solve`, triangular and Cholesky
//! solves, `ldl_solve` and `lstsq`, broadcasting batch dimensions as ATen does.

use super::decompose::{check_infos, info_tensor, map_mats};
use super::ldl::sytrs_lower;
use super::lu::{getrf, getrs, trsm_left};
use super::mat::{by_real, check_matrix, check_square, rebatch, rebatch_vec, unbatch, Mat};
use super::qr::{geqrf, ormqr};
use super::real::Real;
use super::svd::svd;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::broadcast_shapes;
use crate::tensor::Tensor;

/// Expands `a` and `b` (both at least 2-d) to their common batch shape.
pub(crate) fn broadcast_pair(a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor)> {
    let (sa, sb) = (a.sizes(), b.sizes());
    let batch = broadcast_shapes(&sa[..sa.len() - 2], &sb[..sb.len() - 2])?;
    let mut ea = batch.to_vec();
    ea.extend_from_slice(&sa[sa.len() - 2..]);
    let mut eb = batch.to_vec();
    eb.extend_from_slice(&sb[sb.len() - 2..]);
    Ok((a.expand(&ea, false)?, b.expand(&eb, false)?))
}

fn same_dtype(a: &Tensor, b: &Tensor, op: &str) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "{op}: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// Whether `B` is a (batch of) vector(s) for `A` (ATen's `linalg_solve_is_vector_rhs`).
fn is_vector_rhs(a: &Tensor, b: &Tensor) -> bool {
    let (sa, sb) = (a.sizes(), b.sizes());
    b.dim() == 1 || (a.dim() == b.dim() + 1 && sb[..] == sa[..sa.len() - 1])
}

/// One matrix's least-squares result: the solution, the residual sums of squares, the rank and
/// the singular values.
type LstsqSolution<T> = (Mat<T>, Vec<T>, i64, Vec<T>);

impl Tensor {
    /// `linalg.solve_ex(A, B, left, check_errors)`: `(X, info)` with `A X = B` (`X A = B`
    /// when not `left`).
    pub fn linalg_solve_ex(
        &self,
        b: &Tensor,
        left: bool,
        check_errors: bool,
    ) -> Result<(Tensor, Tensor)> {
        let op = "torch.linalg.solve";
        check_square(self, "linalg.solve")?;
        same_dtype(self, b, "linalg.solve")?;
        let vector = left && is_vector_rhs(self, b);
        let b2 = if vector { b.unsqueeze(-1)? } else { b.clone() };
        if b2.dim() < 2 {
            return Err(Error::runtime(
                "linalg.solve: The input tensor B must have at least 2 dimensions.",
            ));
        }
        let n = self.sizes()[self.dim() - 1];
        let sb = b2.sizes();
        let brows = if left {
            sb[sb.len() - 2]
        } else {
            sb[sb.len() - 1]
        };
        if brows != n {
            let eq = if left { "AX = B" } else { "XA = B" };
            return Err(Error::runtime(format!(
                "linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {}x{})",
                sb[sb.len() - 2],
                sb[sb.len() - 1]
            )));
        }
        let (a, bb) = broadcast_pair(self, &b2)?;
        let (x, info) = by_real!(self, op, T => {
            let am = unbatch::<T>(&a)?;
            let bm = unbatch::<T>(&bb)?;
            let pairs: Vec<(Mat<T>, Mat<T>)> = am.mats.into_iter().zip(bm.mats).collect();
            let outs: Vec<(Mat<T>, i32)> = pairs
                .into_iter()
                .map(|(a, b)| {
                    let f = getrf(a);
                    let x = if left {
                        getrs(&f.lu, &f.piv, &b, false)
                    } else {
                        getrs(&f.lu, &f.piv, &b.t(), true).t()
                    };
                    (x, f.info)
                })
                .collect();
            let infos: Vec<i32> = outs.iter().map(|o| o.1).collect();
            if check_errors {
                check_infos(&infos, self.dim() > 2, op)?;
            }
            let xs: Vec<Mat<T>> = outs.into_iter().map(|o| o.0).collect();
            let sbb = bb.sizes();
            let x = rebatch(&am.batch, &xs, sbb[sbb.len() - 2] as usize, sbb[sbb.len() - 1] as usize)?;
            (x, info_tensor(&am.batch, infos)?)
        });
        let x = if vector { x.squeeze_dim(-1)? } else { x };
        // info has A's batch shape.
        let sa = self.sizes();
        let info = if info.sizes()[..] != sa[..sa.len() - 2] {
            Tensor::zeros(&sa[..sa.len() - 2], DType::Int32)?
        } else {
            info
        };
        Ok((x, info))
    }

    /// `linalg.solve(A, B, left)`.
    pub fn linalg_solve(&self, b: &Tensor, left: bool) -> Result<Tensor> {
        let (x, info) = self.linalg_solve_ex(b, left, false)?;
        check_infos(&info.to_vec::<i32>(), self.dim() > 2, "torch.linalg.solve")?;
        Ok(x)
    }

    /// `linalg.inv_ex(A, check_errors)`: `(inverse, info)`.
    pub fn linalg_inv_ex(&self, check_errors: bool) -> Result<(Tensor, Tensor)> {
        let op = "linalg.inv";
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let n = self.sizes()[self.dim() - 1] as usize;
            let outs = map_mats(b.mats, |a| {
                let f = getrf(a);
                (getrs(&f.lu, &f.piv, &Mat::eye(n, n), false), f.info)
            });
            let infos: Vec<i32> = outs.iter().map(|o| o.1).collect();
            if check_errors {
                check_infos(&infos, self.dim() > 2, op)?;
            }
            let xs: Vec<Mat<T>> = outs.into_iter().map(|o| o.0).collect();
            Ok((rebatch(&b.batch, &xs, n, n)?, info_tensor(&b.batch, infos)?))
        })
    }

    /// `linalg.inv(A)`.
    pub fn linalg_inv(&self) -> Result<Tensor> {
        Ok(self.linalg_inv_ex(true)?.0)
    }

    /// `linalg.lu_solve(LU, pivots, B, left, adjoint)`.
    pub fn linalg_lu_solve(
        &self,
        pivots: &Tensor,
        b: &Tensor,
        left: bool,
        adjoint: bool,
    ) -> Result<Tensor> {
        let op = "linalg.lu_solve";
        check_square(self, op)?;
        check_matrix(b, op)?;
        same_dtype(self, b, op)?;
        if pivots.dtype() != DType::Int32 {
            return Err(Error::runtime(format!(
                "{op}: Expected pivots to be integral. Got {}",
                pivots.dtype().scalar_type_name()
            )));
        }
        let n = self.sizes()[self.dim() - 1];
        let sb = b.sizes();
        let brows = if left {
            sb[sb.len() - 2]
        } else {
            sb[sb.len() - 1]
        };
        if brows != n {
            let eq = if left { "AX = B" } else { "XA = B" };
            return Err(Error::runtime(format!(
                "{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {}x{})",
                sb[sb.len() - 2],
                sb[sb.len() - 1]
            )));
        }
        let (a, bb) = broadcast_pair(self, b)?;
        let batch_shape = a.sizes()[..a.dim() - 2].to_vec();
        let mut pshape = batch_shape.clone();
        pshape.push(n);
        let piv = pivots.expand(&pshape, false)?.to_vec::<i32>();
        let nu = n as usize;
        by_real!(self, op, T => {
            let am = unbatch::<T>(&a)?;
            let bm = unbatch::<T>(&bb)?;
            let xs: Vec<Mat<T>> = am
                .mats
                .iter()
                .zip(&bm.mats)
                .enumerate()
                .map(|(i, (lu, b))| {
                    let p = &piv[i * nu..(i + 1) * nu];
                    if left {
                        getrs(lu, p, b, adjoint)
                    } else {
                        getrs(lu, p, &b.t(), !adjoint).t()
                    }
                })
                .collect();
            let sbb = bb.sizes();
            rebatch(&am.batch, &xs, sbb[sbb.len() - 2] as usize, sbb[sbb.len() - 1] as usize)
        })
    }

    /// `linalg.solve_triangular(A, B, upper, left, unitriangular)`.
    pub fn linalg_solve_triangular(
        &self,
        b: &Tensor,
        upper: bool,
        left: bool,
        unitriangular: bool,
    ) -> Result<Tensor> {
        let op = "linalg.solve_triangular";
        check_square(self, op)?;
        check_matrix(b, op)?;
        same_dtype(self, b, op)?;
        let n = self.sizes()[self.dim() - 1];
        let sb = b.sizes();
        let brows = if left {
            sb[sb.len() - 2]
        } else {
            sb[sb.len() - 1]
        };
        if brows != n {
            let eq = if left { "AX = B" } else { "XA = B" };
            return Err(Error::runtime(format!(
                "{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {}x{})",
                sb[sb.len() - 2],
                sb[sb.len() - 1]
            )));
        }
        let (a, bb) = broadcast_pair(self, b)?;
        by_real!(self, op, T => {
            let am = unbatch::<T>(&a)?;
            let bm = unbatch::<T>(&bb)?;
            let xs: Vec<Mat<T>> = am
                .mats
                .iter()
                .zip(bm.mats)
                .map(|(t, b)| {
                    if left {
                        let mut x = b;
                        trsm_left(t, &mut x, upper, unitriangular, false);
                        x
                    } else {
                        // X A = B  <=>  A^T X^T = B^T.
                        let mut x = b.t();
                        trsm_left(t, &mut x, upper, unitriangular, true);
                        x.t()
                    }
                })
                .collect();
            let sbb = bb.sizes();
            rebatch(&am.batch, &xs, sbb[sbb.len() - 2] as usize, sbb[sbb.len() - 1] as usize)
        })
    }

    /// `triangular_solve(b, A, upper, transpose, unitriangular)`: `(X, A)` with
    /// `op(A) X = b` (the coefficient broadcast and copied).
    pub fn triangular_solve(
        &self,
        a: &Tensor,
        upper: bool,
        transpose: bool,
        unitriangular: bool,
    ) -> Result<(Tensor, Tensor)> {
        let op = "triangular_solve";
        check_matrix(self, op)?;
        check_square(a, op)?;
        if self.sizes()[self.dim() - 2] != a.sizes()[a.dim() - 1] {
            return Err(Error::runtime(format!(
                "{op}: Incompatible matrix sizes for A * X = B: each A matrix is {n} by {n} but each b matrix is {} by {}",
                self.sizes()[self.dim() - 2],
                self.sizes()[self.dim() - 1],
                n = a.sizes()[a.dim() - 1]
            )));
        }
        same_dtype(a, self, op)?;
        let (aa, bb) = broadcast_pair(a, self)?;
        let x = by_real!(self, op, T => {
            let am = unbatch::<T>(&aa)?;
            let bm = unbatch::<T>(&bb)?;
            let xs: Vec<Mat<T>> = am
                .mats
                .iter()
                .zip(bm.mats)
                .map(|(t, mut x)| {
                    trsm_left(t, &mut x, upper, unitriangular, transpose);
                    x
                })
                .collect();
            let sbb = bb.sizes();
            rebatch(&am.batch, &xs, sbb[sbb.len() - 2] as usize, sbb[sbb.len() - 1] as usize)?
        });
        Ok((x, aa.clone_tensor()?.contiguous()?))
    }

    /// `cholesky_solve(B, L, upper)`: `X` with `(L L^T) X = B` (`U^T U` when `upper`).
    pub fn cholesky_solve(&self, l: &Tensor, upper: bool) -> Result<Tensor> {
        let op = "cholesky_solve";
        check_matrix(self, op)?;
        check_square(l, op)?;
        if self.dtype() != l.dtype() {
            return Err(Error::runtime(format!(
                "Expected b and A to have the same dtype, but found b of type {} and A of type {} instead.",
                self.dtype().scalar_type_name(),
                l.dtype().scalar_type_name()
            )));
        }
        if self.sizes()[self.dim() - 2] != l.sizes()[l.dim() - 1] {
            return Err(Error::runtime(format!(
                "Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b matrix is {} by {}",
                self.sizes()[self.dim() - 2],
                self.sizes()[self.dim() - 1],
                n = l.sizes()[l.dim() - 1]
            )));
        }
        let (ll, bb) = broadcast_pair(l, self)?;
        by_real!(self, op, T => {
            let lm = unbatch::<T>(&ll)?;
            let bm = unbatch::<T>(&bb)?;
            let xs: Vec<Mat<T>> = lm
                .mats
                .iter()
                .zip(bm.mats)
                .map(|(t, mut x)| {
                    if upper {
                        trsm_left(t, &mut x, true, false, true);
                        trsm_left(t, &mut x, true, false, false);
                    } else {
                        trsm_left(t, &mut x, false, false, false);
                        trsm_left(t, &mut x, false, false, true);
                    }
                    x
                })
                .collect();
            let sbb = bb.sizes();
            rebatch(&lm.batch, &xs, sbb[sbb.len() - 2] as usize, sbb[sbb.len() - 1] as usize)
        })
    }

    /// `cholesky_inverse(L, upper)`: the inverse of `L L^T` (`U^T U`).
    pub fn cholesky_inverse(&self, upper: bool) -> Result<Tensor> {
        check_square(self, "cholesky_inverse")?;
        crate::ops::linalg::mat::check_float(self, "cholesky_inverse")?;
        let n = self.sizes()[self.dim() - 1];
        let eye = crate::ops::factory::eye(n, None, Some(self.dtype()))?;
        let s = self.sizes();
        let eye = eye.expand(&s, false)?;
        eye.cholesky_solve(self, upper)
    }

    /// `linalg.ldl_solve(LD, pivots, B, hermitian)`.
    pub fn linalg_ldl_solve(
        &self,
        pivots: &Tensor,
        b: &Tensor,
        _hermitian: bool,
    ) -> Result<Tensor> {
        let op = "torch.linalg.ldl_solve";
        check_square(self, op)?;
        check_matrix(b, op)?;
        same_dtype(self, b, op)?;
        let n = self.sizes()[self.dim() - 1];
        let (a, bb) = broadcast_pair(self, b)?;
        let batch_shape = a.sizes()[..a.dim() - 2].to_vec();
        let mut pshape = batch_shape.clone();
        pshape.push(n);
        let piv = pivots.expand(&pshape, false)?.to_vec::<i32>();
        let nu = n as usize;
        by_real!(self, op, T => {
            let am = unbatch::<T>(&a)?;
            let bm = unbatch::<T>(&bb)?;
            let xs: Vec<Mat<T>> = am
                .mats
                .iter()
                .zip(&bm.mats)
                .enumerate()
                .map(|(i, (f, b))| sytrs_lower(f, &piv[i * nu..(i + 1) * nu], b))
                .collect();
            let sbb = bb.sizes();
            rebatch(&am.batch, &xs, sbb[sbb.len() - 2] as usize, sbb[sbb.len() - 1] as usize)
        })
    }

    /// `linalg.lstsq(A, B, rcond, driver)`: `(solution, residuals, rank, singular_values)`.
    /// `gels` solves by QR (LQ for wide matrices); the rank-revealing drivers use the SVD
    /// with LAPACK's default `rcond` (`eps * max(m, n)`).
    pub fn linalg_lstsq(
        &self,
        b: &Tensor,
        rcond: Option<f64>,
        driver: Option<&str>,
    ) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        let op = "torch.linalg.lstsq";
        check_matrix(self, op)?;
        let driver = driver.unwrap_or("gelsy");
        if !matches!(driver, "gels" | "gelsy" | "gelsd" | "gelss") {
            return Err(Error::runtime(format!(
                "{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
            )));
        }
        if self.dtype() != b.dtype() {
            return Err(Error::runtime(format!(
                "{op}: Expected input and other to have the same dtype, but got input's dtype {} and other's dtype {}",
                self.dtype().scalar_type_name(),
                b.dtype().scalar_type_name()
            )));
        }
        let vector = b.dim() + 1 == self.dim();
        let b2 = if vector { b.unsqueeze(-1)? } else { b.clone() };
        check_matrix(&b2, op)?;
        let sa = self.sizes();
        let (m, n) = (sa[sa.len() - 2], sa[sa.len() - 1]);
        if b2.sizes()[b2.dim() - 2] != m {
            return Err(Error::runtime(format!(
                "{op}: input.size(-2) should match other.size(-2)"
            )));
        }
        let (a, bb) = broadcast_pair(self, &b2)?;
        let k = bb.sizes()[bb.dim() - 1] as usize;
        let (mu, nu) = (m as usize, n as usize);
        let dt = self.dtype();
        let want_res = m > n && driver != "gelsy";
        let svd_driver = driver == "gelsd" || driver == "gelss";
        by_real!(self, op, T => {
            let eps = T::ULP.f64();
            let rc = rcond.unwrap_or(eps * (m.max(n) as f64));
            let am = unbatch::<T>(&a)?;
            let bm = unbatch::<T>(&bb)?;
            let outs: Vec<LstsqSolution<T>> = am
                .mats
                .iter()
                .zip(&bm.mats)
                .map(|(a, b)| {
                    if driver == "gels" {
                        if mu >= nu {
                            let (f, tau) = geqrf(a.clone());
                            let qtb = ormqr(&f, &tau, b, true, true);
                            let mut x = qtb.rows(0, nu);
                            trsm_left(&f.rows(0, nu), &mut x, true, false, false);
                            let res: Vec<T> = (0..k)
                                .map(|j| {
                                    let mut s = T::ZERO;
                                    for i in nu..mu {
                                        s += qtb[(i, j)] * qtb[(i, j)];
                                    }
                                    s
                                })
                                .collect();
                            (x, res, nu as i64, vec![])
                        } else {
                            // A^T = Q R, so A = R^T Q^T: x = Q [R^-T b; 0].
                            let (f, tau) = geqrf(a.t());
                            let mut y = b.clone();
                            trsm_left(&f.rows(0, mu), &mut y, true, false, true);
                            let mut full = Mat::zeros(nu, k);
                            for i in 0..mu {
                                for j in 0..k {
                                    full[(i, j)] = y[(i, j)];
                                }
                            }
                            (ormqr(&f, &tau, &full, true, false), vec![], mu as i64, vec![])
                        }
                    } else {
                        let r = svd(a, false);
                        let smax = r.s.first().copied().unwrap_or(0.0);
                        let rank = r.s.iter().filter(|&&s| s > rc * smax).count();
                        let mut x = Mat::<f64>::zeros(nu, k);
                        for t in 0..rank {
                            for j in 0..k {
                                let mut c = 0.0;
                                for i in 0..mu {
                                    c += r.u[(i, t)] * b[(i, j)].f64();
                                }
                                c /= r.s[t];
                                for i in 0..nu {
                                    x[(i, j)] += r.vt[(t, i)] * c;
                                }
                            }
                        }
                        let res: Vec<T> = (0..k)
                            .map(|j| {
                                let mut s = 0.0;
                                for i in 0..mu {
                                    let mut ax = 0.0;
                                    for c in 0..nu {
                                        ax += a[(i, c)].f64() * x[(c, j)];
                                    }
                                    s += (ax - b[(i, j)].f64()).powi(2);
                                }
                                T::of(s)
                            })
                            .collect();
                        let x = Mat {
                            r: nu,
                            c: k,
                            d: x.d.iter().map(|v| T::of(*v)).collect(),
                        };
                        (x, res, rank as i64, r.s.iter().map(|v| T::of(*v)).collect())
                    }
                })
                .collect();
            let batch = am.batch.clone();
            let ranks: Vec<i64> = outs.iter().map(|o| o.2).collect();
            let xs: Vec<Mat<T>> = outs.iter().map(|o| o.0.clone()).collect();
            let mut sol = rebatch(&batch, &xs, nu, k)?;
            if vector {
                sol = sol.squeeze_dim(-1)?;
            }
            let full_rank = ranks.iter().all(|&r| r == nu as i64);
            let residuals = if want_res && (!svd_driver || full_rank) {
                let rs: Vec<Vec<T>> = outs.iter().map(|o| o.1.clone()).collect();
                rebatch_vec(&batch, rs, k)?
            } else {
                Tensor::zeros(&[0], dt)?
            };
            let rank = if driver == "gels" {
                Tensor::zeros(&[0], DType::Int64)?
            } else {
                Tensor::from_vec(ranks, &batch)?
            };
            let sv = if svd_driver {
                let ss: Vec<Vec<T>> = outs.into_iter().map(|o| o.3).collect();
                rebatch_vec(&batch, ss, mu.min(nu))?
            } else {
                Tensor::zeros(&[0], dt)?
            };
            Ok((sol, residuals, rank, sv))
        })
    }
}
