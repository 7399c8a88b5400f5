//! Matrix functions and composite linear-algebra operators: determinants, pseudo-inverse,
//! rank, matrix norms and condition numbers, powers and exponentials, the polar
//! decomposition and square root, and the products built from other operators (`cross`,
//! `vander`, `vecdot`, `multi_dot`, `tensordot`, `kron`, `inner`, `addr`, `tensorinv`,
//! `tensorsolve`).

use super::decompose::map_mats;
use super::eigh::syev;
use super::lu::{getrf, getrs, perm_sign};
use super::mat::{
    by_real, check_float, check_matrix, check_square, rebatch, rebatch_scalar, unbatch, Mat,
};
use super::real::Real;
use super::svd::svd;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::promote::Operand;
use crate::scalar::Scalar;
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

const ONE: Scalar = Scalar::Int(1);

/// The order of a matrix norm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MatrixNormOrd {
    /// A numeric order: ±1, ±2 or ±inf.
    Num(f64),
    /// Frobenius (`'fro'`).
    Fro,
    /// Nuclear (`'nuc'`): the sum of singular values.
    Nuc,
}

/// A `[*batch]` f64 tensor of tolerances, or `None`.
fn tol_tensor(x: Option<f64>) -> Result<Option<Tensor>> {
    x.map(|v| Tensor::scalar_tensor(Scalar::Float(v), DType::Float64))
        .transpose()
}

