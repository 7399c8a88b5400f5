//! Tensor operations for derivative formulas, run through the registry so that they record
//! history themselves when a backward pass builds a graph (`create_graph=True`).

use ts_core::IValue;
use ts_tensor::{DType, Error, Tensor};

use crate::registry::{registry, OperatorKind};

/// Runs the operator `full_name` on `args` and returns its results.
pub fn call(full_name: &str, args: Vec<IValue>) -> Result<Vec<IValue>, Error> {
    let op = registry().find(full_name).ok_or_else(|| {
        Error::runtime(format!("autograd: operator {full_name} is not registered"))
    })?;
    let OperatorKind::Op(f) = &op.kind else {
        return Err(Error::runtime(format!(
            "autograd: operator {full_name} cannot be called directly"
        )));
    };
    let mut s = args;
    let before = s.len();
    f(&mut s)?;
    let n = s.len() + op.schema.arguments.len() - before;
    Ok(s.split_off(s.len() - n))
}

/// Runs `full_name` and returns its first result as a tensor.
pub fn call1(full_name: &str, args: Vec<IValue>) -> Result<Tensor, Error> {
    match call(full_name, args)?.into_iter().next() {
        Some(IValue::Tensor(t)) => Ok(t),
        _ => Err(Error::runtime(format!(
            "autograd: {full_name} did not return a tensor"
        ))),
    }
}

/// `IValue::Tensor` of a handle.
pub fn tv(t: &Tensor) -> IValue {
    IValue::Tensor(t.clone())
}

/// `IValue::Double`.
pub fn fv(x: f64) -> IValue {
    IValue::Double(x)
}

macro_rules! binary {
    ($($name:ident => $op:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "`.")]
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
            call1($op, vec![tv(a), tv(b)])
        }
    )*};
}
binary! {
    mul => "aten::mul.Tensor",
    div => "aten::div.Tensor",
    matmul => "aten::matmul",
    mm => "aten::mm",
    bmm => "aten::bmm",
    maximum => "aten::maximum",
    minimum => "aten::minimum",
    eq => "aten::eq.Tensor",
    ne => "aten::ne.Tensor",
    gt => "aten::gt.Tensor",
    ge => "aten::ge.Tensor",
    lt => "aten::lt.Tensor",
    le => "aten::le.Tensor",
    atan2 => "aten::atan2",
    pow_t => "aten::pow.Tensor_Tensor",
    expand_as => "aten::expand_as",
    outer => "aten::outer",
    xlogy => "aten::xlogy.Tensor",
}

macro_rules! unary {
    ($($name:ident => $op:literal),* $(,)?) => {$(
        #[doc = concat!("`", $op, "`.")]
        pub fn $name(a: &Tensor) -> Result<Tensor, Error> {
            call1($op, vec![tv(a)])
        }
    )*};
}
unary! {
    neg => "aten::neg",
    exp => "aten::exp",
    log => "aten::log",
    sqrt => "aten::sqrt",
    rsqrt => "aten::rsqrt",
    sin => "aten::sin",
    cos => "aten::cos",
    tan => "aten::tan",
    sinh => "aten::sinh",
    cosh => "aten::cosh",
    tanh => "aten::tanh",
    sigmoid => "aten::sigmoid",
    sign => "aten::sign",
    sgn => "aten::sgn",
    abs => "aten::abs",
    reciprocal => "aten::reciprocal",
    square => "aten::square",
    conj => "aten::conj_physical",
    real => "aten::real",
    log1p => "aten::log1p",
    expm1 => "aten::expm1",
    erf => "aten::erf",
    digamma => "aten::digamma",
    logical_not => "aten::logical_not",
    isnan => "aten::isnan",
    t => "aten::t",
    relu => "aten::relu",
}

/// The last two dimensions swapped.
pub fn mt(a: &Tensor) -> Result<Tensor, Error> {
    transpose(a, -2, -1)
}

/// The conjugate transpose of the last two dimensions (`mH`).
pub fn mh(a: &Tensor) -> Result<Tensor, Error> {
    let t = transpose(a, -2, -1)?;
    if t.dtype().is_complex() {
        conj(&t)
    } else {
        Ok(t)
    }
}

/// `a + b`.
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    call1("aten::add.Tensor", vec![tv(a), tv(b), IValue::Int(1)])
}

/// `a - b`.
pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    call1("aten::sub.Tensor", vec![tv(a), tv(b), IValue::Int(1)])
}

/// `a * s`.
pub fn mul_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::mul.Scalar", vec![tv(a), fv(s)])
}

/// `a + s`.
pub fn add_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::add.Scalar", vec![tv(a), fv(s), IValue::Int(1)])
}

/// `a / s`.
pub fn div_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::div.Scalar", vec![tv(a), fv(s)])
}

/// `a ** s`.
pub fn pow_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::pow.Tensor_Scalar", vec![tv(a), fv(s)])
}

