//! Quantized operators: `aten` quantize/dequantize and queries, the `quantized::` FBGEMM
//! operators quantized models call (prepacked linear/conv, add/mul, hardswish, dynamic linear
//! and LSTM), and quantized overloads of the `aten` operators those models apply to quantized
//! tensors (pools, flatten, relu, hardsigmoid), all on `ts_tensor::quantized`'s kernels.
//!
//! The `aten` overloads wrap the operator registered before: a call with a quantized tensor
//! argument runs the quantized kernel, any other call the previous operation unchanged. Other
//! `aten` operators refuse quantized tensors (see `tensor_ops::def`).

pub mod packed;

use ts_core::IValue;
use ts_tensor::quantized::{self as q, QConvParams, QDType, QScheme};
use ts_tensor::{DType, Error, Tensor};

use crate::registry::{op, OperatorKind, Registry};
use crate::stack::pop_n;
use crate::tensor_ops::{def, note_registration_error, Args, Outputs};
use packed::{payload, CellParams, Conv2dPacked, LinearPacked, CONV2D_PACKED, LINEAR_PACKED};

/// The quantized dtype a `ScalarType` argument names.
fn qdtype(i: i64, what: &str) -> Result<QDType, Error> {
    QDType::from_scalar_type_index(i).ok_or_else(|| {
        let name = match i {
            16 => "torch.quint4x2".to_string(),
            17 => "torch.quint2x4".to_string(),
            _ => DType::from_scalar_type_index(i)
                .map(|d| format!("torch.{}", d.name()))
                .unwrap_or_else(|| format!("ScalarType {i}")),
        };
        Error::runtime(format!(
            "{what}: {name} is not a supported quantized dtype (torchscript-rs supports qint8, quint8 and qint32)"
        ))
    })
}

fn usize_pair(v: &[i64], what: &str, name: &str) -> Result<[usize; 2], Error> {
    let get = |i: usize| -> Result<usize, Error> {
        let x = if v.len() == 1 {
            v[0]
        } else {
            *v.get(i).unwrap_or(&-1)
        };
        usize::try_from(x).map_err(|_| {
            Error::runtime(format!(
                "{what}: {name} must be one or two non-negative ints, got {v:?}"
            ))
        })
    };
    if v.is_empty() || v.len() > 2 {
        return Err(Error::runtime(format!(
            "{what}: {name} must be one or two non-negative ints, got {v:?}"
        )));
    }
    Ok([get(0)?, get(1)?])
}

fn linear_packed(a: &Args, i: usize) -> Result<LinearPacked, Error> {
    payload(a.v(i)?, LINEAR_PACKED)
}

fn conv_packed(a: &Args, i: usize) -> Result<Conv2dPacked, Error> {
    payload(a.v(i)?, CONV2D_PACKED)
}

/// Registers PyTorch's `full_name` again so that calls with a quantized tensor among the first
/// `n` (all) arguments run `f`; others run the operation registered before.
fn wrap_quantized<O, F>(r: &Registry, full_name: &str, f: F)
where
    O: Outputs,
    F: Fn(&Args) -> Result<O, Error> + Send + Sync + 'static,
{
    if !r.is_defined(full_name) {
        note_registration_error(format!(
            "{full_name}: no operator to add a quantized overload to"
        ));
        return;
    }
    let Some(schema) = crate::schema_table::schema_line(full_name) else {
        note_registration_error(format!("no PyTorch schema named '{full_name}'"));
        return;
    };
    let full_name = full_name.to_string();
    r.define(
        schema,
        Box::new(move |r, _| {
            // The definition this one wraps, built just before it (same name, same operator).
            let prev = r.find(&full_name)?;
            let OperatorKind::Op(prev_op) = prev.kind.clone() else {
                note_registration_error(format!(
                    "{full_name}: cannot wrap a node-dependent operator"
                ));
                return None;
            };
            let n = prev.schema.arguments.len();
            Some(OperatorKind::Op(op(move |s| {
                let base = s.len().saturating_sub(n);
                let quantized = s[base..]
                    .iter()
                    .any(|v| matches!(v, IValue::Tensor(t) if t.is_quantized()));
                if !quantized {
                    return prev_op(s);
                }
                let args = Args(pop_n(s, n)?);
                f(&args)?.push_to(s);
                Ok(())
            })))
        }),
    );
}

