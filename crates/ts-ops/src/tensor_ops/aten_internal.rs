//! ATen's internal and legacy operators that saved graphs and decompositions contain, each
//! defined as a composition of public operators run through the registry: `_aminmax`,
//! `_stack`, `_add_relu`, `_unsafe_index`, `_index_put_impl`, `_safe_softmax`,
//! `_masked_softmax`, `_cast_*`, the legacy convolution entry points (`thnn_conv2d`,
//! `slow_conv3d`, `_conv_depthwise2d`, ...), the batch-norm variants of functionalization
//! (`_native_batch_norm_legit_functional`, `_batch_norm_with_update`, ...), `_weight_norm`,
//! `_trilinear` and friends. Calling through the registry keeps one implementation of each
//! kernel and lets autograd record the parts.

use ts_core::{IValue, Type};
use ts_tensor::{resize_out_and_copy, DType, Error, Scalar, Tensor};

use super::{def, Args};
use crate::autograd::ops::call;
use crate::registry::Registry;

/// Results pushed as separate values (operators returning five or more).
struct Many(Vec<IValue>);

impl super::Outputs for Many {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.extend(self.0);
    }
}

fn tv(t: &Tensor) -> IValue {
    IValue::Tensor(t.clone())
}

fn ints(v: &[i64]) -> IValue {
    IValue::int_list(v.iter().copied())
}

/// Runs `name` and returns its first result as a tensor.
fn call_t(name: &str, args: Vec<IValue>) -> Result<Tensor, Error> {
    match call(name, args)?.into_iter().next() {
        Some(IValue::Tensor(t)) => Ok(t),
        _ => Err(Error::runtime(format!("{name} did not return a tensor"))),
    }
}

/// Runs `name` and returns its tensor results.
fn call_ts(name: &str, args: Vec<IValue>) -> Result<Vec<Tensor>, Error> {
    call(name, args)?
        .into_iter()
        .map(|v| match v {
            IValue::Tensor(t) => Ok(t),
            v => Err(Error::runtime(format!(
                "{name} returned {} where a tensor was expected",
                v.tag_name()
            ))),
        })
        .collect()
}

fn pair(mut v: Vec<Tensor>) -> Result<(Tensor, Tensor), Error> {
    if v.len() < 2 {
        return Err(Error::runtime("expected two results"));
    }
    let b = v.swap_remove(1);
    let a = v.swap_remove(0);
    Ok((a, b))
}

fn triple(v: Vec<Tensor>) -> Result<(Tensor, Tensor, Tensor), Error> {
    let mut it = v.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(a), Some(b), Some(c)) => Ok((a, b, c)),
        _ => Err(Error::runtime("expected three results")),
    }
}

/// `native_batch_norm` over the `_batch_norm_with_update`/`_no_update` argument layout
/// `(input, weight, bias, running_mean, running_var, momentum, eps)`, with the running
/// statistics given (the caller's, updated in place, or copies).
fn batch_norm_update(
    a: &Args,
    running_mean: IValue,
    running_var: IValue,
    training: bool,
) -> Result<(Tensor, Tensor, Tensor), Error> {
    triple(call_ts(
        "aten::native_batch_norm",
        vec![
            a.v(0)?.clone(),
            a.v(1)?.clone(),
            a.v(2)?.clone(),
            running_mean,
            running_var,
            IValue::Bool(training),
            a.v(5)?.clone(),
            a.v(6)?.clone(),
        ],
    )?)
}

/// The empty `reserve` result of the `_batch_norm_with_update` family (cuDNN's workspace).
fn empty_reserve() -> Result<Tensor, Error> {
    ts_tensor::factory::empty(&[0], Some(DType::UInt8))
}

