//! `torch.linalg` and the legacy linear-algebra operators (`lu_solve`, `triangular_solve`,
//! `geqrf`, `ormqr`, `pinverse`, `logdet`, `addr`, `kron`, ...), bound to ts-tensor's
//! pure-Rust kernels under PyTorch's schemas.

use ts_tensor::{
    linalg_check_errors, linalg_multi_dot, parse_str_ord, DType, Error, MatrixNormOrd, Scalar,
    Tensor,
};

use super::{def, def_many};
use crate::registry::Registry;

fn num_ord(s: Scalar) -> MatrixNormOrd {
    MatrixNormOrd::Num(s.to_f64())
}

/// Registers the linear-algebra operators.
pub fn register(r: &Registry) {
    register_factorizations(r);
    register_solves(r);
    register_functions(r);
}

fn register_factorizations(r: &Registry) {
    def(r, "aten::linalg_lu_factor_ex", |a| {
        a.t(0)?.linalg_lu_factor_ex(a.b(1)?, a.b(2)?)
    });
    def(r, "aten::linalg_lu_factor", |a| {
        a.t(0)?.linalg_lu_factor(a.b(1)?)
    });
    def(r, "aten::_lu_with_info", |a| {
        a.t(0)?.linalg_lu_factor_ex(a.b(1)?, a.b(2)?)
    });
    def(r, "aten::linalg_lu", |a| a.t(0)?.linalg_lu(a.b(1)?));
    def(r, "aten::lu_unpack", |a| {
        a.t(0)?.lu_unpack(a.t(1)?, a.b(2)?, a.b(3)?)
    });
    def(r, "aten::linalg_cholesky_ex", |a| {
        a.t(0)?.linalg_cholesky_ex(a.b(1)?, a.b(2)?)
    });
    def(r, "aten::linalg_cholesky", |a| {
        a.t(0)?.linalg_cholesky(a.b(1)?)
    });
    def(r, "aten::geqrf", |a| a.t(0)?.geqrf());
    def_many(
        r,
        &["aten::linalg_householder_product", "aten::orgqr"],
        |a| a.t(0)?.linalg_householder_product(a.t(1)?),
    );
    def(r, "aten::ormqr", |a| {
        a.t(0)?.ormqr(a.t(1)?, a.t(2)?, a.b(3)?, a.b(4)?)
    });
    def(r, "aten::linalg_qr", |a| a.t(0)?.linalg_qr(a.str(1)?));
    def(r, "aten::linalg_eigh", |a| a.t(0)?.linalg_eigh(a.str(1)?));
    def(r, "aten::linalg_eig", |a| a.t(0)?.linalg_eig());
    def_many(r, &["aten::linalg_eigvals", "aten::_linalg_eigvals"], |a| {
        a.t(0)?.linalg_eigvals()
    });
    def(r, "aten::_linalg_eigh", |a| {
        let x = a.t(0)?;
        if a.b(2)? {
            x.linalg_eigh(a.str(1)?)
        } else {
            Ok((
                x.linalg_eigvalsh(a.str(1)?)?,
                Tensor::zeros(&[0], x.dtype())?,
            ))
        }
    });
    def(r, "aten::linalg_eigvalsh", |a| {
        a.t(0)?.linalg_eigvalsh(a.str(1)?)
    });
    def(r, "aten::linalg_svd", |a| a.t(0)?.linalg_svd(a.b(1)?));
    def(r, "aten::_linalg_svd", |a| {
        let x = a.t(0)?;
        if a.b(2)? {
            x.linalg_svd(a.b(1)?)
        } else {
            let e = Tensor::zeros(&[0], x.dtype())?;
            Ok((e.clone(), x.linalg_svdvals()?, e))
        }
    });
    def(r, "aten::linalg_svdvals", |a| a.t(0)?.linalg_svdvals());
    def(r, "aten::svd", |a| a.t(0)?.svd(a.b(1)?, a.b(2)?));
    def(r, "aten::linalg_ldl_factor_ex", |a| {
        a.t(0)?.linalg_ldl_factor_ex(a.b(1)?, a.b(2)?)
    });
    def(r, "aten::linalg_ldl_factor", |a| {
        let (ld, piv, _) = a.t(0)?.linalg_ldl_factor_ex(a.b(1)?, true)?;
        Ok((ld, piv))
    });
}