impl Tensor {
    /// `linalg.det(A)`.
    pub fn linalg_det(&self) -> Result<Tensor> {
        let op = "linalg.det";
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let ds = map_mats(b.mats, |a| {
                let n = a.r;
                let f = getrf(a);
                let mut d = T::ONE;
                for i in 0..n {
                    d *= f.lu[(i, i)];
                }
                if perm_sign(&f.piv) == 1 {
                    -d
                } else {
                    d
                }
            });
            rebatch_scalar(&b.batch, ds)
        })
    }

    /// `linalg.slogdet(A)`: `(sign, logabsdet)`.
    pub fn linalg_slogdet(&self) -> Result<(Tensor, Tensor)> {
        let op = "linalg.slogdet";
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let rs = map_mats(b.mats, |a| {
                let n = a.r;
                let f = getrf(a);
                let mut sign = if perm_sign(&f.piv) == 1 { -T::ONE } else { T::ONE };
                let mut logabs = T::ZERO;
                for i in 0..n {
                    let d = f.lu[(i, i)];
                    if d < T::ZERO {
                        sign = -sign;
                    } else if d == T::ZERO {
                        sign = T::ZERO;
                    }
                    logabs += d.abs().ln();
                }
                (sign, logabs)
            });
            let signs: Vec<T> = rs.iter().map(|r| r.0).collect();
            let logs: Vec<T> = rs.iter().map(|r| r.1).collect();
            Ok((rebatch_scalar(&b.batch, signs)?, rebatch_scalar(&b.batch, logs)?))
        })
    }

    /// `logdet(A)`: `log(det(A))`, NaN for a negative determinant.
    pub fn logdet(&self) -> Result<Tensor> {
        let (sign, logabs) = self.linalg_slogdet()?;
        let neg = sign.lt_scalar(Scalar::Int(0))?;
        crate::where_(
            &neg,
            Operand::Scalar(Scalar::Float(f64::NAN)),
            Operand::Tensor(&logabs),
        )
    }

    /// `linalg.pinv(A, atol, rtol, hermitian)` with ATen's tolerance rules (`rtol` defaults to
    /// `eps * max(m, n)` unless a positive `atol` is given).
    pub fn linalg_pinv(
        &self,
        atol: Option<&Tensor>,
        rtol: Option<&Tensor>,
        hermitian: bool,
    ) -> Result<Tensor> {
        let op = "linalg.pinv";
        check_matrix(self, op)?;
        check_float(self, op)?;
        let (atol, rtol) = self.atol_rtol(atol, rtol)?;
        let s = self.sizes();
        let nd = s.len();
        if self.numel() == 0 {
            let mut shape = s[..nd - 2].to_vec();
            shape.extend([s[nd - 1], s[nd - 2]]);
            return Tensor::zeros(&shape, self.dtype());
        }
        let zero = Operand::Scalar(Scalar::Int(0));
        if !hermitian {
            let (u, sv, vh) = self.linalg_svd(false)?;
            let max_val = sv.narrow(-1, 0, 1)?;
            let tol = atol
                .unsqueeze(-1)?
                .maximum(&rtol.unsqueeze(-1)?.mul(&max_val)?)?;
            let inv = crate::where_(&sv.gt(&tol)?, Operand::Tensor(&sv.reciprocal()?), zero)?
                .to_dtype(self.dtype(), false)?;
            vh.transpose(-2, -1)?
                .mul(&inv.unsqueeze(-2)?)?
                .matmul(&u.transpose(-2, -1)?)
        } else {
            let (w, v) = self.linalg_eigh("L")?;
            let wabs = w.abs()?;
            let max_val = wabs.amax(&[-1], true)?;
            let tol = atol
                .unsqueeze(-1)?
                .maximum(&rtol.unsqueeze(-1)?.mul(&max_val)?)?;
            let inv = crate::where_(&wabs.gt(&tol)?, Operand::Tensor(&w.reciprocal()?), zero)?
                .to_dtype(self.dtype(), false)?;
            v.mul(&inv.unsqueeze(-2)?)?.matmul(&v.transpose(-2, -1)?)
        }
    }

    /// `linalg.pinv` with float tolerances.
    pub fn linalg_pinv_f(
        &self,
        atol: Option<f64>,
        rtol: Option<f64>,
        hermitian: bool,
    ) -> Result<Tensor> {
        let (a, r) = (tol_tensor(atol)?, tol_tensor(rtol)?);
        self.linalg_pinv(a.as_ref(), r.as_ref(), hermitian)
    }

    /// ATen's `get_atol_rtol`: f64 tensors, `rtol` defaulting to `eps * max(m, n)` (0 when a
    /// positive `atol` is given).
    fn atol_rtol(&self, atol: Option<&Tensor>, rtol: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
        let zero = Tensor::scalar_tensor(Scalar::Float(0.0), DType::Float64)?;
        let a = atol.cloned().unwrap_or_else(|| zero.clone());
        let r = match rtol {
            Some(r) => r.clone(),
            None => {
                let s = self.sizes();
                let nd = s.len();
                let eps = if self.dtype() == DType::Float32 {
                    f32::EPSILON as f64
                } else {
                    f64::EPSILON
                };
                let def = Tensor::scalar_tensor(
                    Scalar::Float(eps * s[nd - 1].max(s[nd - 2]) as f64),
                    DType::Float64,
                )?;
                match atol {
                    Some(at) => crate::where_(
                        &at.gt_scalar(Scalar::Int(0))?,
                        Operand::Tensor(&zero),
                        Operand::Tensor(&def),
                    )?,
                    None => def,
                }
            }
        };
        Ok((a, r))
    }

    /// `linalg.matrix_rank(A, atol, rtol, hermitian)`.
    pub fn linalg_matrix_rank(
        &self,
        atol: Option<&Tensor>,
        rtol: Option<&Tensor>,
        hermitian: bool,
    ) -> Result<Tensor> {
        let op = "torch.linalg.matrix_rank";
        check_matrix(self, op)?;
        check_float(self, op)?;
        let s = self.sizes();
        let nd = s.len();
        if self.numel() == 0 {
            return Tensor::zeros(&s[..nd - 2], DType::Int64);
        }
        let (atol, rtol) = self.atol_rtol(atol, rtol)?;
        let (sv, max_val) = if hermitian {
            let w = self.linalg_eigvalsh("L")?.abs()?;
            let mx = w.amax(&[-1], true)?;
            (w, mx)
        } else {
            let w = self.linalg_svdvals()?;
            let mx = w.narrow(-1, 0, 1)?;
            (w, mx)
        };
        let tol = atol
            .unsqueeze(-1)?
            .maximum(&rtol.unsqueeze(-1)?.mul(&max_val)?)?;
        sv.gt(&tol)?.sum(Some(&[-1]), false, Some(DType::Int64))
    }

    /// `linalg.matrix_rank` with float tolerances.
    pub fn linalg_matrix_rank_f(
        &self,
        atol: Option<f64>,
        rtol: Option<f64>,
        hermitian: bool,
    ) -> Result<Tensor> {
        let (a, r) = (tol_tensor(atol)?, tol_tensor(rtol)?);
        self.linalg_matrix_rank(a.as_ref(), r.as_ref(), hermitian)
    }

    /// `linalg.matrix_norm(A, ord, dim, keepdim, dtype)`.
    pub fn linalg_matrix_norm(
        &self,
        ord: MatrixNormOrd,
        dim: &[i64],
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let op = "linalg.matrix_norm";
        check_matrix(self, op)?;
        if dim.len() != 2 {
            return Err(Error::runtime(format!(
                "{op}: dim must be a 2-tuple. Got {}",
                dim.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        }
        let nd = self.dim();
        let d0 = wrap_dim(dim[0], nd)?;
        let d1 = wrap_dim(dim[1], nd)?;
        if d0 == d1 {
            return Err(Error::runtime(format!(
                "{op}: dims must be different. Got ({}, {})",
                dim[0], dim[1]
            )));
        }
        let x = match dtype {
            Some(d) => self.to_dtype(d, false)?,
            None => self.clone(),
        };
        check_float(&x, op)?;
        let (d0, d1) = (d0 as i64, d1 as i64);
        let squeeze = |t: Tensor| -> Result<Tensor> {
            if keepdim {
                Ok(t)
            } else {
                t.squeeze_dims(&[d0, d1])
            }
        };
        match ord {
            MatrixNormOrd::Fro => x.norm(None, Some(&[d0, d1]), keepdim, None),
            MatrixNormOrd::Num(o) if o.abs() == 1.0 || o.is_infinite() => {
                // ord 1/-1: max/min over columns of the absolute column sums; inf/-inf: rows.
                let (sum_dim, pick_dim) = if o.abs() == 1.0 { (d0, d1) } else { (d1, d0) };
                let sums = x.abs()?.sum(Some(&[sum_dim]), true, None)?;
                let picked = if o > 0.0 {
                    sums.amax(&[pick_dim], true)?
                } else {
                    sums.amin(&[pick_dim], true)?
                };
                squeeze(picked)
            }
            MatrixNormOrd::Nuc | MatrixNormOrd::Num(_) => {
                if let MatrixNormOrd::Num(o) = ord {
                    if o.abs() != 2.0 {
                        return Err(Error::runtime(format!("{op}: Order {o} not supported.")));
                    }
                }
                // Move the two dims last, reduce the singular values, put them back.
                let mut order: Vec<i64> = (0..nd as i64).filter(|&i| i != d0 && i != d1).collect();
                order.extend([d0, d1]);
                let sv = x.permute(&order)?.linalg_svdvals()?;
                let r = match ord {
                    MatrixNormOrd::Nuc => sv.sum(Some(&[-1]), false, None)?,
                    MatrixNormOrd::Num(o) if o > 0.0 => sv.amax(&[-1], false)?,
                    _ => sv.amin(&[-1], false)?,
                };
                if keepdim {
                    let (lo, hi) = (d0.min(d1), d0.max(d1));
                    r.unsqueeze(lo)?.unsqueeze(hi)
                } else {
                    Ok(r)
                }
            }
        }
    }

    /// `linalg.norm(A, ord, dim, keepdim, dtype)` with a numeric (or absent) `ord`: a matrix
    /// norm when `ord` is given with two dims (or a 2-d input and no dims), else a vector norm.
    pub fn linalg_norm(
        &self,
        ord: Option<Scalar>,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        if let Some(d) = dim {
            if d.len() != 1 && d.len() != 2 {
                return Err(Error::runtime(format!(
                    "linalg.norm: If dim is specified, it must be of length 1 or 2. Got {d:?}"
                )));
            }
        } else if ord.is_some() && self.dim() != 1 && self.dim() != 2 {
            return Err(Error::runtime(format!(
                "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {}D.",
                self.dim()
            )));
        }
        match (ord, dim) {
            (Some(o), Some(d)) if d.len() == 2 => {
                self.linalg_matrix_norm(MatrixNormOrd::Num(o.to_f64()), d, keepdim, dtype)
            }
            (Some(o), None) if self.dim() == 2 => {
                self.linalg_matrix_norm(MatrixNormOrd::Num(o.to_f64()), &[0, 1], keepdim, dtype)
            }
            _ => self.norm(Some(ord.unwrap_or(Scalar::Float(2.0))), dim, keepdim, dtype),
        }
    }

    /// `linalg.norm(A, ord: str, dim, keepdim, dtype)`.
    pub fn linalg_norm_str(
        &self,
        ord: &str,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let ord = parse_str_ord(ord, "linalg.norm")?;
        match dim {
            Some(d) => self.linalg_matrix_norm(ord, d, keepdim, dtype),
            None => {
                if self.dim() != 2 {
                    return Err(Error::runtime(format!(
                        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {}D.",
                        self.dim()
                    )));
                }
                self.linalg_matrix_norm(ord, &[0, 1], keepdim, dtype)
            }
        }
    }

    /// `linalg.cond(A, p)`: `p` absent or ±2 uses singular values; other orders use
    /// `norm(A) * norm(inv(A))` (infinite for singular matrices).
    pub fn linalg_cond(&self, p: Option<MatrixNormOrd>) -> Result<Tensor> {
        let op = "linalg.cond";
        check_matrix(self, op)?;
        check_float(self, op)?;
        match p {
            None | Some(MatrixNormOrd::Num(2.0)) | Some(MatrixNormOrd::Num(-2.0)) => {
                let sv = self.linalg_svdvals()?;
                let k = *sv.sizes().last().unwrap_or(&0);
                if k == 0 {
                    let s = self.sizes();
                    return Tensor::zeros(&s[..s.len() - 2], self.dtype());
                }
                let first = sv.select(-1, 0)?;
                let last = sv.select(-1, k - 1)?;
                if p == Some(MatrixNormOrd::Num(-2.0)) {
                    last.div(&first)
                } else {
                    first.div(&last)
                }
            }
            Some(ord) => {
                check_square(self, op)?;
                let (inv, info) = self.linalg_inv_ex(false)?;
                let bad = info
                    .gt_scalar(Scalar::Int(0))?
                    .unsqueeze(-1)?
                    .unsqueeze(-1)?;
                let inv = crate::where_(
                    &bad,
                    Operand::Scalar(Scalar::Float(f64::INFINITY)),
                    Operand::Tensor(&inv),
                )?;
                self.linalg_matrix_norm(ord, &[-2, -1], false, None)?
                    .mul(&inv.linalg_matrix_norm(ord, &[-2, -1], false, None)?)
            }
        }
    }

    /// `linalg.matrix_power(A, n)` by repeated squaring (ATen's order of products).
    pub fn linalg_matrix_power(&self, n: i64) -> Result<Tensor> {
        check_square(self, "linalg.matrix_power")?;
        if n == 0 {
            let s = self.sizes();
            let k = s[s.len() - 1];
            let eye = crate::ops::factory::eye(k, None, Some(self.dtype()))?;
            return eye.expand(&s, false)?.contiguous()?.clone_tensor();
        }
        let (a, mut n) = if n < 0 {
            (self.linalg_inv()?, n.unsigned_abs())
        } else {
            (self.clone(), n as u64)
        };
        match n {
            1 => return a.clone_tensor(),
            2 => return a.matmul(&a),
            3 => return a.matmul(&a)?.matmul(&a),
            _ => {}
        }
        let mut z: Option<Tensor> = None;
        let mut result: Option<Tensor> = None;
        while n > 0 {
            let bit = n % 2;
            n /= 2;
            let zz = match &z {
                Some(z) => z.matmul(z)?,
                None => a.clone(),
            };
            if bit == 1 {
                result = Some(match &result {
                    Some(r) => r.matmul(&zz)?,
                    None => zz.clone(),
                });
            }
            z = Some(zz);
        }
        result.ok_or_else(|| Error::runtime("linalg.matrix_power: empty power"))
    }

    /// `linalg.matrix_exp(A)` (Padé 13 with scaling and squaring, in f64).
    pub fn linalg_matrix_exp(&self) -> Result<Tensor> {
        let op = "linalg.matrix_exp";
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let n = self.sizes()[self.dim() - 1] as usize;
            let rs = map_mats(b.mats, |a| {
                let a = Mat { r: a.r, c: a.c, d: a.d.iter().map(|x| x.f64()).collect::<Vec<f64>>() };
                let e = expm(&a);
                Mat { r: n, c: n, d: e.d.iter().map(|x| T::of(*x)).collect::<Vec<T>>() }
            });
            rebatch(&b.batch, &rs, n, n)
        })
    }

    /// `linalg.polar(A)`: `(U, H)` with `A = U H`, `U` with orthonormal columns and `H`
    /// symmetric positive semi-definite (`m >= n`).
    pub fn linalg_polar(&self) -> Result<(Tensor, Tensor)> {
        let op = "linalg.polar";
        check_matrix(self, op)?;
        let s = self.sizes();
        let (m, n) = (s[s.len() - 2] as usize, s[s.len() - 1] as usize);
        if m < n {
            return Err(Error::runtime(format!(
                "{op}: input must have at least as many rows as columns, but got {m} by {n} matrices"
            )));
        }
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let rs = map_mats(b.mats, |a| {
                let r = svd(&a, false);
                let u = r.u.matmul(&r.vt);
                let mut h = Mat::<f64>::zeros(n, n);
                for i in 0..n {
                    for j in 0..n {
                        let mut acc = 0.0;
                        for (k, s) in r.s.iter().enumerate() {
                            acc += r.vt[(k, i)] * s * r.vt[(k, j)];
                        }
                        h[(i, j)] = acc;
                    }
                }
                let conv = |x: Mat<f64>| Mat { r: x.r, c: x.c, d: x.d.into_iter().map(T::of).collect::<Vec<T>>() };
                (conv(u), conv(h))
            });
            let us: Vec<Mat<T>> = rs.iter().map(|r| r.0.clone()).collect();
            let hs: Vec<Mat<T>> = rs.into_iter().map(|r| r.1).collect();
            Ok((rebatch(&b.batch, &us, m, n)?, rebatch(&b.batch, &hs, n, n)?))
        })
    }

    /// `linalg.matrix_sqrth(A)`: the symmetric square root from the lower triangle, negative
    /// eigenvalues clamped to zero.
    pub fn linalg_matrix_sqrth(&self) -> Result<Tensor> {
        let op = "linalg.matrix_sqrth";
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let n = self.sizes()[self.dim() - 1] as usize;
            let rs = map_mats(b.mats, |a| {
                let (w, v, _) = syev(&a, false, true);
                let v = v.unwrap_or_else(|| Mat::zeros(n, n));
                let mut out = Mat::<T>::zeros(n, n);
                for i in 0..n {
                    for j in 0..n {
                        let mut acc = 0.0;
                        for (k, wk) in w.iter().enumerate() {
                            acc += v[(i, k)].f64() * wk.f64().max(0.0).sqrt() * v[(j, k)].f64();
                        }
                        out[(i, j)] = T::of(acc);
                    }
                }
                out
            });
            rebatch(&b.batch, &rs, n, n)
        })
    }

    /// `linalg.cross(a, b, dim)`: the cross product of broadcast 3-vectors along `dim`.
    pub fn linalg_cross(&self, other: &Tensor, dim: i64) -> Result<Tensor> {
        if self.dim() != other.dim() {
            return Err(Error::runtime(
                "linalg.cross: inputs must have the same number of dimensions.",
            ));
        }
        let shape = crate::shape::broadcast_shapes(&self.sizes(), &other.sizes())?;
        let d = wrap_dim(dim, shape.len())?;
        let (sa, sb) = (self.sizes(), other.sizes());
        if sa[d] != 3 || sb[d] != 3 {
            return Err(Error::runtime(format!(
                "linalg.cross: inputs dimension {dim} must have length 3. Got {} and {}",
                sa[d], sb[d]
            )));
        }
        let a = self.expand(&shape, false)?;
        let b = other.expand(&shape, false)?;
        let d = d as i64;
        let c = |t: &Tensor, i: i64| t.select(d, i);
        let x = c(&a, 1)?
            .mul(&c(&b, 2)?)?
            .sub(&c(&a, 2)?.mul(&c(&b, 1)?)?, ONE)?;
        let y = c(&a, 2)?
            .mul(&c(&b, 0)?)?
            .sub(&c(&a, 0)?.mul(&c(&b, 2)?)?, ONE)?;
        let z = c(&a, 0)?
            .mul(&c(&b, 1)?)?
            .sub(&c(&a, 1)?.mul(&c(&b, 0)?)?, ONE)?;
        crate::stack(&[x, y, z], d)
    }

    /// `linalg.vander(x, N)`: `[..., n, N]` increasing powers of `x` (by cumulative product).
    pub fn linalg_vander(&self, n: Option<i64>) -> Result<Tensor> {
        let x = if self.dim() == 0 {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let mut shape = x.sizes().to_vec();
        let n = n.unwrap_or(*shape.last().unwrap_or(&0));
        if n <= 1 {
            return Err(Error::runtime("N must be greater than 1."));
        }
        shape.push(n - 1);
        let result = x.unsqueeze(-1)?.expand(&shape, false)?.cumprod(-1, None)?;
        *shape.last_mut().unwrap_or(&mut 0) = 1;
        let ones = crate::ops::factory::ones(&shape, Some(result.dtype()))?;
        crate::cat(&[ones, result], -1)
    }

    /// `linalg.vecdot(x, y, dim)`: `sum(x * y, dim)` over broadcast operands.
    pub fn linalg_vecdot(&self, y: &Tensor, dim: i64) -> Result<Tensor> {
        if self.dtype() != y.dtype() {
            return Err(Error::runtime(format!(
                "linalg.vecdot: Expected x and y to have the same dtype, but found x of type {} and y of type {} instead",
                self.dtype().scalar_type_name(),
                y.dtype().scalar_type_name()
            )));
        }
        self.mul(y)?.sum(Some(&[dim]), false, None)
    }

    /// `tensordot(a, b, dims_a, dims_b)`: contracts the paired dimensions.
    pub fn tensordot(&self, other: &Tensor, dims_a: &[i64], dims_b: &[i64]) -> Result<Tensor> {
        if dims_a.len() != dims_b.len() {
            return Err(Error::runtime(
                "both dimension lists should have same length",
            ));
        }
        let (na, nb) = (self.dim(), other.dim());
        let (mut a, mut b) = (self.clone(), other.clone());
        let mut ca = Vec::new();
        let mut cb = Vec::new();
        let mut size = 1i64;
        for (&x, &y) in dims_a.iter().zip(dims_b) {
            let (x, y) = (wrap_dim(x, na)?, wrap_dim(y, nb)?);
            let (sx, sy) = (a.sizes()[x], b.sizes()[y]);
            // A size-1 side broadcasts, as in ATen: the other side is summed over that dim.
            if sy == 1 {
                a = a.sum(Some(&[x as i64]), true, Some(a.dtype()))?;
            } else if sx == 1 {
                b = b.sum(Some(&[y as i64]), true, Some(b.dtype()))?;
            } else if sx != sy {
                return Err(Error::runtime(format!(
                    "contracted dimensions need to match, but first has size {sx} in dim {x} and second has size {sy} in dim {y}"
                )));
            }
            size *= a.sizes()[x];
            ca.push(x);
            cb.push(y);
        }
        let (sa, sb) = (a.sizes(), b.sizes());
        let free_a: Vec<usize> = (0..na).filter(|d| !ca.contains(d)).collect();
        let free_b: Vec<usize> = (0..nb).filter(|d| !cb.contains(d)).collect();
        let mut pa: Vec<i64> = free_a.iter().map(|&d| d as i64).collect();
        pa.extend(ca.iter().map(|&d| d as i64));
        let mut pb: Vec<i64> = cb.iter().map(|&d| d as i64).collect();
        pb.extend(free_b.iter().map(|&d| d as i64));
        let rows: i64 = free_a.iter().map(|&d| sa[d]).product();
        let cols: i64 = free_b.iter().map(|&d| sb[d]).product();
        let a2 = a.permute(&pa)?.reshape(&[rows, size])?;
        let b2 = b.permute(&pb)?.reshape(&[size, cols])?;
        let mut shape: Vec<i64> = free_a.iter().map(|&d| sa[d]).collect();
        shape.extend(free_b.iter().map(|&d| sb[d]));
        a2.mm(&b2)?.reshape(&shape)
    }

    /// `inner(a, b)`: the product over the last dimensions (`a * b` for a 0-dim operand).
    pub fn inner(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() == 0 || other.dim() == 0 {
            return self.mul(other);
        }
        let (sa, sb) = (self.sizes(), other.sizes());
        if sa[sa.len() - 1] != sb[sb.len() - 1] {
            return Err(Error::runtime(format!(
                "inner() the last dimension must match on both input tensors but got shapes {:?} and {:?}",
                sa.as_slice(),
                sb.as_slice()
            )));
        }
        self.tensordot(other, &[-1], &[-1])
    }

    /// `kron(a, b)`: the Kronecker product.
    pub fn kron(&self, other: &Tensor) -> Result<Tensor> {
        let nd = self.dim().max(other.dim());
        let pad = |t: &Tensor| -> Result<Tensor> {
            let mut s = vec![1i64; nd - t.dim()];
            s.extend_from_slice(&t.sizes());
            t.reshape(&s)
        };
        let (a, b) = (pad(self)?, pad(other)?);
        let (sa, sb) = (a.sizes(), b.sizes());
        let mut ea = Vec::with_capacity(2 * nd);
        let mut eb = Vec::with_capacity(2 * nd);
        let mut out = Vec::with_capacity(nd);
        for i in 0..nd {
            ea.extend([sa[i], 1]);
            eb.extend([1, sb[i]]);
            out.push(sa[i] * sb[i]);
        }
        a.reshape(&ea)?.mul(&b.reshape(&eb)?)?.reshape(&out)
    }

    /// `addr(vec1, vec2, beta, alpha)`: `beta * self + alpha * outer(vec1, vec2)` (`self`
    /// ignored when `beta` is zero).
    pub fn addr(
        &self,
        vec1: &Tensor,
        vec2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
    ) -> Result<Tensor> {
        for (v, name) in [(vec1, "vec1"), (vec2, "vec2")] {
            if v.dim() != 1 {
                return Err(Error::runtime(format!(
                    "addr: Expected 1-D argument {name}, but got {}-D",
                    v.dim()
                )));
            }
        }
        let outer = vec1.unsqueeze(1)?.mul(&vec2.unsqueeze(0)?)?;
        let shape = [vec1.numel() as i64, vec2.numel() as i64];
        let base = self.expand(&shape, true).map_err(|_| {
            Error::runtime(format!(
                "The expanded size of the tensor must match the existing size at non-singleton dimension, self: {:?}, outer: {:?}",
                self.sizes().as_slice(),
                shape
            ))
        })?;
        if outer.dtype() == DType::Bool || base.dtype() == DType::Bool {
            let scaled = if alpha.to_f64() != 0.0 {
                outer
            } else {
                outer.mul_scalar(Scalar::Int(0))?
            };
            return if beta.to_f64() != 0.0 {
                base.logical_or(&scaled)
            } else {
                Ok(scaled)
            };
        }
        let scaled = outer.mul_scalar(alpha)?;
        if beta.to_f64() == 0.0 {
            return scaled.add(&Tensor::zeros(&shape, base.dtype())?, ONE);
        }
        base.mul_scalar(beta)?.add(&scaled, ONE)
    }

    /// `linalg.tensorinv(A, ind)`.
    pub fn linalg_tensorinv(&self, ind: i64) -> Result<Tensor> {
        if ind <= 0 {
            return Err(Error::runtime(format!(
                "Expected a strictly positive integer for 'ind', but got {ind}"
            )));
        }
        let s = self.sizes();
        let ind = (ind as usize).min(s.len());
        let (front, back) = (&s[..ind], &s[ind..]);
        let pf: i64 = front.iter().product();
        let pb: i64 = back.iter().product();
        if pf != pb {
            return Err(Error::runtime(format!(
                "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {pb} != {pf}"
            )));
        }
        let (inv, info) = self.reshape(&[pf, pb])?.linalg_inv_ex(false)?;
        if info.to_vec::<i32>().iter().any(|&i| i != 0) {
            return Err(Error::runtime(
                "Failed to invert the input tensor, because it is singular.",
            ));
        }
        let mut shape = back.to_vec();
        shape.extend_from_slice(front);
        inv.reshape(&shape)
    }

    /// `linalg.tensorsolve(A, B, dims)`.
    pub fn linalg_tensorsolve(&self, b: &Tensor, dims: Option<&[i64]>) -> Result<Tensor> {
        let nd = self.dim();
        let a = match dims {
            Some(ds) if !ds.is_empty() => {
                let moved: Vec<usize> =
                    ds.iter().map(|&d| wrap_dim(d, nd)).collect::<Result<_>>()?;
                let mut order: Vec<i64> = (0..nd)
                    .filter(|d| !moved.contains(d))
                    .map(|d| d as i64)
                    .collect();
                order.extend(moved.iter().map(|&d| d as i64));
                self.permute(&order)?
            }
            _ => self.clone(),
        };
        let s = a.sizes();
        let bd = b.dim().min(s.len());
        let result_shape = s[bd..].to_vec();
        let rp: i64 = result_shape.iter().product();
        let op: i64 = s[..bd].iter().product();
        if rp != op {
            return Err(Error::runtime(format!(
                "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got {rp} != {op}"
            )));
        }
        a.reshape(&[op, rp])?
            .linalg_solve(&b.reshape(&[op])?, true)?
            .reshape(&result_shape)
    }
}

