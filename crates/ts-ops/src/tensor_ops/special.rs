//! Special functions and the float-valued elementwise operators built on
//! `ts_tensor::ops::special` (`lgamma`, `digamma`, `polygamma`, `mvlgamma`, `i0`, `sinc`,
//! `special_*`, `igamma`, `xlogy`, `hypot`, `copysign`, `ldexp`, `fmax`/`fmin`, `heaviside`,
//! the orthogonal polynomials) and the tensor overloads of `clamp_min`/`clamp_max`.

use ts_tensor::ops::special::{Polynomial, SpecialBinary};
use ts_tensor::{Operand, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

type Unary = fn(&Tensor) -> ts_tensor::Result<Tensor>;

/// Registers the special-function operators.
pub fn register(r: &Registry) {
    let unary: &[(&[&str], Unary)] = &[
        (&["aten::lgamma", "aten::special_gammaln"], Tensor::lgamma),
        (
            &[
                "aten::digamma",
                "aten::special_digamma",
                "aten::special_psi",
            ],
            Tensor::digamma,
        ),
        (&["aten::i0", "aten::special_i0"], Tensor::i0),
        (&["aten::special_i0e"], Tensor::special_i0e),
        (&["aten::special_i1"], Tensor::special_i1),
        (&["aten::special_i1e"], Tensor::special_i1e),
        (
            &["aten::special_modified_bessel_i0"],
            Tensor::special_modified_bessel_i0,
        ),
        (
            &["aten::special_modified_bessel_i1"],
            Tensor::special_modified_bessel_i1,
        ),
        (
            &["aten::special_modified_bessel_k0"],
            Tensor::special_modified_bessel_k0,
        ),
        (
            &["aten::special_modified_bessel_k1"],
            Tensor::special_modified_bessel_k1,
        ),
        (
            &["aten::special_scaled_modified_bessel_k0"],
            Tensor::special_scaled_modified_bessel_k0,
        ),
        (
            &["aten::special_scaled_modified_bessel_k1"],
            Tensor::special_scaled_modified_bessel_k1,
        ),
        (&["aten::special_bessel_j0"], Tensor::special_bessel_j0),
        (&["aten::special_bessel_j1"], Tensor::special_bessel_j1),
        (&["aten::special_bessel_y0"], Tensor::special_bessel_y0),
        (&["aten::special_bessel_y1"], Tensor::special_bessel_y1),
        (&["aten::special_erfcx"], Tensor::special_erfcx),
        (&["aten::special_airy_ai"], Tensor::special_airy_ai),
        (&["aten::special_ndtr"], Tensor::special_ndtr),
        (&["aten::special_ndtri"], Tensor::special_ndtri),
        (&["aten::special_log_ndtr"], Tensor::special_log_ndtr),
        (&["aten::sinc", "aten::special_sinc"], Tensor::sinc),
        (&["aten::special_entr"], Tensor::special_entr),
        (&["aten::deg2rad"], Tensor::deg2rad),
        (&["aten::rad2deg"], Tensor::rad2deg),
        (&["aten::isposinf"], Tensor::isposinf),
        (&["aten::isneginf"], Tensor::isneginf),
    ];
    for &(names, f) in unary {
        def_many(r, names, move |a| f(a.t(0)?));
    }
    def_many(r, &["aten::polygamma", "aten::special_polygamma"], |a| {
        a.t(1)?.polygamma(a.int(0)?)
    });
    def_many(r, &["aten::mvlgamma", "aten::special_multigammaln"], |a| {
        a.t(0)?.mvlgamma(a.int(1)?)
    });
    register_binary(r);
    def(r, "aten::fmax", |a| a.t(0)?.fmax_fmin(a.t(1)?, true));
    def(r, "aten::fmin", |a| a.t(0)?.fmax_fmin(a.t(1)?, false));
    def(r, "aten::frexp.Tensor", |a| a.t(0)?.frexp());
    def(r, "aten::renorm", |a| {
        a.t(0)?.renorm(a.s(1)?, a.int(2)?, a.s(3)?)
    });
    def(r, "aten::heaviside", |a| a.t(0)?.heaviside(a.t(1)?));
    def(r, "aten::clamp_min.Tensor", |a| {
        a.t(0)?.clamp_tensor(Some(a.t(1)?), None)
    });
    def(r, "aten::clamp_max.Tensor", |a| {
        a.t(0)?.clamp_tensor(None, Some(a.t(1)?))
    });
}

/// A tensor-or-number argument as a promotion operand.
fn operand(a: &Args, i: usize) -> ts_tensor::Result<Operand<'_>> {
    match a.v(i)? {
        ts_core::IValue::Tensor(t) => Ok(Operand::Tensor(t)),
        _ => Ok(Operand::Scalar(a.s(i)?)),
    }
}

/// Registers `name` (Tensor, Tensor) and the given Scalar overload names for `f`.
fn binary(r: &Registry, names: &[&str], f: SpecialBinary) {
    def_many(r, names, move |a| f.call(operand(a, 0)?, operand(a, 1)?));
}

fn register_binary(r: &Registry) {
    binary(
        r,
        &["aten::igamma", "aten::special_gammainc"],
        SpecialBinary::Igamma,
    );
    binary(
        r,
        &["aten::igammac", "aten::special_gammaincc"],
        SpecialBinary::Igammac,
    );
    binary(
        r,
        &[
            "aten::special_zeta",
            "aten::special_zeta.other_scalar",
            "aten::special_zeta.self_scalar",
        ],
        SpecialBinary::Zeta,
    );
    binary(
        r,
        &[
            "aten::xlogy.Tensor",
            "aten::xlogy.Scalar_Other",
            "aten::xlogy.Scalar_Self",
            "aten::special_xlogy",
            "aten::special_xlogy.other_scalar",
            "aten::special_xlogy.self_scalar",
        ],
        SpecialBinary::Xlogy,
    );
    binary(
        r,
        &[
            "aten::special_xlog1py",
            "aten::special_xlog1py.other_scalar",
            "aten::special_xlog1py.self_scalar",
        ],
        SpecialBinary::Xlog1py,
    );
    binary(r, &["aten::hypot"], SpecialBinary::Hypot);
    binary(
        r,
        &["aten::copysign.Tensor", "aten::copysign.Scalar"],
        SpecialBinary::Copysign,
    );
    binary(r, &["aten::ldexp.Tensor"], SpecialBinary::Ldexp);
    binary(r, &["aten::logaddexp2"], SpecialBinary::Logaddexp2);
    for family in [
        "chebyshev_polynomial_t",
        "chebyshev_polynomial_u",
        "chebyshev_polynomial_v",
        "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u",
        "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w",
        "hermite_polynomial_h",
        "hermite_polynomial_he",
        "laguerre_polynomial_l",
        "legendre_polynomial_p",
    ] {
        let Some((p, shifted)) = Polynomial::from_name(family) else {
            continue;
        };
        let names = [
            format!("aten::special_{family}"),
            format!("aten::special_{family}.x_scalar"),
            format!("aten::special_{family}.n_scalar"),
        ];
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        binary(r, &names, SpecialBinary::Polynomial(p, shifted));
    }
}