fn register_solves(r: &Registry) {
    def(r, "aten::linalg_solve_ex", |a| {
        a.t(0)?.linalg_solve_ex(a.t(1)?, a.b(2)?, a.b(3)?)
    });
    def(r, "aten::linalg_solve", |a| {
        a.t(0)?.linalg_solve(a.t(1)?, a.b(2)?)
    });
    def(r, "aten::linalg_inv_ex", |a| a.t(0)?.linalg_inv_ex(a.b(1)?));
    def_many(r, &["aten::linalg_inv", "aten::inverse"], |a| {
        a.t(0)?.linalg_inv()
    });
    def(r, "aten::linalg_lu_solve", |a| {
        a.t(0)?.linalg_lu_solve(a.t(1)?, a.t(2)?, a.b(3)?, a.b(4)?)
    });
    def(r, "aten::lu_solve", |a| {
        a.t(1)?.linalg_lu_solve(a.t(2)?, a.t(0)?, true, false)
    });
    def(r, "aten::linalg_solve_triangular", |a| {
        a.t(0)?
            .linalg_solve_triangular(a.t(1)?, a.b(2)?, a.b(3)?, a.b(4)?)
    });
    def(r, "aten::triangular_solve", |a| {
        a.t(0)?.triangular_solve(a.t(1)?, a.b(2)?, a.b(3)?, a.b(4)?)
    });
    def(r, "aten::cholesky_solve", |a| {
        a.t(0)?.cholesky_solve(a.t(1)?, a.b(2)?)
    });
    def(r, "aten::cholesky_inverse", |a| {
        a.t(0)?.cholesky_inverse(a.b(1)?)
    });
    def(r, "aten::linalg_ldl_solve", |a| {
        a.t(0)?.linalg_ldl_solve(a.t(1)?, a.t(2)?, a.b(3)?)
    });
    def(r, "aten::linalg_lstsq", |a| {
        a.t(0)?.linalg_lstsq(a.t(1)?, a.of(2)?, a.ostr(3)?)
    });
}

