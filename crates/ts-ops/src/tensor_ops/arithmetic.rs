//! Pointwise aten operators: arithmetic, comparisons, logic, math functions, activations.

use ts_tensor::{Operand, RoundingMode, Scalar, Tensor};

use super::{def, def_many};
use crate::registry::Registry;

macro_rules! binary {
    ($r:expr, $name:literal, $tensor:ident, $scalar:ident) => {
        def($r, concat!("aten::", $name, ".Tensor"), |a| {
            a.t(0)?.$tensor(a.t(1)?)
        });
        def($r, concat!("aten::", $name, ".Scalar"), |a| {
            a.t(0)?.$scalar(a.s(1)?)
        });
    };
}

macro_rules! unary {
    ($r:expr, $($name:ident),* $(,)?) => {
        $(
            def($r, concat!("aten::", stringify!($name)), |a| a.t(0)?.$name());
        )*
    };
}

macro_rules! unary_inplace {
    ($r:expr, $($name:ident => $inplace:ident),* $(,)?) => {
        $(
            def($r, concat!("aten::", stringify!($inplace)), |a| {
                let t = a.t(0)?;
                t.$inplace()?;
                Ok(t.clone())
            });
        )*
    };
}

/// Registers the pointwise operators.
pub fn register(r: &Registry) {
    register_binary(r);
    register_unary(r);
    register_activations(r);
    register_ternary(r);
}