/// A raw operation under PyTorch's schema `full_name`.
fn def_raw(
    r: &Registry,
    full_name: &str,
    f: impl Fn(&mut Vec<IValue>) -> Result<(), Error> + Send + Sync + 'static,
) {
    if let Err(e) = r.register_pt(full_name, op(f)) {
        note_registration_error(format!("{full_name}: {}", e.message));
    }
}

fn opt_tensor(t: Option<Tensor>) -> IValue {
    t.map(IValue::Tensor).unwrap_or(IValue::None)
}

/// Registers the quantized operators (after the tensor operators, whose `aten` overloads the
/// quantized ones wrap).
pub fn register(r: &Registry) {
    register_aten(r);
    register_linear(r);
    register_conv(r);
    register_elementwise(r);
    register_wrapped(r);
    register_lstm(r);
}

fn register_aten(r: &Registry) {
    def(r, "aten::quantize_per_tensor", |a| {
        let dt = qdtype(a.int(3)?, "quantize_per_tensor")?;
        q::quantize_per_tensor(a.t(0)?, a.f(1)?, a.int(2)?, dt)
    });
    def(r, "aten::quantize_per_tensor.tensor_qparams", |a| {
        let dt = qdtype(a.int(3)?, "quantize_per_tensor")?;
        let scale = a.t(1)?.to_vec::<f64>();
        let zp = a.t(2)?.to_vec::<i64>();
        if scale.len() != 1 || zp.len() != 1 {
            return Err(Error::runtime(
                "quantize_per_tensor: scale and zero_point must hold one element each",
            ));
        }
        q::quantize_per_tensor(a.t(0)?, scale[0], zp[0], dt)
    });
    def(r, "aten::quantize_per_channel", |a| {
        let dt = qdtype(a.int(4)?, "quantize_per_channel")?;
        let x = a.t(0)?;
        let axis = a.int(3)?;
        let nd = x.dim() as i64;
        let axis = if axis < 0 { axis + nd } else { axis };
        if axis < 0 || axis >= nd {
            return Err(Error::runtime(format!(
                "quantize_per_channel: axis {} is out of range for a {nd}-d tensor",
                a.int(3)?
            )));
        }
        q::quantize_per_channel(
            x,
            a.t(1)?.to_vec::<f64>(),
            a.t(2)?.to_vec::<i64>(),
            axis as usize,
            dt,
        )
    });
    let dequant = |t: &Tensor| -> Result<Tensor, Error> {
        if t.is_quantized() {
            q::dequantize(t)
        } else {
            t.to_dtype(DType::Float32, false)
        }
    };
    def(r, "aten::dequantize.self", move |a| dequant(a.t(0)?));
    def(r, "aten::dequantize.tensor", move |a| dequant(a.t(0)?));
    def(r, "aten::dequantize.tensors", move |a| {
        a.tensors(0)?
            .iter()
            .map(dequant)
            .collect::<Result<Vec<_>, _>>()
    });
    def(r, "aten::dequantize.list", move |a| {
        a.tensors(0)?
            .iter()
            .map(dequant)
            .collect::<Result<Vec<_>, _>>()
    });
    def(r, "aten::int_repr", |a| q::int_repr(a.t(0)?, "int_repr"));
    def(r, "aten::q_scale", |a| {
        Ok(q::quantizer_of(a.t(0)?, "q_scale")?
            .per_tensor("q_scale")?
            .0)
    });
    def(r, "aten::q_zero_point", |a| {
        Ok(q::quantizer_of(a.t(0)?, "q_zero_point")?
            .per_tensor("q_zero_point")?
            .1)
    });
    def(r, "aten::qscheme", |a| {
        Ok(q::quantizer_of(a.t(0)?, "qscheme")?.qscheme_index())
    });
    let per_channel = |t: &Tensor, what: &str| -> Result<(Vec<f64>, Vec<i64>, usize), Error> {
        match &q::quantizer_of(t, what)?.scheme {
            QScheme::PerChannelAffine {
                scales,
                zero_points,
                axis,
            } => Ok((scales.clone(), zero_points.clone(), *axis)),
            QScheme::PerTensorAffine { .. } => Err(Error::runtime(format!(
                "{what}: expected a per-channel quantized tensor, got a per-tensor one"
            ))),
        }
    };
    def(r, "aten::q_per_channel_scales", move |a| {
        let (s, _, _) = per_channel(a.t(0)?, "q_per_channel_scales")?;
        let n = s.len() as i64;
        Tensor::from_vec(s, &[n])
    });
    def(r, "aten::q_per_channel_zero_points", move |a| {
        let (_, z, _) = per_channel(a.t(0)?, "q_per_channel_zero_points")?;
        let n = z.len() as i64;
        Tensor::from_vec(z, &[n])
    });
    def(r, "aten::q_per_channel_axis", move |a| {
        Ok(per_channel(a.t(0)?, "q_per_channel_axis")?.2 as i64)
    });
    // The dtype of a quantized tensor is its quantized dtype; `is_quantized` tells.
    def_raw(r, "prim::dtype", |s| {
        let t = crate::stack::pop_tensor(s)?;
        let d = match t.quantizer() {
            Some(qz) => qz.dtype.scalar_type_index(),
            None => t.dtype().scalar_type_index(),
        };
        s.push(IValue::Int(d));
        Ok(())
    });
    def_raw(r, "prim::is_quantized", |s| {
        let t = crate::stack::pop_tensor(s)?;
        s.push(IValue::Bool(t.is_quantized()));
        Ok(())
    });
}