/// `linalg.multi_dot(tensors)` (and `chain_matmul`): the chained product in the cheapest
/// order; the first and last operands may be vectors.
pub fn linalg_multi_dot(tensors: &[Tensor], op: &str) -> Result<Tensor> {
    let n = tensors.len();
    if n < 2 {
        return Err(Error::runtime(format!(
            "{op}(): expected at least 2 tensors but got {n}"
        )));
    }
    let first_vec = tensors[0].dim() == 1;
    let last_vec = tensors[n - 1].dim() == 1;
    let mut mats: Vec<Tensor> = Vec::with_capacity(n);
    for (i, t) in tensors.iter().enumerate() {
        let m = if i == 0 && first_vec {
            t.unsqueeze(0)?
        } else if i == n - 1 && last_vec {
            t.unsqueeze(1)?
        } else {
            t.clone()
        };
        if m.dim() != 2 {
            let which = if i == 0 {
                "first"
            } else if i == n - 1 {
                "last"
            } else {
                ""
            };
            return Err(Error::runtime(if which.is_empty() {
                format!("{op}(): tensor {i} must be 2D but got {}D", t.dim())
            } else {
                format!(
                    "{op}(): the {which} tensor must be 1D or 2D but got {}D",
                    t.dim()
                )
            }));
        }
        if m.dtype() != tensors[0].dtype() {
            return Err(Error::runtime(format!(
                "{op}(): all tensors must have be the same dtype but tensor 0 is {} and tensor {i} {}",
                tensors[0].dtype().scalar_type_name(),
                m.dtype().scalar_type_name()
            )));
        }
        if i > 0 && mats[i - 1].sizes()[1] != m.sizes()[0] {
            let (p, q) = (mats[i - 1].sizes(), m.sizes());
            return Err(Error::runtime(format!(
                "{op}(): tensors {} and {i} with shapes [{}, {}] and [{}, {}] cannot be multiplied",
                i - 1,
                p[0],
                p[1],
                q[0],
                q[1]
            )));
        }
        mats.push(m);
    }
    let result = if n == 2 {
        mats[0].mm(&mats[1])?
    } else {
        // Matrix-chain order by dynamic programming over the dimensions.
        let dims: Vec<i64> = std::iter::once(mats[0].sizes()[0])
            .chain(mats.iter().map(|m| m.sizes()[1]))
            .collect();
        let mut cost = vec![vec![0i128; n]; n];
        let mut split = vec![vec![0usize; n]; n];
        for len in 1..n {
            for i in 0..n - len {
                let j = i + len;
                cost[i][j] = i128::MAX;
                for k in i..j {
                    let c =
                        cost[i][k] + cost[k + 1][j] + (dims[i] * dims[k + 1] * dims[j + 1]) as i128;
                    if c < cost[i][j] {
                        cost[i][j] = c;
                        split[i][j] = k;
                    }
                }
            }
        }
        fn chain(m: &[Tensor], s: &[Vec<usize>], i: usize, j: usize) -> Result<Tensor> {
            if i == j {
                return Ok(m[i].clone());
            }
            let k = s[i][j];
            chain(m, s, i, k)?.mm(&chain(m, s, k + 1, j)?)
        }
        chain(&mats, &split, 0, n - 1)?
    };
    match (first_vec, last_vec) {
        (true, true) => result.reshape(&[]),
        (true, false) => result.squeeze_dim(0),
        (false, true) => result.squeeze_dim(1),
        (false, false) => Ok(result),
    }
}