fn register_functions(r: &Registry) {
    def_many(r, &["aten::linalg_det", "aten::det"], |a| {
        a.t(0)?.linalg_det()
    });
    def(r, "aten::_linalg_det", |a| {
        let x = a.t(0)?;
        let (lu, piv, _) = x.linalg_lu_factor_ex(true, false)?;
        Ok((x.linalg_det()?, lu, piv))
    });
    def_many(r, &["aten::linalg_slogdet", "aten::slogdet"], |a| {
        a.t(0)?.linalg_slogdet()
    });
    def(r, "aten::_linalg_slogdet", |a| {
        let x = a.t(0)?;
        let (s, l) = x.linalg_slogdet()?;
        let (lu, piv, _) = x.linalg_lu_factor_ex(true, false)?;
        Ok((s, l, lu, piv))
    });
    def(r, "aten::logdet", |a| a.t(0)?.logdet());
    def(r, "aten::linalg_pinv.atol_rtol_tensor", |a| {
        a.t(0)?.linalg_pinv(a.ot(1)?, a.ot(2)?, a.b(3)?)
    });
    def(r, "aten::linalg_pinv.atol_rtol_float", |a| {
        a.t(0)?.linalg_pinv_f(a.of(1)?, a.of(2)?, a.b(3)?)
    });
    def(r, "aten::linalg_pinv", |a| {
        a.t(0)?.linalg_pinv_f(Some(0.0), Some(a.f(1)?), a.b(2)?)
    });
    def(r, "aten::linalg_pinv.rcond_tensor", |a| {
        let x = a.t(0)?;
        let zero = Tensor::scalar_tensor(Scalar::Float(0.0), DType::Float64)?;
        x.linalg_pinv(Some(&zero), Some(a.t(1)?), a.b(2)?)
    });
    def(r, "aten::pinverse", |a| {
        a.t(0)?.linalg_pinv_f(Some(0.0), Some(a.f(1)?), false)
    });
    def(r, "aten::linalg_matrix_rank.atol_rtol_tensor", |a| {
        a.t(0)?.linalg_matrix_rank(a.ot(1)?, a.ot(2)?, a.b(3)?)
    });
    def(r, "aten::linalg_matrix_rank.atol_rtol_float", |a| {
        a.t(0)?.linalg_matrix_rank_f(a.of(1)?, a.of(2)?, a.b(3)?)
    });
    def(r, "aten::linalg_matrix_rank", |a| {
        a.t(0)?
            .linalg_matrix_rank_f(Some(a.f(1)?), Some(0.0), a.b(2)?)
    });
    def(r, "aten::linalg_matrix_rank.tol_tensor", |a| {
        let zero = Tensor::scalar_tensor(Scalar::Float(0.0), DType::Float64)?;
        a.t(0)?
            .linalg_matrix_rank(Some(a.t(1)?), Some(&zero), a.b(2)?)
    });
    def(r, "aten::linalg_matrix_norm", |a| {
        a.t(0)?
            .linalg_matrix_norm(num_ord(a.s(1)?), &a.ints(2)?, a.b(3)?, a.dtype(4)?)
    });
    def(r, "aten::linalg_matrix_norm.str_ord", |a| {
        let ord = parse_str_ord(a.str(1)?, "linalg.matrix_norm")?;
        a.t(0)?
            .linalg_matrix_norm(ord, &a.ints(2)?, a.b(3)?, a.dtype(4)?)
    });
    def(r, "aten::linalg_norm", |a| {
        a.t(0)?
            .linalg_norm(a.os(1)?, a.oints(2)?.as_deref(), a.b(3)?, a.dtype(4)?)
    });
    def(r, "aten::linalg_norm.ord_str", |a| {
        a.t(0)?
            .linalg_norm_str(a.str(1)?, a.oints(2)?.as_deref(), a.b(3)?, a.dtype(4)?)
    });
    def(r, "aten::nuclear_norm", |a| {
        a.t(0)?
            .linalg_matrix_norm(MatrixNormOrd::Nuc, &[-2, -1], a.b(1)?, None)
    });
    def(r, "aten::nuclear_norm.dim", |a| {
        a.t(0)?
            .linalg_matrix_norm(MatrixNormOrd::Nuc, &a.ints(1)?, a.b(2)?, None)
    });
    def(r, "aten::linalg_cond", |a| {
        a.t(0)?.linalg_cond(a.os(1)?.map(num_ord))
    });
    def(r, "aten::linalg_cond.p_str", |a| {
        let ord = parse_str_ord(a.str(1)?, "linalg.cond")?;
        a.t(0)?.linalg_cond(Some(ord))
    });
    def_many(
        r,
        &["aten::linalg_matrix_power", "aten::matrix_power"],
        |a| a.t(0)?.linalg_matrix_power(a.int(1)?),
    );
    def_many(r, &["aten::linalg_matrix_exp", "aten::matrix_exp"], |a| {
        a.t(0)?.linalg_matrix_exp()
    });
    def(r, "aten::linalg_polar", |a| a.t(0)?.linalg_polar());
    def(r, "aten::linalg_matrix_sqrth", |a| {
        a.t(0)?.linalg_matrix_sqrth()
    });
    def(r, "aten::linalg_cross", |a| {
        a.t(0)?.linalg_cross(a.t(1)?, a.int(2)?)
    });
    def(r, "aten::cross", |a| {
        let (x, y) = (a.t(0)?, a.t(1)?);
        let dim = match a.oint(2)? {
            Some(d) => d,
            // The deprecated default: the first dimension of size 3.
            None => x
                .sizes()
                .iter()
                .position(|&s| s == 3)
                .map(|p| p as i64)
                .ok_or_else(|| Error::runtime("no dimension of size 3 in input"))?,
        };
        x.linalg_cross(y, dim)
    });
    def(r, "aten::linalg_diagonal", |a| {
        a.t(0)?.diagonal(a.int(1)?, a.int(2)?, a.int(3)?)
    });
    def(r, "aten::linalg_vander", |a| {
        a.t(0)?.linalg_vander(a.oint(1)?)
    });
    def(r, "aten::linalg_vecdot", |a| {
        a.t(0)?.linalg_vecdot(a.t(1)?, a.int(2)?)
    });
    def(r, "aten::linalg_multi_dot", |a| {
        linalg_multi_dot(&a.tensors(0)?, "multi_dot")
    });
    def(r, "aten::chain_matmul", |a| {
        let ts = a.tensors(0)?;
        if ts.len() == 1 {
            return ts[0].clone_tensor();
        }
        if ts.is_empty() {
            return Err(Error::runtime(
                "chain_matmul(): Expected one or more matrices",
            ));
        }
        linalg_multi_dot(&ts, "chain_matmul")
    });
    def(r, "aten::linalg_matmul", |a| a.t(0)?.matmul(a.t(1)?));
    def(r, "aten::linalg_tensorinv", |a| {
        a.t(0)?.linalg_tensorinv(a.int(1)?)
    });
    def(r, "aten::linalg_tensorsolve", |a| {
        a.t(0)?.linalg_tensorsolve(a.t(1)?, a.oints(2)?.as_deref())
    });
    def(r, "aten::tensordot", |a| {
        a.t(0)?.tensordot(a.t(1)?, &a.ints(2)?, &a.ints(3)?)
    });
    def(r, "aten::inner", |a| a.t(0)?.inner(a.t(1)?));
    def(r, "aten::kron", |a| a.t(0)?.kron(a.t(1)?));
    def(r, "aten::vdot", |a| a.t(0)?.dot(a.t(1)?));
    def(r, "aten::vander", |a| a.t(0)?.vander(a.oint(1)?, a.b(2)?));
    def_many(r, &["aten::matrix_H", "aten::matrix_H.a"], |a| {
        a.t(0)?.matrix_h()
    });
    def(r, "aten::norm.ScalarOpt_dtype", |a| {
        a.t(0)?.norm(a.os(1)?, None, false, a.dtype(2)?)
    });
    def(r, "aten::norm_except_dim", |a| {
        a.t(0)?.norm_except_dim(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::linalg__powsum", |a| {
        a.t(0)?
            .linalg_powsum(a.s(1)?, a.oints(2)?.as_deref(), a.b(3)?, a.dtype(4)?)
    });
    def(r, "aten::_linalg_check_errors", |a| {
        linalg_check_errors(a.t(0)?, a.str(1)?, a.b(2)?)
    });
    def(r, "aten::addr", |a| {
        a.t(0)?.addr(a.t(1)?, a.t(2)?, a.s(3)?, a.s(4)?)
    });
}