fn register_linear(r: &Registry) {
    def(r, "quantized::linear_prepack", |a| {
        let weight = a.t(0)?.clone();
        packed::check_weight(&weight, 2, "quantized::linear_prepack")?;
        let bias = a.ot(1)?.cloned();
        Ok(packed::wrap(LINEAR_PACKED, LinearPacked { weight, bias }))
    });
    def_raw(r, "quantized::linear_unpack", |s| {
        let args = Args(pop_n(s, 1)?);
        let p = linear_packed(&args, 0)?;
        s.push(IValue::Tensor(p.weight));
        s.push(opt_tensor(p.bias));
        Ok(())
    });
    for (name, relu) in [
        ("quantized::linear", false),
        ("quantized::linear_relu", true),
    ] {
        def(r, name, move |a| {
            let p = linear_packed(a, 1)?;
            q::qlinear(
                a.t(0)?,
                &p.weight,
                p.bias.as_ref(),
                a.f(2)?,
                a.int(3)?,
                relu,
            )
        });
    }
    for (name, relu) in [
        ("quantized::linear_dynamic", false),
        ("quantized::linear_relu_dynamic", true),
    ] {
        def(r, name, move |a| {
            let p = linear_packed(a, 1)?;
            q::qlinear_dynamic(a.t(0)?, &p.weight, p.bias.as_ref(), a.b(2)?, relu)
        });
    }
}

fn register_conv(r: &Registry) {
    def(r, "quantized::conv2d_prepack", |a| {
        let what = "quantized::conv2d_prepack";
        let params = QConvParams {
            stride: usize_pair(&a.ints(2)?, what, "stride")?,
            padding: usize_pair(&a.ints(3)?, what, "padding")?,
            dilation: usize_pair(&a.ints(4)?, what, "dilation")?,
            groups: usize::try_from(a.int(5)?)
                .ok()
                .filter(|&g| g > 0)
                .ok_or_else(|| Error::runtime(format!("{what}: groups must be positive")))?,
        };
        packed::make_conv(
            a.t(0)?.clone(),
            a.ot(1)?.cloned(),
            params,
            [0, 0],
            false,
            what,
        )
    });
    def_raw(r, "quantized::conv2d_unpack", |s| {
        let args = Args(pop_n(s, 1)?);
        let p = conv_packed(&args, 0)?;
        s.push(IValue::Tensor(p.weight));
        s.push(opt_tensor(p.bias));
        Ok(())
    });
    let pair = |v: [usize; 2]| vec![v[0] as i64, v[1] as i64];
    def(r, "quantized::conv2d_stride", move |a| {
        Ok(pair(conv_packed(a, 0)?.params.stride))
    });
    def(r, "quantized::conv2d_padding", move |a| {
        Ok(pair(conv_packed(a, 0)?.params.padding))
    });
    def(r, "quantized::conv2d_dilation", move |a| {
        Ok(pair(conv_packed(a, 0)?.params.dilation))
    });
    def(r, "quantized::conv2d_output_padding", |a| {
        Ok(conv_packed(a, 0)?.output_padding.to_vec())
    });
    def(r, "quantized::conv2d_groups", |a| {
        Ok(conv_packed(a, 0)?.params.groups as i64)
    });
    def(r, "quantized::conv2d_transpose", |a| {
        Ok(conv_packed(a, 0)?.transposed as i64)
    });
    for (name, relu) in [
        ("quantized::conv2d.new", false),
        ("quantized::conv2d_relu.new", true),
    ] {
        def(r, name, move |a| {
            let p = conv_packed(a, 1)?;
            q::qconv2d(
                a.t(0)?,
                &p.weight,
                p.bias.as_ref(),
                &p.params,
                a.f(2)?,
                a.int(3)?,
                relu,
            )
        });
    }
}