/// The `Tensor?[]` indices of `self`, each clamped into its dim's range `[-size, size - 1]`
/// as ATen's `_unsafe_masked_index*` do (masked-out positions may hold any index).
fn clamped_indices(x: &Tensor, indices: &[Option<Tensor>]) -> Result<IValue, Error> {
    let sizes = x.sizes();
    let items = indices
        .iter()
        .enumerate()
        .map(|(d, ix)| match ix {
            None => Ok(IValue::None),
            Some(t) if t.dtype() == DType::Bool || t.dtype() == DType::UInt8 => {
                Ok(IValue::Tensor(t.clone()))
            }
            Some(t) => {
                let n = sizes.get(d).copied().unwrap_or(1);
                Ok(IValue::Tensor(
                    t.clamp(Some(Scalar::Int(-n)), Some(Scalar::Int(n - 1)))?,
                ))
            }
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(IValue::list(Type::optional(Type::tensor()), items))
}

fn opt_tensor(a: &Args, i: usize) -> Result<IValue, Error> {
    Ok(a.ot(i)?.map_or(IValue::None, tv))
}

/// `_cast_X(self, non_blocking)`: `self.to(X)`.
fn cast(r: &Registry, name: &'static str, dtype: DType) {
    def(r, name, move |a| {
        call_t(
            "aten::to.dtype",
            vec![
                a.v(0)?.clone(),
                IValue::Int(dtype.scalar_type_index()),
                IValue::Bool(a.b(1)?),
                IValue::Bool(false),
                IValue::None,
            ],
        )
    });
}

/// A convolution through `aten::convolution`.
#[allow(clippy::too_many_arguments)]
fn convolution(
    input: &IValue,
    weight: &IValue,
    bias: IValue,
    stride: Vec<i64>,
    padding: Vec<i64>,
    dilation: Vec<i64>,
    transposed: bool,
    output_padding: Vec<i64>,
    groups: i64,
) -> Result<Tensor, Error> {
    call_t(
        "aten::convolution",
        vec![
            input.clone(),
            weight.clone(),
            bias,
            ints(&stride),
            ints(&padding),
            ints(&dilation),
            IValue::Bool(transposed),
            ints(&output_padding),
            IValue::Int(groups),
        ],
    )
}

/// Registers the legacy convolution entry points, whose argument lists are
/// `(self, weight, kernel_size, bias, stride, padding[, output_padding][, dilation])`.
fn register_legacy_convolutions(r: &Registry) {
    // (name, spatial dims, has output_padding, has dilation, depthwise)
    let table: &[(&'static str, usize, bool, bool, bool)] = &[
        ("aten::thnn_conv2d", 2, false, false, false),
        ("aten::_slow_conv2d_forward", 2, false, false, false),
        ("aten::slow_conv3d", 3, false, false, false),
        ("aten::slow_conv3d_forward", 3, false, false, false),
        ("aten::slow_conv_dilated2d", 2, false, true, false),
        ("aten::slow_conv_dilated3d", 3, false, true, false),
        ("aten::slow_conv_transpose2d", 2, true, true, false),
        ("aten::slow_conv_transpose3d", 3, true, true, false),
        ("aten::_conv_depthwise2d", 2, false, true, true),
        ("aten::conv_depthwise3d", 3, false, true, true),
    ];
    for &(name, nd, transposed, has_dilation, depthwise) in table {
        def(r, name, move |a| {
            let input = a.t(0)?;
            let groups = if depthwise {
                input.sizes().get(1).copied().unwrap_or(1)
            } else {
                1
            };
            let (output_padding, dilation) = if transposed {
                (a.ints(6)?, a.ints(7)?)
            } else if has_dilation {
                (vec![0; nd], a.ints(6)?)
            } else {
                (vec![0; nd], vec![1; nd])
            };
            convolution(
                a.v(0)?,
                a.v(1)?,
                opt_tensor(a, 3)?,
                a.ints(4)?,
                a.ints(5)?,
                dilation,
                transposed,
                output_padding,
                groups,
            )
        });
    }
    def(r, "aten::convolution_overrideable", |a| {
        convolution(
            a.v(0)?,
            a.v(1)?,
            opt_tensor(a, 2)?,
            a.ints(3)?,
            a.ints(4)?,
            a.ints(5)?,
            a.b(6)?,
            a.ints(7)?,
            a.int(8)?,
        )
    });
    def(r, "aten::_convolution_mode", |a| {
        let nd = a.t(0)?.dim();
        let name = match nd {
            3 | 2 => "aten::conv1d.padding",
            4 => "aten::conv2d.padding",
            5 => "aten::conv3d.padding",
            _ => {
                return Err(Error::runtime(format!(
                    "Expected 3D, 4D or 5D input to convolution, got {nd}D"
                )))
            }
        };
        call_t(name, a.0.clone())
    });
}

/// `_safe_softmax`: softmax whose rows of all `-inf` give zeros instead of NaN.
fn safe_softmax(x: &Tensor, dim: i64, dtype: IValue) -> Result<Tensor, Error> {
    let out = call_t("aten::softmax.int", vec![tv(x), IValue::Int(dim), dtype])?;
    let neg_inf = call_t("aten::isneginf", vec![tv(x)])?;
    let all = call_t(
        "aten::all.dim",
        vec![tv(&neg_inf), IValue::Int(dim), IValue::Bool(true)],
    )?;
    call_t(
        "aten::masked_fill.Scalar",
        vec![tv(&out), tv(&all), IValue::Double(0.0)],
    )
}

/// `_masked_softmax(self, mask, dim, mask_type)`: softmax over the positions where `mask` is
/// false; a key-padding mask (type 1, `[B, L]` for a `[B, H, L, L]` input) broadcasts over
/// heads and queries. Fully masked rows give zeros.
fn masked_softmax(
    x: &Tensor,
    mask: &Tensor,
    dim: Option<i64>,
    mask_type: Option<i64>,
) -> Result<Tensor, Error> {
    let dim = dim.unwrap_or(-1);
    let mask = if mask_type == Some(1) && mask.dim() == 2 && x.dim() == 4 {
        let s = mask.sizes();
        mask.reshape(&[s[0], 1, 1, s[1]])?
    } else {
        mask.clone()
    };
    let filled = call_t(
        "aten::masked_fill.Scalar",
        vec![tv(x), tv(&mask), IValue::Double(f64::NEG_INFINITY)],
    )?;
    safe_softmax(&filled, dim, IValue::None)
}

/// `_trilinear`: the product of three operands after unsqueezing each at its `expand` dims,
/// summed over `sumdim`.
fn trilinear(a: &Args) -> Result<Tensor, Error> {
    let mut prod: Option<Tensor> = None;
    for k in 0..3 {
        let mut t = a.t(k)?.clone();
        let mut dims = a.ints(3 + k)?;
        dims.sort_unstable();
        for d in dims {
            t = t.unsqueeze(d)?;
        }
        prod = Some(match prod {
            None => t,
            Some(p) => p.mul(&t)?,
        });
    }
    let prod = prod.ok_or_else(|| Error::runtime("_trilinear: no operands"))?;
    let sumdim = a.ints(6)?;
    if sumdim.is_empty() {
        return Ok(prod);
    }
    prod.sum(Some(&sumdim), false, None)
}

/// Batch-norm statistics over every dimension but the channels (dim 1): mean and biased
/// variance.
fn channel_stats(x: &Tensor) -> Result<(Tensor, Tensor), Error> {
    let dims: Vec<i64> = (0..x.dim() as i64).filter(|&d| d != 1).collect();
    let mean = x.mean(Some(&dims), false, None)?;
    let var = call_t(
        "aten::var.correction",
        vec![tv(x), ints(&dims), IValue::Int(0), IValue::Bool(false)],
    )?;
    Ok((mean, var))
}

/// A per-channel vector shaped to broadcast against an input of `ndim` dimensions.
fn per_channel(v: &Tensor, ndim: usize) -> Result<Tensor, Error> {
    let mut shape = vec![1i64; ndim.max(2)];
    shape[1] = -1;
    v.reshape(&shape)
}

fn register_batch_norms(r: &Registry) {
    def(r, "aten::batch_norm_stats", |a| {
        let x = a.t(0)?;
        let (mean, var) = channel_stats(x)?;
        let invstd = var
            .add_scalar(Scalar::Float(a.f(1)?), Scalar::Int(1))?
            .rsqrt()?;
        Ok((mean, invstd))
    });
    def(r, "aten::batch_norm_elemt", |a| {
        let x = a.t(0)?;
        let nd = x.dim();
        let mut y = x
            .sub(&per_channel(a.t(3)?, nd)?, Scalar::Int(1))?
            .mul(&per_channel(a.t(4)?, nd)?)?;
        if let Some(w) = a.ot(1)? {
            y = y.mul(&per_channel(w, nd)?)?;
        }
        if let Some(b) = a.ot(2)? {
            y = y.add(&per_channel(b, nd)?, Scalar::Int(1))?;
        }
        Ok(y)
    });
    def(r, "aten::batch_norm_update_stats", |a| {
        let x = a.t(0)?;
        let (mean, var) = channel_stats(x)?;
        let n = (x.numel() / x.sizes().get(1).copied().unwrap_or(1).max(1) as usize) as f64;
        let momentum = a.f(3)?;
        let unbiased = var.mul_scalar(Scalar::Float(n / (n - 1.0).max(1.0)))?;
        if let Some(rm) = a.ot(1)? {
            rm.copy_(
                &rm.mul_scalar(Scalar::Float(1.0 - momentum))?
                    .add(&mean, Scalar::Float(momentum))?,
            )?;
        }
        if let Some(rv) = a.ot(2)? {
            rv.copy_(
                &rv.mul_scalar(Scalar::Float(1.0 - momentum))?
                    .add(&unbiased, Scalar::Float(momentum))?,
            )?;
        }
        Ok((mean, var))
    });
    // (input, weight, bias, running_mean, running_var, training, momentum, eps)
    def(r, "aten::_native_batch_norm_legit_functional", |a| {
        let rm = a.t(3)?.clone_tensor()?;
        let rv = a.t(4)?.clone_tensor()?;
        let (out, m, v) = triple(call_ts(
            "aten::native_batch_norm",
            vec![
                a.v(0)?.clone(),
                a.v(1)?.clone(),
                a.v(2)?.clone(),
                tv(&rm),
                tv(&rv),
                a.v(5)?.clone(),
                a.v(6)?.clone(),
                a.v(7)?.clone(),
            ],
        )?)?;
        Ok(Many(vec![tv(&out), tv(&m), tv(&v), tv(&rm), tv(&rv)]))
    });
    // (input, weight, bias, running_mean!, running_var!, momentum, eps) -> 4 tensors
    def(r, "aten::_batch_norm_with_update", |a| {
        let (out, m, v) = batch_norm_update(a, a.v(3)?.clone(), a.v(4)?.clone(), true)?;
        Ok((out, m, v, empty_reserve()?))
    });
    def(r, "aten::_batch_norm_with_update.out", |a| {
        // The running statistics update in place, as in the functional overload; the four
        // results land in `out`, `save_mean`, `save_invstd`, `reserve`.
        let (out, m, v) = batch_norm_update(a, a.v(3)?.clone(), a.v(4)?.clone(), true)?;
        Ok((
            resize_out_and_copy(a.t(7)?, &out)?,
            resize_out_and_copy(a.t(8)?, &m)?,
            resize_out_and_copy(a.t(9)?, &v)?,
            resize_out_and_copy(a.t(10)?, &empty_reserve()?)?,
        ))
    });
    def(r, "aten::_batch_norm_with_update_functional", |a| {
        let rm = a.t(3)?.clone_tensor()?;
        let rv = a.t(4)?.clone_tensor()?;
        let (out, m, v) = batch_norm_update(a, tv(&rm), tv(&rv), true)?;
        Ok(Many(vec![
            tv(&out),
            tv(&m),
            tv(&v),
            tv(&empty_reserve()?),
            tv(&rm),
            tv(&rv),
        ]))
    });
    def(r, "aten::_batch_norm_no_update", |a| {
        let (out, m, v) = batch_norm_update(a, a.v(3)?.clone(), a.v(4)?.clone(), false)?;
        Ok((out, m, v, empty_reserve()?))
    });
    // (input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
    def(r, "aten::_batch_norm_impl_index", |a| {
        let (out, m, v) = triple(call_ts("aten::native_batch_norm", a.0[..8].to_vec())?)?;
        let reserve = ts_tensor::factory::empty(&[0], Some(DType::UInt8))?;
        Ok(Many(vec![
            tv(&out),
            tv(&m),
            tv(&v),
            tv(&reserve),
            IValue::Int(0),
        ]))
    });
}

/// Registers the operators of this module.
pub fn register(r: &Registry) {
    def(r, "aten::_aminmax", |a| {
        pair(call_ts(
            "aten::aminmax",
            vec![a.v(0)?.clone(), IValue::None, IValue::Bool(false)],
        )?)
    });
    def(r, "aten::_aminmax.dim", |a| {
        pair(call_ts(
            "aten::aminmax",
            vec![
                a.v(0)?.clone(),
                IValue::Int(a.int(1)?),
                IValue::Bool(a.b(2)?),
            ],
        )?)
    });
    def(r, "aten::_stack", |a| call_t("aten::stack", a.0.clone()));
    def(r, "aten::_logcumsumexp", |a| {
        call_t("aten::logcumsumexp", a.0.clone())
    });
    for (name, target) in [
        ("aten::_is_all_true", "aten::all"),
        ("aten::_is_any_true", "aten::any"),
    ] {
        def(r, name, move |a| {
            let t = a.t(0)?;
            if t.dtype() != DType::Bool {
                return Err(Error::runtime(format!(
                    "Expected bool tensor for self, got {}",
                    t.dtype().scalar_type_name()
                )));
            }
            call_t(target, vec![tv(t)])
        });
    }
    def(r, "aten::_add_relu.Tensor", |a| {
        call_t("aten::add.Tensor", a.0.clone())?.relu()
    });
    def(r, "aten::_add_relu.Scalar", |a| {
        call_t("aten::add.Scalar", a.0.clone())?.relu()
    });
    for name in [
        "aten::_unsafe_index.Tensor",
        "aten::_unsafe_index.Tensor_hacked_twin",
    ] {
        def(r, name, |a| call_t("aten::index.Tensor", a.0.clone()));
    }
    for name in [
        "aten::_unsafe_index_put",
        "aten::_unsafe_index_put.hacked_twin",
    ] {
        def(r, name, |a| call_t("aten::index_put", a.0.clone()));
    }
    def(r, "aten::_index_put_impl", |a| {
        call_t("aten::index_put", a.0[..4].to_vec())
    });
    for name in [
        "aten::_index_put_impl_",
        "aten::_index_put_impl_.hacked_twin",
    ] {
        def(r, name, |a| call_t("aten::index_put_", a.0[..4].to_vec()));
    }
    def(r, "aten::_unsafe_masked_index", |a| {
        // where(mask, self[clamp(indices)], fill): masked-out positions may hold any index.
        let indices = clamped_indices(a.t(0)?, &a.opt_tensors(2)?)?;
        let picked = call_t("aten::index.Tensor", vec![a.v(0)?.clone(), indices])?;
        call_t(
            "aten::where.ScalarOther",
            vec![a.v(1)?.clone(), tv(&picked), a.v(3)?.clone()],
        )
    });
    def(r, "aten::_unsafe_masked_index_put_accumulate", |a| {
        // The backward of `_unsafe_masked_index`: masked-out values become 0, then accumulate
        // at the (clamped) indices.
        let x = a.t(0)?;
        let kept = call_t(
            "aten::where.ScalarOther",
            vec![a.v(1)?.clone(), a.v(3)?.clone(), IValue::Int(0)],
        )?;
        let indices = clamped_indices(x, &a.opt_tensors(2)?)?;
        call_t(
            "aten::index_put",
            vec![tv(x), indices, tv(&kept), IValue::Bool(true)],
        )
    });
    def(r, "aten::_grad_sum_to_size", |a| match a.oints(1)? {
        None => Ok(a.t(0)?.clone()),
        Some(size) => a.t(0)?.sum_to_size(&size),
    });
    def(r, "aten::_has_same_storage_numel", |a| {
        let n = |t: &Tensor| t.meta_snapshot().storage.nbytes() / t.dtype().size();
        Ok(n(a.t(0)?) == n(a.t(1)?))
    });
    def(r, "aten::_make_dep_token", |a| {
        // An empty scalar ordering side effects in functionalized graphs; its value is unused.
        a.check_device(2)?;
        ts_tensor::factory::zeros(&[], a.dtype(0)?)
    });
    // Functionalized assertions: check, then pass the dependency token on.
    def(r, "aten::_functional_assert_async.msg", |a| {
        call(
            "aten::_assert_async.msg",
            vec![a.v(0)?.clone(), a.v(1)?.clone()],
        )?;
        a.t(2)?.clone_tensor()
    });
    def(r, "aten::_functional_assert_scalar", |a| {
        call(
            "aten::_assert_scalar",
            vec![a.v(0)?.clone(), a.v(1)?.clone()],
        )?;
        a.t(2)?.clone_tensor()
    });
    for (functional, check) in [
        (
            "aten::_functional_sym_constrain_range",
            "aten::sym_constrain_range",
        ),
        (
            "aten::_functional_sym_constrain_range_for_size",
            "aten::sym_constrain_range_for_size",
        ),
    ] {
        def(r, functional, move |a| {
            call(check, a.0[..3].to_vec())?;
            a.t(3)?.clone_tensor()
        });
    }
    def(r, "aten::_safe_softmax", |a| {
        safe_softmax(a.t(0)?, a.int(1)?, a.v(2)?.clone())
    });
    def(r, "aten::_masked_softmax", |a| {
        masked_softmax(a.t(0)?, a.t(1)?, a.oint(2)?, a.oint(3)?)
    });
    def(r, "aten::_masked_scale", |a| {
        let (x, mask, scale) = (a.t(0)?, a.t(1)?, a.f(2)?);
        x.mul(&mask.to_dtype(x.dtype(), false)?)?
            .mul_scalar(Scalar::Float(scale))
    });
    def(r, "aten::data", |a| {
        call_t("aten::detach", vec![a.v(0)?.clone()])
    });
    def(r, "aten::_lazy_clone", |a| a.t(0)?.clone_tensor());
    for (name, dt) in [
        ("aten::_cast_Byte", DType::UInt8),
        ("aten::_cast_Char", DType::Int8),
        ("aten::_cast_Short", DType::Int16),
        ("aten::_cast_Int", DType::Int32),
        ("aten::_cast_Long", DType::Int64),
        ("aten::_cast_Half", DType::Float16),
        ("aten::_cast_Float", DType::Float32),
        ("aten::_cast_Double", DType::Float64),
    ] {
        cast(r, name, dt);
    }
    def(r, "aten::_reshape_from_tensor", |a| {
        let shape = a.t(1)?;
        if shape.dim() != 1 {
            return Err(Error::runtime("shape must be a 1-D tensor"));
        }
        a.t(0)?.reshape(&shape.to_vec::<i64>())
    });
    def(r, "aten::_dim_arange", |a| {
        let (t, d) = (a.t(0)?, a.int(1)?);
        let n = t.dim() as i64;
        let dd = if d < 0 { d + n } else { d };
        let len = *t.sizes().get(dd.max(0) as usize).ok_or_else(|| {
            Error::runtime(format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
                -n,
                n - 1
            ))
        })?;
        ts_tensor::factory::arange(
            Scalar::Int(0),
            Scalar::Int(len),
            Scalar::Int(1),
            Some(DType::Int64),
        )
    });
    def(r, "aten::_efficientzerotensor", |a| {
        a.check_device(3)?;
        ts_tensor::factory::zeros(&a.ints(0)?, a.dtype(1)?)
    });
    def(r, "aten::_to_cpu", |a| a.tensors(0));
    def(r, "aten::flatten_dense_tensors", |a| {
        let flat: Vec<IValue> = a
            .tensors(0)?
            .iter()
            .map(|t| t.reshape(&[-1]).map(IValue::Tensor))
            .collect::<Result<_, _>>()?;
        call_t(
            "aten::cat",
            vec![IValue::list(Type::tensor(), flat), IValue::Int(0)],
        )
    });
    def(r, "aten::unflatten_dense_tensors", |a| {
        let flat = a.t(0)?;
        let mut offset = 0i64;
        let mut out = Vec::new();
        for t in a.tensors(1)? {
            let n = t.numel() as i64;
            out.push(flat.narrow(0, offset, n)?.reshape(&t.sizes())?);
            offset += n;
        }
        Ok(out)
    });
    def(r, "aten::_weight_norm", |a| {
        let (v, g, dim) = (a.t(0)?, a.t(1)?, a.int(2)?);
        let norm = call_t(
            "aten::norm_except_dim",
            vec![tv(v), IValue::Int(2), IValue::Int(dim)],
        )?;
        v.mul(&g.div(&norm)?)
    });
    def(r, "aten::_weight_norm_interface", |a| {
        let (v, g, dim) = (a.t(0)?, a.t(1)?, a.int(2)?);
        let norm = call_t(
            "aten::norm_except_dim",
            vec![tv(v), IValue::Int(2), IValue::Int(dim)],
        )?;
        Ok((v.mul(&g.div(&norm)?)?, norm.reshape(&[-1])?))
    });
    def(r, "aten::_prelu_kernel", |a| {
        call_t("aten::prelu", a.0.clone())
    });
    def(r, "aten::log_sigmoid_forward", |a| {
        let x = a.t(0)?;
        let out = call_t("aten::log_sigmoid", vec![tv(x)])?;
        // ATen's CPU buffer (what its backward reuses): exp(-|x|).
        let buffer = x.abs()?.neg()?.exp()?;
        Ok((out, buffer))
    });
    def(r, "aten::_addmm_activation", |a| {
        let y = call_t("aten::addmm", a.0[..5].to_vec())?;
        if a.b(5)? {
            call_t("aten::gelu", vec![tv(&y), IValue::str("none")])
        } else {
            y.relu()
        }
    });
    def(r, "aten::_trilinear", trilinear);
    def(r, "aten::_compute_linear_combination", |a| {
        // out[i] = sum_j coefficients[i, j] * input[j]
        let (x, c) = (a.t(0)?, a.t(1)?);
        let n = x.sizes().first().copied().unwrap_or(0);
        let rest: Vec<i64> = x.sizes()[1..].to_vec();
        let flat = x.reshape(&[n, -1])?;
        let out = c.to_dtype(x.dtype(), false)?.matmul(&flat)?;
        let mut shape = vec![c.sizes()[0]];
        shape.extend(rest);
        out.reshape(&shape)
    });
    def(r, "aten::_cholesky_solve_helper", |a| {
        call_t("aten::cholesky_solve", a.0.clone())
    });
    def(r, "aten::native_norm", |a| {
        call_t("aten::norm.Scalar", a.0.clone())
    });
    def(r, "aten::native_norm.ScalarOpt_dim_dtype", |a| {
        let x = a.t(0)?;
        let dt = a.dtype(4)?.unwrap_or(x.dtype());
        call_t(
            "aten::norm.ScalarOpt_dim_dtype",
            vec![
                a.v(0)?.clone(),
                a.v(1)?.clone(),
                a.v(2)?.clone(),
                a.v(3)?.clone(),
                IValue::Int(dt.scalar_type_index()),
            ],
        )
    });
    def(r, "aten::embedding_renorm", |a| {
        let w = a.t(0)?.clone_tensor()?;
        let mut args = a.0.clone();
        args[0] = tv(&w);
        call_t("aten::embedding_renorm_", args)
    });
    def(r, "aten::split", |a| {
        call("aten::split_with_sizes", a.0.clone()).map(|mut v| v.remove(0))
    });
    def(r, "aten::_linalg_solve_ex", |a| {
        let (result, info) = pair(call_ts("aten::linalg_solve_ex", a.0.clone())?)?;
        let (lu, pivots, _) = triple(call_ts(
            "aten::linalg_lu_factor_ex",
            vec![a.v(0)?.clone(), IValue::Bool(true), IValue::Bool(false)],
        )?)?;
        Ok((result, lu, pivots, info))
    });
    def(r, "aten::_int_mm", |a| {
        let (x, y) = (a.t(0)?, a.t(1)?);
        if x.dtype() != DType::Int8 || y.dtype() != DType::Int8 {
            return Err(Error::runtime(format!(
                "_int_mm expects int8 operands, got {} and {}",
                x.dtype().scalar_type_name(),
                y.dtype().scalar_type_name()
            )));
        }
        let p = x
            .to_dtype(DType::Int64, false)?
            .matmul(&y.to_dtype(DType::Int64, false)?)?;
        p.to_dtype(DType::Int32, false)
    });
    register_legacy_convolutions(r);
    register_batch_norms(r);
    register_views_and_copies(r);
    register_fused_cells(r);
    def(r, "aten::_rowwise_prune", |a| {
        // The rows of `weight` where `mask` is set, and for every row its index among the
        // kept rows (-1 when pruned).
        let (w, mask) = (a.t(0)?, a.t(1)?);
        if mask.dim() != 1 || w.dim() != 2 || mask.sizes()[0] != w.sizes()[0] {
            return Err(Error::runtime(
                "_rowwise_prune expects a 2-D weight and a 1-D mask with one entry per row",
            ));
        }
        let keep = mask.to_vec::<bool>();
        let mut kept = Vec::new();
        let mut next = 0i64;
        let indices: Vec<i64> = keep
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                if k {
                    kept.push(i as i64);
                    next += 1;
                    next - 1
                } else {
                    -1
                }
            })
            .collect();
        let idx = Tensor::from_vec(kept.clone(), &[kept.len() as i64])?;
        let pruned = call_t("aten::index_select", vec![tv(w), IValue::Int(0), tv(&idx)])?;
        let n = indices.len() as i64;
        let ci = Tensor::from_vec(indices, &[n])?.to_dtype(dtype_at(a, 2)?, false)?;
        Ok((pruned, ci))
    });
    // (query, key, value, attn_mask, dropout_p, is_causal, dropout_mask, *, scale, enable_gqa)
    def(r, "aten::_scaled_dot_product_attention_math", |a| {
        let (q, k, v) = (a.t(0)?, a.t(1)?, a.t(2)?);
        let (p, causal) = (a.f(4)?, a.b(5)?);
        let d = *q.sizes().last().unwrap_or(&1) as f64;
        let scale = a.of(7)?.unwrap_or(1.0 / d.sqrt());
        let (l, s) = (q.sizes()[q.dim() - 2], k.sizes()[k.dim() - 2]);
        let (k, v) = if a.b(8)? && k.dim() >= 3 && q.sizes()[q.dim() - 3] != k.sizes()[k.dim() - 3]
        {
            // Grouped-query attention: repeat the key/value heads.
            let rep = q.sizes()[q.dim() - 3] / k.sizes()[k.dim() - 3];
            let d3 = k.dim() as i64 - 3;
            (
                call_t(
                    "aten::repeat_interleave.self_int",
                    vec![tv(k), IValue::Int(rep), IValue::Int(d3), IValue::None],
                )?,
                call_t(
                    "aten::repeat_interleave.self_int",
                    vec![tv(v), IValue::Int(rep), IValue::Int(d3), IValue::None],
                )?,
            )
        } else {
            (k.clone(), v.clone())
        };
        let mut scores = q
            .matmul(&k.transpose(-2, -1)?)?
            .mul_scalar(Scalar::Float(scale))?;
        if causal {
            let ones = ts_tensor::factory::full(&[l, s], Scalar::Bool(true), Some(DType::Bool))?;
            let keep = call_t("aten::tril", vec![tv(&ones), IValue::Int(0)])?;
            let drop = keep.logical_not()?;
            scores = call_t(
                "aten::masked_fill.Scalar",
                vec![tv(&scores), tv(&drop), IValue::Double(f64::NEG_INFINITY)],
            )?;
        }
        if let Some(m) = a.ot(3)? {
            scores = if m.dtype() == DType::Bool {
                call_t(
                    "aten::masked_fill.Scalar",
                    vec![
                        tv(&scores),
                        tv(&m.logical_not()?),
                        IValue::Double(f64::NEG_INFINITY),
                    ],
                )?
            } else {
                scores.add(m, Scalar::Int(1))?
            };
        }
        let attn = call_t(
            "aten::softmax.int",
            vec![tv(&scores), IValue::Int(-1), IValue::None],
        )?;
        let dropped = if p > 0.0 {
            let mask = match a.ot(6)? {
                Some(m) => m.clone(),
                None => {
                    let keep = ts_tensor::factory::empty_like(&attn, Some(DType::Float64))?;
                    keep.bernoulli_(1.0 - p, None)?;
                    keep
                }
            };
            attn.mul(&mask.to_dtype(attn.dtype(), false)?)?
                .div_scalar(Scalar::Float(1.0 - p))?
        } else {
            attn.clone()
        };
        Ok((dropped.matmul(&v)?, attn))
    });
}