/// `s - a`.
pub fn rsub_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::rsub.Scalar", vec![tv(a), fv(s), IValue::Int(1)])
}

/// `where(cond, a, b)`.
pub fn where_(c: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    call1("aten::where.self", vec![tv(c), tv(a), tv(b)])
}

/// `where(cond, a, 0)`.
pub fn mask(c: &Tensor, a: &Tensor) -> Result<Tensor, Error> {
    where_(c, a, &zeros_like(a)?)
}

/// Zeros shaped and typed like `a` (no history).
pub fn zeros_like(a: &Tensor) -> Result<Tensor, Error> {
    let m = a.meta();
    Tensor::zeros(&m.sizes, m.dtype)
}

/// Zeros of the given sizes and dtype.
pub fn zeros(sizes: &[i64], dtype: DType) -> Result<Tensor, Error> {
    Tensor::zeros(sizes, dtype)
}

/// `a > s` as a bool tensor.
pub fn gt_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::gt.Scalar", vec![tv(a), fv(s)])
}

/// `a < s`.
pub fn lt_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::lt.Scalar", vec![tv(a), fv(s)])
}

/// `a >= s`.
pub fn ge_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::ge.Scalar", vec![tv(a), fv(s)])
}

/// `a <= s`.
pub fn le_s(a: &Tensor, s: f64) -> Result<Tensor, Error> {
    call1("aten::le.Scalar", vec![tv(a), fv(s)])
}

/// `a.reshape(sizes)`.
pub fn reshape(a: &Tensor, sizes: &[i64]) -> Result<Tensor, Error> {
    call1(
        "aten::reshape",
        vec![tv(a), IValue::int_list(sizes.to_vec())],
    )
}

/// `a.expand(sizes)`.
pub fn expand(a: &Tensor, sizes: &[i64]) -> Result<Tensor, Error> {
    call1(
        "aten::expand",
        vec![tv(a), IValue::int_list(sizes.to_vec()), IValue::Bool(false)],
    )
}

/// `a.sum(dims, keepdim)`.
pub fn sum_dims(a: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor, Error> {
    call1(
        "aten::sum.dim_IntList",
        vec![
            tv(a),
            IValue::int_list(dims.to_vec()),
            IValue::Bool(keepdim),
            IValue::None,
        ],
    )
}

/// `a.sum()`.
pub fn sum(a: &Tensor) -> Result<Tensor, Error> {
    call1("aten::sum", vec![tv(a), IValue::None])
}

/// `a.unsqueeze(d)`.
pub fn unsqueeze(a: &Tensor, d: i64) -> Result<Tensor, Error> {
    call1("aten::unsqueeze", vec![tv(a), IValue::Int(d)])
}

/// `a.transpose(d0, d1)`.
pub fn transpose(a: &Tensor, d0: i64, d1: i64) -> Result<Tensor, Error> {
    call1(
        "aten::transpose.int",
        vec![tv(a), IValue::Int(d0), IValue::Int(d1)],
    )
}

/// `a.permute(dims)`.
pub fn permute(a: &Tensor, dims: &[i64]) -> Result<Tensor, Error> {
    call1(
        "aten::permute",
        vec![tv(a), IValue::int_list(dims.to_vec())],
    )
}

/// `a.to(dtype)`.
pub fn to_dtype(a: &Tensor, dtype: DType) -> Result<Tensor, Error> {
    call1(
        "aten::to.dtype",
        vec![
            tv(a),
            IValue::Int(dtype.scalar_type_index()),
            IValue::Bool(false),
            IValue::Bool(false),
            IValue::None,
        ],
    )
}

/// A copy without history.
pub fn clone_detached(a: &Tensor) -> Result<Tensor, Error> {
    a.detach().clone_tensor()
}

/// Sums `g` down to `sizes` (the gradient of a broadcast).
pub fn sum_to(g: &Tensor, sizes: &[i64]) -> Result<Tensor, Error> {
    let gs = g.sizes();
    if gs.as_slice() == sizes {
        return Ok(g.clone());
    }
    let lead = gs.len().saturating_sub(sizes.len());
    let mut dims: Vec<i64> = (0..lead as i64).collect();
    for (i, &s) in sizes.iter().enumerate() {
        if s == 1 && gs.get(lead + i).is_some_and(|&x| x != 1) {
            dims.push((lead + i) as i64);
        }
    }
    let r = if dims.is_empty() {
        g.clone()
    } else {
        sum_dims(g, &dims, true)?
    };
    reshape(&r, sizes)
}

/// Gradient of an input of a broadcasting pointwise op: `g` summed to the input's shape and
/// (for a real input of a complex result) its real part.
pub fn reduce_to(g: &Tensor, like: &Tensor) -> Result<Tensor, Error> {
    let g = if g.dtype().is_complex() && !like.dtype().is_complex() {
        real(g)?
    } else {
        g.clone()
    };
    sum_to(&g, &like.sizes())
}