fn register_elementwise(r: &Registry) {
    for (name, relu) in [("quantized::add", false), ("quantized::add_relu", true)] {
        def(r, name, move |a| {
            q::qadd(a.t(0)?, a.t(1)?, a.f(2)?, a.int(3)?, relu)
        });
    }
    for (name, relu) in [("quantized::mul", false), ("quantized::mul_relu", true)] {
        def(r, name, move |a| {
            q::qmul(a.t(0)?, a.t(1)?, a.f(2)?, a.int(3)?, relu)
        });
    }
    def(r, "quantized::hardswish", |a| {
        q::qhardswish(a.t(0)?, a.f(1)?, a.int(2)?)
    });
}

fn register_wrapped(r: &Registry) {
    wrap_quantized(r, "aten::max_pool2d", |a| {
        let what = "max_pool2d";
        let kernel = usize_pair(&a.ints(1)?, what, "kernel_size")?;
        let stride = match a.ints(2)? {
            s if s.is_empty() => kernel,
            s => usize_pair(&s, what, "stride")?,
        };
        q::qmax_pool2d(
            a.t(0)?,
            kernel,
            stride,
            usize_pair(&a.ints(3)?, what, "padding")?,
            usize_pair(&a.ints(4)?, what, "dilation")?,
            a.b(5)?,
        )
    });
    wrap_quantized(r, "aten::adaptive_avg_pool2d", |a| {
        let size = usize_pair(&a.ints(1)?, "adaptive_avg_pool2d", "output_size")?;
        q::qadaptive_avg_pool2d(a.t(0)?, size)
    });
    wrap_quantized(r, "aten::flatten.using_ints", |a| {
        let x = a.t(0)?;
        let view = q::plain_view(x)?.flatten(a.int(1)?, a.int(2)?)?;
        q::requantize_view(x, &view, "flatten")
    });
    wrap_quantized(r, "aten::hardsigmoid", |a| q::qhardsigmoid(a.t(0)?));
    wrap_quantized(r, "aten::relu", |a| q::qrelu(a.t(0)?));
}

fn register_lstm(r: &Registry) {
    def(r, "aten::quantized_lstm.input", |a| {
        let what = "quantized_lstm";
        let hx = a.tensors(1)?;
        let IValue::List(params) = a.v(2)? else {
            return Err(Error::runtime(format!("{what}: params must be a list")));
        };
        let cells = params
            .items
            .read()
            .iter()
            .map(|p| payload::<CellParams>(p, packed::CELL_PARAMS).map(|c| c.cell))
            .collect::<Result<Vec<_>, _>>()?;
        if a.b(6)? {
            return Err(Error::runtime(format!(
                "{what}: training mode is not supported by torchscript-rs"
            )));
        }
        if !a.b(10)? {
            return Err(Error::runtime(format!(
                "{what}: only the dynamic (use_dynamic=True) quantized LSTM is supported by torchscript-rs"
            )));
        }
        if let Some(d) = a.oint(9)? {
            if d != QDType::QInt8.scalar_type_index() {
                return Err(Error::runtime(format!(
                    "{what}: only qint8 dynamic quantization is supported by torchscript-rs (dtype {d})"
                )));
            }
        }
        if hx.len() != 2 {
            return Err(Error::runtime(format!("{what}: hx must hold h0 and c0")));
        }
        let num_layers = usize::try_from(a.int(4)?)
            .map_err(|_| Error::runtime(format!("{what}: num_layers must be non-negative")))?;
        q::quantized_lstm_dynamic(
            a.t(0)?,
            &hx[0],
            &hx[1],
            &cells,
            num_layers,
            a.b(7)?,
            a.b(8)?,
        )
    });
}