fn register_binary(r: &Registry) {
    def(r, "aten::add.Tensor", |a| a.t(0)?.add(a.t(1)?, a.s(2)?));
    def(r, "aten::add.Scalar", |a| {
        a.t(0)?.add_scalar(a.s(1)?, a.s(2)?)
    });
    def(r, "aten::sub.Tensor", |a| a.t(0)?.sub(a.t(1)?, a.s(2)?));
    def(r, "aten::sub.Scalar", |a| {
        a.t(0)?.sub_scalar(a.s(1)?, a.s(2)?)
    });
    def(r, "aten::rsub.Tensor", |a| a.t(0)?.rsub(a.t(1)?, a.s(2)?));
    def(r, "aten::rsub.Scalar", |a| {
        a.t(0)?.rsub_scalar(a.s(1)?, a.s(2)?)
    });
    def(r, "aten::add_.Tensor", |a| {
        let t = a.t(0)?;
        t.add_(a.t(1)?, a.s(2)?)?;
        Ok(t.clone())
    });
    def(r, "aten::add_.Scalar", |a| {
        let t = a.t(0)?;
        t.add_scalar_(a.s(1)?, a.s(2)?)?;
        Ok(t.clone())
    });
    def(r, "aten::sub_.Tensor", |a| {
        let t = a.t(0)?;
        t.sub_(a.t(1)?, a.s(2)?)?;
        Ok(t.clone())
    });
    def(r, "aten::sub_.Scalar", |a| {
        let t = a.t(0)?;
        t.sub_scalar_(a.s(1)?, a.s(2)?)?;
        Ok(t.clone())
    });
    binary!(r, "mul", mul, mul_scalar);
    def(r, "aten::mul_.Tensor", |a| {
        let t = a.t(0)?;
        t.mul_(a.t(1)?)?;
        Ok(t.clone())
    });
    def(r, "aten::mul_.Scalar", |a| {
        let t = a.t(0)?;
        t.mul_scalar_(a.s(1)?)?;
        Ok(t.clone())
    });
    binary!(r, "div", div, div_scalar);
    def_many(r, &["aten::true_divide.Tensor"], |a| a.t(0)?.div(a.t(1)?));
    def(r, "aten::true_divide.Scalar", |a| {
        a.t(0)?.div_scalar(a.s(1)?)
    });
    def(r, "aten::div.Tensor_mode", |a| {
        a.t(0)?.div_mode(a.t(1)?, RoundingMode::parse(a.ostr(2)?)?)
    });
    def(r, "aten::div.Scalar_mode", |a| {
        a.t(0)?
            .div_scalar_mode(a.s(1)?, RoundingMode::parse(a.ostr(2)?)?)
    });
    def(r, "aten::div_.Tensor", |a| {
        let t = a.t(0)?;
        t.div_mode_(a.t(1)?, RoundingMode::None)?;
        Ok(t.clone())
    });
    def(r, "aten::div_.Scalar", |a| {
        let t = a.t(0)?;
        t.div_scalar_mode_(a.s(1)?, RoundingMode::None)?;
        Ok(t.clone())
    });
    def(r, "aten::floor_divide", |a| a.t(0)?.floor_divide(a.t(1)?));
    def(r, "aten::floor_divide.Scalar", |a| {
        a.t(0)?.floor_divide_scalar(a.s(1)?)
    });
    binary!(r, "remainder", remainder, remainder_scalar);
    def(r, "aten::remainder.Scalar_Tensor", |a| {
        a.t(1)?.rremainder_scalar(a.s(0)?)
    });
    binary!(r, "fmod", fmod, fmod_scalar);
    def(r, "aten::pow.Tensor_Tensor", |a| a.t(0)?.pow(a.t(1)?));
    def(r, "aten::pow.Tensor_Scalar", |a| {
        a.t(0)?.pow_scalar(a.s(1)?)
    });
    def(r, "aten::pow.Scalar", |a| {
        Tensor::pow_scalar_base(a.s(0)?, a.t(1)?)
    });
    def(r, "aten::atan2", |a| a.t(0)?.atan2(a.t(1)?));
    def(r, "aten::maximum", |a| a.t(0)?.maximum(a.t(1)?));
    def(r, "aten::minimum", |a| a.t(0)?.minimum(a.t(1)?));
    def(r, "aten::max.other", |a| a.t(0)?.maximum(a.t(1)?));
    def(r, "aten::min.other", |a| a.t(0)?.minimum(a.t(1)?));
    for (name, t, s) in [
        (
            "bitwise_and",
            "aten::__and__.Tensor",
            "aten::__and__.Scalar",
        ),
        ("bitwise_or", "aten::__or__.Tensor", "aten::__or__.Scalar"),
        (
            "bitwise_xor",
            "aten::__xor__.Tensor",
            "aten::__xor__.Scalar",
        ),
        (
            "bitwise_left_shift",
            "aten::__lshift__.Tensor",
            "aten::__lshift__.Scalar",
        ),
        (
            "bitwise_right_shift",
            "aten::__rshift__.Tensor",
            "aten::__rshift__.Scalar",
        ),
    ] {
        let f = bitwise(name);
        let g = f;
        def_many(r, &[t, &format!("aten::{name}.Tensor")], move |a| {
            g(a.t(0)?, Operand::Tensor(a.t(1)?))
        });
        let scalar_overload = if name.ends_with("shift") {
            "Tensor_Scalar"
        } else {
            "Scalar"
        };
        def_many(
            r,
            &[s, &format!("aten::{name}.{scalar_overload}")],
            move |a| f(a.t(0)?, Operand::Scalar(a.s(1)?)),
        );
    }
    binary!(r, "eq", eq, eq_scalar);
    binary!(r, "ne", ne, ne_scalar);
    binary!(r, "lt", lt, lt_scalar);
    binary!(r, "le", le, le_scalar);
    binary!(r, "gt", gt, gt_scalar);
    binary!(r, "ge", ge, ge_scalar);
    def(r, "aten::logical_and", |a| a.t(0)?.logical_and(a.t(1)?));
    def(r, "aten::logical_or", |a| a.t(0)?.logical_or(a.t(1)?));
    def(r, "aten::logical_xor", |a| a.t(0)?.logical_xor(a.t(1)?));
    def(r, "aten::equal", |a| {
        let (x, y) = (a.t(0)?, a.t(1)?);
        if x.sizes() != y.sizes() {
            return Ok(false);
        }
        Ok(x.eq(y)?.all(None, false)?.item()?.to_bool())
    });
    def(r, "aten::allclose", |a| {
        let (x, y) = (a.t(0)?, a.t(1)?);
        let close = isclose(x, y, a.f(2)?, a.f(3)?, a.b(4)?)?;
        Ok(close.all(None, false)?.item()?.to_bool())
    });
    def(r, "aten::isclose", |a| {
        isclose(a.t(0)?, a.t(1)?, a.f(2)?, a.f(3)?, a.b(4)?)
    });
}