/// `x @ y` computed in `out_dtype` (the `.dtype` overloads of the matrix products).
fn in_dtype(t: &Tensor, a: &Args, i: usize) -> Result<IValue, Error> {
    Ok(IValue::Tensor(t.to_dtype(dtype_at(a, i)?, false)?))
}

fn dtype_at(a: &Args, i: usize) -> Result<DType, Error> {
    a.dtype(i)?
        .ok_or_else(|| Error::runtime("out_dtype must be a dtype"))
}

fn register_views_and_copies(r: &Registry) {
    for name in ["aten::mT", "aten::mT.a"] {
        def(r, name, |a| {
            let t = a.t(0)?;
            if t.dim() < 2 {
                return Err(Error::runtime(format!(
                    "tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.",
                    t.dim()
                )));
            }
            t.transpose(-2, -1)
        });
    }
    for name in ["aten::mH", "aten::mH.a"] {
        def(r, name, |a| {
            let t = a.t(0)?;
            if t.dim() < 2 {
                return Err(Error::runtime(format!(
                    "tensor.mH is only supported on matrices or batches of matrices. Got {}-D tensor.",
                    t.dim()
                )));
            }
            call_t("aten::adjoint", vec![tv(t)])
        });
    }
    def(r, "aten::numpy_T.a", |a| {
        call_t("aten::numpy_T", a.0.clone())
    });
    def(r, "aten::index_put.hacked_twin", |a| {
        call_t("aten::index_put", a.0.clone())
    });
    def(r, "aten::index_put_.hacked_twin", |a| {
        call_t("aten::index_put_", a.0.clone())
    });
    // _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format)
    def(r, "aten::_to_copy", |a| {
        call_t(
            "aten::to.dtype_layout",
            vec![
                a.v(0)?.clone(),
                a.v(1)?.clone(),
                a.v(2)?.clone(),
                a.v(3)?.clone(),
                a.v(4)?.clone(),
                a.v(5)?.clone(),
                IValue::Bool(true),
                a.v(6)?.clone(),
            ],
        )
    });
    def(r, "aten::new_empty_strided", |a| {
        a.check_device(5)?;
        let t = a.t(0)?;
        Tensor::empty_strided(&a.ints(1)?, &a.ints(2)?, a.dtype(3)?.unwrap_or(t.dtype()))
    });
    def(r, "aten::randint_like", |a| {
        let out = ts_tensor::factory::empty_like(a.t(0)?, a.dtype(2)?)?;
        out.random_(0, a.int(1)?, None)?;
        Ok(out)
    });
    def(r, "aten::_local_scalar_dense", |a| {
        let t = a.t(0)?;
        if t.numel() != 1 {
            return Err(Error::runtime(format!(
                "a Tensor with {} elements cannot be converted to Scalar",
                t.numel()
            )));
        }
        call("aten::item", vec![tv(t)]).map(|mut v| v.remove(0))
    });
    def(r, "aten::_adaptive_avg_pool2d", |a| {
        call_t("aten::adaptive_avg_pool2d", a.0.clone())
    });
    def(r, "aten::_adaptive_avg_pool3d", |a| {
        call_t("aten::adaptive_avg_pool3d", a.0.clone())
    });
    def(r, "aten::empty_permuted", |a| {
        a.check_device(4)?;
        let (size, layout) = (a.ints(0)?, a.ints(1)?);
        let mut perm = layout.clone();
        perm.sort_unstable();
        if layout.len() != size.len() || perm.iter().enumerate().any(|(i, &p)| p != i as i64) {
            return Err(Error::runtime(format!(
                "Number of dimensions in size does not match the length of the physical_layout; or physical_layout is not a permutation: {size:?} {layout:?}"
            )));
        }
        // Dense strides in the physical order, mapped back to the logical dimensions.
        let mut strides = vec![0i64; size.len()];
        let mut acc = 1i64;
        for &d in layout.iter().rev() {
            strides[d as usize] = acc;
            acc *= size[d as usize].max(1);
        }
        Tensor::empty_strided(
            &size,
            &strides,
            a.dtype(2)?.unwrap_or_else(ts_tensor::default_dtype),
        )
    });
    def(r, "aten::zero", |a| {
        ts_tensor::factory::zeros_like(a.t(0)?, None)
    });
    def(r, "aten::_conj_copy", |a| {
        call_t("aten::conj", a.0.clone())?.clone_tensor()
    });
    def(r, "aten::view_as_real_copy", |a| {
        call_t("aten::view_as_real", a.0.clone())?.clone_tensor()
    });
    def(r, "aten::view_as_complex_copy", |a| {
        call_t("aten::view_as_complex", a.0.clone())?.clone_tensor()
    });
    def(r, "aten::special_spherical_bessel_j0", |a| {
        // sin(x) / x, with the limit 1 at 0.
        let x = a.t(0)?;
        let xf = if x.dtype().is_floating_point() {
            x.clone()
        } else {
            x.to_dtype(ts_tensor::default_dtype(), false)?
        };
        let q = xf.sin()?.div(&xf)?;
        let zero = call_t("aten::eq.Scalar", vec![tv(&xf), IValue::Int(0)])?;
        call_t(
            "aten::masked_fill.Scalar",
            vec![tv(&q), tv(&zero), IValue::Double(1.0)],
        )
    });
    def(r, "aten::mm.dtype", |a| {
        let x = in_dtype(a.t(0)?, a, 2)?;
        let y = in_dtype(a.t(1)?, a, 2)?;
        call_t("aten::mm", vec![x, y])
    });
    def(r, "aten::bmm.dtype", |a| {
        let x = in_dtype(a.t(0)?, a, 2)?;
        let y = in_dtype(a.t(1)?, a, 2)?;
        call_t("aten::bmm", vec![x, y])
    });
    for (name, target) in [
        ("aten::addmm.dtype", "aten::addmm"),
        ("aten::baddbmm.dtype", "aten::baddbmm"),
    ] {
        def(r, name, move |a| {
            let args = vec![
                in_dtype(a.t(0)?, a, 3)?,
                in_dtype(a.t(1)?, a, 3)?,
                in_dtype(a.t(2)?, a, 3)?,
                a.v(4)?.clone(),
                a.v(5)?.clone(),
            ];
            call_t(target, args)
        });
    }
    def(r, "aten::addbmm", |a| {
        // beta * self + alpha * sum_b(batch1[b] @ batch2[b])
        let (x, b1, b2) = (a.t(0)?, a.t(1)?, a.t(2)?);
        if b1.dim() != 3 || b2.dim() != 3 {
            return Err(Error::runtime(format!(
                "batch1 must be a 3D tensor, got {}D and {}D",
                b1.dim(),
                b2.dim()
            )));
        }
        let prod = b1.bmm(b2)?.sum(Some(&[0]), false, None)?;
        call_t(
            "aten::add.Tensor",
            vec![
                IValue::Tensor(if a.s(3)?.to_f64() == 0.0 {
                    ts_tensor::factory::zeros_like(x, None)?
                } else {
                    x.mul_scalar(a.s(3)?)?
                }),
                tv(&prod),
                a.v(4)?.clone(),
            ],
        )?
        .expand(&prod.sizes(), false)?
        .contiguous()
    });
    for (name, target) in [
        ("aten::_cummax_helper", "aten::cummax"),
        ("aten::_cummin_helper", "aten::cummin"),
    ] {
        def(r, name, move |a| {
            let (v, i) = pair(call_ts(target, vec![a.v(0)?.clone(), a.v(3)?.clone()])?)?;
            ts_tensor::resize_out_and_copy(a.t(1)?, &v)?;
            ts_tensor::resize_out_and_copy(a.t(2)?, &i)?;
            Ok(IValue::None)
        });
    }
    def(r, "aten::_ncf_unsqueeze", |a| {
        // A per-channel vector viewed as [1, C, 1, ...] for an input of `ndim` dimensions.
        let (t, ndim) = (a.t(0)?, a.int(1)?);
        let mut shape = vec![1i64; ndim.max(2) as usize];
        shape[1] = -1;
        t.reshape(&shape)
    });
    def(r, "aten::_ncf_view", |a| {
        // The leading dims of `input_shape`, then `normalized_ndim` ones.
        let (t, input_shape, nd) = (a.t(0)?, a.ints(1)?, a.int(2)?);
        let lead = input_shape.len().saturating_sub(nd.max(0) as usize);
        let mut shape = input_shape[..lead].to_vec();
        shape.resize(input_shape.len(), 1);
        call_t("aten::view", vec![tv(t), ints(&shape)])
    });
}