/// `'fro'` or `'nuc'`.
pub fn parse_str_ord(ord: &str, op: &str) -> Result<MatrixNormOrd> {
    match ord {
        "fro" => Ok(MatrixNormOrd::Fro),
        "nuc" => Ok(MatrixNormOrd::Nuc),
        _ => Err(Error::runtime(format!("{op}: Order {ord} not supported."))),
    }
}

/// `exp(A)` by Padé [13/13] with scaling and squaring (Higham 2005).
fn expm(a: &Mat<f64>) -> Mat<f64> {
    let n = a.r;
    if n == 0 {
        return a.clone();
    }
    let norm1 = (0..n)
        .map(|j| (0..n).map(|i| a[(i, j)].abs()).sum::<f64>())
        .fold(0.0, f64::max);
    if !norm1.is_finite() {
        return Mat {
            r: n,
            c: n,
            d: vec![f64::NAN; n * n],
        };
    }
    let theta = 5.371920351148152;
    let s = if norm1 > theta {
        (norm1 / theta).log2().ceil() as i32
    } else {
        0
    };
    let scale = 0.5f64.powi(s);
    let a = Mat {
        r: n,
        c: n,
        d: a.d.iter().map(|x| x * scale).collect(),
    };
    let b = [
        64764752532480000.0,
        32382376266240000.0,
        7771770303897600.0,
        1187353796428800.0,
        129060195264000.0,
        10559470521600.0,
        670442572800.0,
        33522128640.0,
        1323241920.0,
        40840800.0,
        960960.0,
        16380.0,
        182.0,
        1.0,
    ];
    let eye = Mat::<f64>::eye(n, n);
    let a2 = a.matmul(&a);
    let a4 = a2.matmul(&a2);
    let a6 = a4.matmul(&a2);
    let lin = |terms: &[(f64, &Mat<f64>)]| {
        let mut m = Mat::<f64>::zeros(n, n);
        for (c, t) in terms {
            for (x, y) in m.d.iter_mut().zip(&t.d) {
                *x += c * y;
            }
        }
        m
    };
    let u_inner = a6.matmul(&lin(&[(b[13], &a6), (b[11], &a4), (b[9], &a2)]));
    let u = a.matmul(&lin(&[
        (1.0, &u_inner),
        (b[7], &a6),
        (b[5], &a4),
        (b[3], &a2),
        (b[1], &eye),
    ]));
    let v_inner = a6.matmul(&lin(&[(b[12], &a6), (b[10], &a4), (b[8], &a2)]));
    let v = lin(&[
        (1.0, &v_inner),
        (b[6], &a6),
        (b[4], &a4),
        (b[2], &a2),
        (b[0], &eye),
    ]);
    let p = lin(&[(1.0, &v), (1.0, &u)]);
    let q = lin(&[(1.0, &v), (-1.0, &u)]);
    let f = getrf(q);
    let mut r = getrs(&f.lu, &f.piv, &p, false);
    for _ in 0..s {
        r = r.matmul(&r);
    }
    r
}