type BitwiseFn = fn(&Tensor, Operand<'_>) -> ts_tensor::Result<Tensor>;

fn bitwise(name: &str) -> BitwiseFn {
    match name {
        "bitwise_and" => |t, o| match o {
            Operand::Tensor(x) => t.bitwise_and(x),
            Operand::Scalar(s) => t.bitwise_and_scalar(s),
        },
        "bitwise_or" => |t, o| match o {
            Operand::Tensor(x) => t.bitwise_or(x),
            Operand::Scalar(s) => t.bitwise_or_scalar(s),
        },
        "bitwise_xor" => |t, o| match o {
            Operand::Tensor(x) => t.bitwise_xor(x),
            Operand::Scalar(s) => t.bitwise_xor_scalar(s),
        },
        "bitwise_left_shift" => |t, o| match o {
            Operand::Tensor(x) => t.bitwise_left_shift(x),
            Operand::Scalar(s) => t.bitwise_left_shift_scalar(s),
        },
        _ => |t, o| match o {
            Operand::Tensor(x) => t.bitwise_right_shift(x),
            Operand::Scalar(s) => t.bitwise_right_shift_scalar(s),
        },
    }
}

/// `|x - y| <= atol + rtol * |y|`, with NaNs equal when asked.
fn isclose(
    x: &Tensor,
    y: &Tensor,
    rtol: f64,
    atol: f64,
    equal_nan: bool,
) -> ts_tensor::Result<Tensor> {
    let diff = x.sub(y, Scalar::Int(1))?.abs()?;
    let tol = y
        .abs()?
        .mul_scalar(Scalar::Float(rtol))?
        .add_scalar(Scalar::Float(atol), Scalar::Int(1))?;
    let close = diff.le(&tol)?.logical_or(&x.eq(y)?)?;
    if equal_nan {
        close.logical_or(&x.isnan()?.logical_and(&y.isnan()?)?)
    } else {
        Ok(close)
    }
}

fn register_unary(r: &Registry) {
    unary!(
        r,
        exp,
        exp2,
        expm1,
        log,
        log2,
        log10,
        log1p,
        sqrt,
        rsqrt,
        reciprocal,
        sin,
        cos,
        tan,
        asin,
        acos,
        atan,
        sinh,
        cosh,
        tanh,
        asinh,
        acosh,
        atanh,
        sigmoid,
        erf,
        erfc,
        erfinv,
        frac,
        abs,
        floor,
        ceil,
        trunc,
        sign,
        neg,
        square,
        isnan,
        isinf,
        isfinite,
        signbit,
        logical_not,
        bitwise_not,
        positive
    );
    def(r, "aten::round", |a| a.t(0)?.round());
    def(r, "aten::round.decimals", |a| {
        a.t(0)?.round_decimals(a.int(1)?)
    });
    def(r, "aten::negative", |a| a.t(0)?.neg());
    def(r, "aten::absolute", |a| a.t(0)?.abs());
    def(r, "aten::sgn", |a| a.t(0)?.sign());
    def(r, "aten::fix", |a| a.t(0)?.trunc());
    def(r, "aten::arcsin", |a| a.t(0)?.asin());
    def(r, "aten::arccos", |a| a.t(0)?.acos());
    def(r, "aten::arctan", |a| a.t(0)?.atan());
    def(r, "aten::arctan2", |a| a.t(0)?.atan2(a.t(1)?));
    unary_inplace!(
        r, exp => exp_, log => log_, sqrt => sqrt_, sin => sin_, cos => cos_, tanh => tanh_,
        sigmoid => sigmoid_, abs => abs_, floor => floor_, ceil => ceil_, round => round_,
        trunc => trunc_, neg => neg_, relu => relu_, sign => sign_,
        reciprocal => reciprocal_, rsqrt => rsqrt_, logical_not => logical_not_,
        bitwise_not => bitwise_not_, exp2 => exp2_, expm1 => expm1_, log1p => log1p_,
        silu => silu_, hardsigmoid => hardsigmoid_, hardswish => hardswish_, erf => erf_, frac => frac_
    );
    def(r, "aten::nan_to_num", |a| {
        a.t(0)?.nan_to_num(a.of(1)?, a.of(2)?, a.of(3)?)
    });
}

fn register_activations(r: &Registry) {
    unary!(r, relu, silu, mish, selu, hardsigmoid, hardswish, relu6);
    def(r, "aten::log_sigmoid", |a| a.t(0)?.log_sigmoid());
    def(r, "aten::hardtanh", |a| a.t(0)?.hardtanh(a.s(1)?, a.s(2)?));
    def(r, "aten::relu6_", |a| {
        let t = a.t(0)?;
        t.hardtanh_(0.0.into(), 6.0.into())?;
        Ok(t.clone())
    });
    def(r, "aten::hardtanh_", |a| {
        let t = a.t(0)?;
        t.hardtanh_(a.s(1)?, a.s(2)?)?;
        Ok(t.clone())
    });
    def(r, "aten::gelu", |a| a.t(0)?.gelu(a.str(1)?));
    def(r, "aten::gelu_", |a| {
        let t = a.t(0)?;
        t.gelu_(a.str(1)?)?;
        Ok(t.clone())
    });
    def(r, "aten::elu", |a| a.t(0)?.elu(a.s(1)?, a.s(2)?, a.s(3)?));
    def(r, "aten::elu_", |a| {
        let t = a.t(0)?;
        t.elu_(a.s(1)?, a.s(2)?, a.s(3)?)?;
        Ok(t.clone())
    });
    def(r, "aten::celu", |a| a.t(0)?.celu(a.s(1)?));
    def(r, "aten::leaky_relu", |a| a.t(0)?.leaky_relu(a.s(1)?));
    def(r, "aten::leaky_relu_", |a| {
        let t = a.t(0)?;
        t.leaky_relu_(a.s(1)?)?;
        Ok(t.clone())
    });
    def(r, "aten::softplus", |a| a.t(0)?.softplus(a.s(1)?, a.s(2)?));
    def(r, "aten::logit", |a| a.t(0)?.logit(a.of(1)?));
    def(r, "aten::softmax.int", |a| {
        a.t(0)?.softmax(a.int(1)?, a.dtype(2)?)
    });
    def(r, "aten::log_softmax.int", |a| {
        a.t(0)?.log_softmax(a.int(1)?, a.dtype(2)?)
    });
    def(r, "aten::_softmax", |a| a.t(0)?.softmax(a.int(1)?, None));
    def(r, "aten::_log_softmax", |a| {
        a.t(0)?.log_softmax(a.int(1)?, None)
    });
}

fn register_ternary(r: &Registry) {
    def(r, "aten::where.self", |a| {
        ts_tensor::where_(a.t(0)?, Operand::Tensor(a.t(1)?), Operand::Tensor(a.t(2)?))
    });
    def(r, "aten::where.ScalarSelf", |a| {
        ts_tensor::where_(a.t(0)?, Operand::Scalar(a.s(1)?), Operand::Tensor(a.t(2)?))
    });
    def(r, "aten::where.ScalarOther", |a| {
        ts_tensor::where_(a.t(0)?, Operand::Tensor(a.t(1)?), Operand::Scalar(a.s(2)?))
    });
    def(r, "aten::where.Scalar", |a| {
        ts_tensor::where_(a.t(0)?, Operand::Scalar(a.s(1)?), Operand::Scalar(a.s(2)?))
    });
    def(r, "aten::where", |a| a.t(0)?.nonzero_tuple());
    def_many(r, &["aten::clamp", "aten::clip"], |a| {
        a.t(0)?.clamp(a.os(1)?, a.os(2)?)
    });
    def_many(r, &["aten::clamp.Tensor", "aten::clip.Tensor"], |a| {
        a.t(0)?.clamp_tensor(a.ot(1)?, a.ot(2)?)
    });
    def_many(r, &["aten::clamp_", "aten::clip_"], |a| {
        let t = a.t(0)?;
        t.clamp_(a.os(1)?, a.os(2)?)?;
        Ok(t.clone())
    });
    def(r, "aten::clamp_min", |a| a.t(0)?.clamp_min(a.s(1)?));
    def(r, "aten::clamp_max", |a| a.t(0)?.clamp_max(a.s(1)?));
    def(r, "aten::lerp.Scalar", |a| a.t(0)?.lerp(a.t(1)?, a.s(2)?));
    def(r, "aten::lerp.Tensor", |a| {
        a.t(0)?.lerp_tensor(a.t(1)?, a.t(2)?)
    });
    def(r, "aten::addcmul", |a| {
        a.t(0)?.addcmul(a.t(1)?, a.t(2)?, a.s(3)?)
    });
    def(r, "aten::addcdiv", |a| {
        a.t(0)?.addcdiv(a.t(1)?, a.t(2)?, a.s(3)?)
    });
}