fn register_fused_cells(r: &Registry) {
    // (input_gates, hidden_gates, cx, input_bias, hidden_bias) -> (hy, cy, workspace)
    def(r, "aten::_thnn_fused_lstm_cell", |a| {
        let mut gates = a.t(0)?.add(a.t(1)?, Scalar::Int(1))?;
        for b in [a.ot(3)?, a.ot(4)?].into_iter().flatten() {
            gates = gates.add(b, Scalar::Int(1))?;
        }
        let h = gates.sizes()[1] / 4;
        let part = |k: i64| gates.narrow(1, k * h, h);
        let i = part(0)?.sigmoid()?;
        let f = part(1)?.sigmoid()?;
        let g = part(2)?.tanh()?;
        let o = part(3)?.sigmoid()?;
        let cy = f.mul(a.t(2)?)?.add(&i.mul(&g)?, Scalar::Int(1))?;
        let hy = o.mul(&cy.tanh()?)?;
        let workspace = call_t(
            "aten::cat",
            vec![IValue::tensor_list([i, f, g, o]), IValue::Int(1)],
        )?;
        Ok((hy, cy, workspace))
    });
    // (input_gates, hidden_gates, hx, input_bias, hidden_bias) -> (hy, workspace)
    def(r, "aten::_thnn_fused_gru_cell", |a| {
        let (mut ig, mut hg, hx) = (a.t(0)?.clone(), a.t(1)?.clone(), a.t(2)?);
        if let Some(b) = a.ot(3)? {
            ig = ig.add(b, Scalar::Int(1))?;
        }
        if let Some(b) = a.ot(4)? {
            hg = hg.add(b, Scalar::Int(1))?;
        }
        let h = ig.sizes()[1] / 3;
        let r_gate = ig
            .narrow(1, 0, h)?
            .add(&hg.narrow(1, 0, h)?, Scalar::Int(1))?
            .sigmoid()?;
        let z = ig
            .narrow(1, h, h)?
            .add(&hg.narrow(1, h, h)?, Scalar::Int(1))?
            .sigmoid()?;
        let nh = hg.narrow(1, 2 * h, h)?;
        let n = ig
            .narrow(1, 2 * h, h)?
            .add(&r_gate.mul(&nh)?, Scalar::Int(1))?
            .tanh()?;
        // hy = n + z * (hx - n)
        let hy = n.add(&z.mul(&hx.sub(&n, Scalar::Int(1))?)?, Scalar::Int(1))?;
        let workspace = call_t(
            "aten::cat",
            vec![
                IValue::tensor_list([r_gate, z, nh, hx.clone(), n]),
                IValue::Int(1),
            ],
        )?;
        Ok((hy, workspace))
    });
    // (qkv [B, T, 3D], qkv_bias [3D], num_heads) -> q, k, v as [B, heads, T, D / heads]
    def(r, "aten::_transform_bias_rescale_qkv", |a| {
        let (qkv, bias, heads) = (a.t(0)?, a.t(1)?, a.int(2)?);
        if qkv.dim() != 3 {
            return Err(Error::runtime("expected qkv to be 3-D [B, T, 3 * D]"));
        }
        let s = qkv.sizes();
        let (b, t, d3) = (s[0], s[1], s[2]);
        let d = d3 / 3;
        if d3 % 3 != 0 || heads <= 0 || d % heads != 0 {
            return Err(Error::runtime(format!(
                "qkv last dimension {d3} must be 3 * num_heads * head_dim (num_heads={heads})"
            )));
        }
        let dh = d / heads;
        let x = qkv.add(bias, Scalar::Int(1))?;
        let split = |k: i64| -> Result<Tensor, Error> {
            x.narrow(2, k * d, d)?
                .reshape(&[b, t, heads, dh])?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(0)?.div_scalar(Scalar::Float((dh as f64).sqrt()))?;
        Ok((q, split(1)?, split(2)?))
    });
    def(r, "aten::_fused_rms_norm", |a| {
        let x = a.t(0)?;
        let k = a.ints(1)?.len() as i64;
        let out = call_t("aten::rms_norm", a.0.clone())?;
        let eps = match a.of(3)? {
            Some(e) => e,
            None if x.dtype() == DType::Float64 => f64::EPSILON,
            None => f32::EPSILON as f64,
        };
        let dims: Vec<i64> = (x.dim() as i64 - k..x.dim() as i64).collect();
        let rstd = x
            .mul(x)?
            .mean(Some(&dims), true, None)?
            .add_scalar(Scalar::Float(eps), Scalar::Int(1))?
            .rsqrt()?;
        Ok((out, rstd))
    });
}