/// `torch._linalg_check_errors(info, api_name, is_matrix)`: raises ATen's message for the first
/// nonzero entry of a LAPACK-style `info` tensor (with a batch-element prefix unless
/// `is_matrix`).
pub fn linalg_check_errors(info: &Tensor, api: &str, is_matrix: bool) -> Result<()> {
    let infos: Vec<i32> = info.to_vec::<i64>().into_iter().map(|v| v as i32).collect();
    super::decompose::check_infos(&infos, !is_matrix, api)
}

impl Tensor {
    /// `torch.vander(x, N, increasing)`: the `[n, N]` Vandermonde matrix of a vector, powers
    /// decreasing unless `increasing`; integer and bool inputs give `int64`, as ATen's cumprod.
    pub fn vander(&self, n: Option<i64>, increasing: bool) -> Result<Tensor> {
        if self.dim() != 1 {
            return Err(Error::runtime("x must be a one-dimensional tensor."));
        }
        let len = self.sizes()[0];
        let n = n.unwrap_or(len);
        if n < 0 {
            return Err(Error::runtime("N must be non-negative."));
        }
        let dt = crate::promote::promote_types(self.dtype(), DType::Int64);
        let x = self.to_dtype(dt, false)?;
        let result = if n == 0 {
            Tensor::zeros(&[len, 0], dt)?
        } else {
            let ones = crate::ops::factory::ones(&[len, 1], Some(dt))?;
            if n == 1 {
                ones
            } else {
                let powers = x
                    .unsqueeze(1)?
                    .expand(&[len, n - 1], false)?
                    .cumprod(1, None)?;
                crate::cat(&[ones, powers], 1)?
            }
        };
        if increasing {
            Ok(result)
        } else {
            result.flip(&[1])
        }
    }

    /// `torch.norm_except_dim(v, pow, dim)` (weight norm's helper): the `pow`-norm over every
    /// dimension but `dim`, kept as size-1 dimensions; `dim == -1` means the whole tensor.
    pub fn norm_except_dim(&self, pow: i64, dim: i64) -> Result<Tensor> {
        let p = Some(Scalar::Int(pow));
        if dim == -1 {
            return self.norm(p, None, false, None);
        }
        let d = wrap_dim(dim, self.dim())?;
        let sizes = self.sizes();
        let mut out = vec![1i64; sizes.len()];
        out[d] = sizes[d];
        let rest: i64 = (0..sizes.len())
            .filter(|&i| i != d)
            .map(|i| sizes[i])
            .product();
        self.transpose(0, d as i64)?
            .contiguous()?
            .reshape(&[sizes[d], rest])?
            .norm(p, Some(&[1]), false, None)?
            .reshape(&out)
    }

    /// `aten::linalg__powsum(x, ord, dim, keepdim, dtype)`: `sum(|x| ** ord)` over `dim`
    /// (everything when absent), the un-rooted vector norm.
    pub fn linalg_powsum(
        &self,
        ord: Scalar,
        dim: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let x = match dtype {
            Some(dt) => self.to_dtype(dt, false)?,
            None => self.clone(),
        };
        x.abs()?.pow_scalar(ord)?.sum(dim, keepdim, None)
    }

    /// `Tensor.H` (`aten::matrix_H`): the transpose of a matrix (conjugation is the identity on
    /// real dtypes); a 0-dim tensor is returned as is.
    pub fn matrix_h(&self) -> Result<Tensor> {
        match self.dim() {
            0 => Ok(self.clone()),
            2 => self.transpose(0, 1),
            n => Err(Error::runtime(format!(
                "tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expm_of_rotation_generator() {
        let a = Mat {
            r: 2,
            c: 2,
            d: vec![0.0, -1.0, 1.0, 0.0],
        };
        let e = expm(&a);
        let (c, s) = (1f64.cos(), 1f64.sin());
        for (x, y) in e.d.iter().zip([c, -s, s, c]) {
            assert!((x - y).abs() < 1e-14);
        }
        let big = Mat {
            r: 1,
            c: 1,
            d: vec![20.0],
        };
        assert!((expm(&big).d[0] / 20f64.exp() - 1.0).abs() < 1e-13);
    }
}
