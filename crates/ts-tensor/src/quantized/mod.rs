//! Quantized tensors: integer elements plus a [`Quantizer`] that maps them to real values
//! (`real = (q - zero_point) * scale`, per tensor or per channel), as ATen's affine quantizers.
//!
//! A quantized tensor is an ordinary `int8`/`uint8`/`int32` tensor handle that also carries a
//! quantizer (outside the metadata lock, like a nested tensor's lengths), so views and kernels
//! written for integers never see it by accident: operators that understand quantized tensors
//! check [`Tensor::quantizer`] and the others refuse them (see `ts-ops`'s quantized bindings).
//! The arithmetic follows FBGEMM, PyTorch's x86 back end, operation for operation in `f32` with
//! round-half-to-even, so results are bit-identical to PyTorch's (see `kernels.rs`).

use std::sync::Arc;

use crate::{DType, Error, Result, Tensor};

mod depthwise;
mod fused;
mod kernels;
mod lstm;
mod qgemm;
mod weight_cache;

pub use kernels::{
    qadaptive_avg_pool2d, qadd, qconv2d, qhardsigmoid, qhardswish, qlinear, qlinear_dynamic,
    qmax_pool2d, qmul, qrelu, QConvParams,
};
pub use lstm::{quantized_lstm_dynamic, DynamicLinearWeights, DynamicLstmCell};

/// The quantized element types (`torch.qint8`, `torch.quint8`, `torch.qint32`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum QDType {
    QInt8,
    QUInt8,
    QInt32,
}

impl QDType {
    /// PyTorch's ScalarType number (what `x.dtype` is in TorchScript).
    pub fn scalar_type_index(self) -> i64 {
        match self {
            QDType::QInt8 => 12,
            QDType::QUInt8 => 13,
            QDType::QInt32 => 14,
        }
    }

    /// The quantized dtype with ScalarType number `i`; `quint4x2`/`quint2x4` (16, 17) and
    /// non-quantized numbers are `None`.
    pub fn from_scalar_type_index(i: i64) -> Option<QDType> {
        match i {
            12 => Some(QDType::QInt8),
            13 => Some(QDType::QUInt8),
            14 => Some(QDType::QInt32),
            _ => None,
        }
    }

    /// The integer dtype that stores the elements.
    pub fn storage_dtype(self) -> DType {
        match self {
            QDType::QInt8 => DType::Int8,
            QDType::QUInt8 => DType::UInt8,
            QDType::QInt32 => DType::Int32,
        }
    }

    /// The quantized dtype stored as `d`, if any.
    pub fn from_storage_dtype(d: DType) -> Option<QDType> {
        match d {
            DType::Int8 => Some(QDType::QInt8),
            DType::UInt8 => Some(QDType::QUInt8),
            DType::Int32 => Some(QDType::QInt32),
            _ => None,
        }
    }

    /// The smallest and largest representable integers.
    pub fn range(self) -> (i64, i64) {
        match self {
            QDType::QInt8 => (-128, 127),
            QDType::QUInt8 => (0, 255),
            QDType::QInt32 => (i32::MIN as i64, i32::MAX as i64),
        }
    }

    /// PyTorch's name (`QUInt8`), as error messages print it.
    pub fn name(self) -> &'static str {
        match self {
            QDType::QInt8 => "QInt8",
            QDType::QUInt8 => "QUInt8",
            QDType::QInt32 => "QInt32",
        }
    }
}

/// How integers map to real values.
#[derive(Clone, Debug, PartialEq)]
pub enum QScheme {
    /// One scale and zero point for the whole tensor (`torch.per_tensor_affine`).
    PerTensorAffine { scale: f64, zero_point: i64 },
    /// One scale and zero point per index of dimension `axis` (`torch.per_channel_affine`).
    PerChannelAffine {
        scales: Vec<f64>,
        zero_points: Vec<i64>,
        axis: usize,
    },
}

/// The quantizer of a quantized tensor: element type and scheme.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantizer {
    pub dtype: QDType,
    pub scheme: QScheme,
}

impl Quantizer {
    /// PyTorch's QScheme number (`torch.per_tensor_affine` is 0, `per_channel_affine` 1).
    pub fn qscheme_index(&self) -> i64 {
        match self.scheme {
            QScheme::PerTensorAffine { .. } => 0,
            QScheme::PerChannelAffine { .. } => 1,
        }
    }

    /// Scale and zero point of a per-tensor quantizer, or an error naming `what` needs one.
    pub fn per_tensor(&self, what: &str) -> Result<(f64, i64)> {
        match self.scheme {
            QScheme::PerTensorAffine { scale, zero_point } => Ok((scale, zero_point)),
            QScheme::PerChannelAffine { .. } => Err(Error::runtime(format!(
                "{what}: expected a per-tensor quantized tensor, got a per-channel one"
            ))),
        }
    }

    /// The `(scale, zero_point)` of each of `n` output channels along axis 0 (a per-tensor
    /// quantizer repeats its pair).
    pub fn channel_params(&self, n: usize, what: &str) -> Result<(Vec<f64>, Vec<i64>)> {
        match &self.scheme {
            QScheme::PerTensorAffine { scale, zero_point } => {
                Ok((vec![*scale; n], vec![*zero_point; n]))
            }
            QScheme::PerChannelAffine {
                scales,
                zero_points,
                axis,
            } => {
                if *axis != 0 || scales.len() != n || zero_points.len() != n {
                    return Err(Error::runtime(format!(
                        "{what}: the weight must be quantized per channel along axis 0 with {n} channels"
                    )));
                }
                Ok((scales.clone(), zero_points.clone()))
            }
        }
    }
}

/// The quantizer of `t`, or an error saying `what` needs a quantized tensor.
pub fn quantizer_of<'a>(t: &'a Tensor, what: &str) -> Result<&'a Arc<Quantizer>> {
    t.quantizer().ok_or_else(|| {
        Error::runtime(format!(
            "{what} expects a quantized tensor, got a tensor of dtype {}",
            t.dtype().name()
        ))
    })
}

/// Rounds half to even and saturates to `[lo, hi]` (FBGEMM's `nearbyint` then clamp).
pub(crate) fn round_clamp(v: f32, lo: i64, hi: i64) -> i64 {
    let r = v.round_ties_even();
    if r.is_nan() {
        return lo.max(0).min(hi);
    }
    (r as f64).clamp(lo as f64, hi as f64) as i64
}

/// Quantizes one value: `zero_point + nearbyint(x * (1 / scale))`, saturated (PyTorch's
/// `quantize_val`, FBGEMM's non-legacy `Quantize`).
pub(crate) fn quantize_val(x: f32, inv_scale: f32, zero_point: i64, lo: i64, hi: i64) -> i64 {
    let r = (x * inv_scale).round_ties_even();
    if r.is_nan() {
        return zero_point.clamp(lo, hi);
    }
    (r as f64 + zero_point as f64).clamp(lo as f64, hi as f64) as i64
}

/// A new contiguous quantized tensor of shape `sizes` holding `values` (already in range).
pub fn from_int_values(values: &[i64], sizes: &[i64], quantizer: Quantizer) -> Result<Tensor> {
    let ints = match quantizer.dtype {
        QDType::QInt8 => Tensor::from_vec(values.iter().map(|&v| v as i8).collect(), sizes)?,
        QDType::QUInt8 => Tensor::from_vec(values.iter().map(|&v| v as u8).collect(), sizes)?,
        QDType::QInt32 => Tensor::from_vec(values.iter().map(|&v| v as i32).collect(), sizes)?,
    };
    Ok(Tensor::with_quantizer(&ints, Arc::new(quantizer)))
}

/// A new contiguous quantized tensor of shape `sizes` over stored integers `values` (of the
/// quantizer's storage type).
pub(crate) fn from_stored<T: crate::element::Element>(
    values: Vec<T>,
    sizes: &[i64],
    quantizer: Quantizer,
) -> Result<Tensor> {
    debug_assert_eq!(T::DTYPE, quantizer.dtype.storage_dtype());
    let ints = Tensor::from_vec(values, sizes)?;
    Ok(Tensor::with_quantizer(&ints, Arc::new(quantizer)))
}

/// A quantized tensor over an existing integer tensor (loading `_rebuild_qtensor`): checks
/// that the storage dtype fits `quantizer` and that per-channel parameters match the shape.
pub fn from_int_tensor(ints: &Tensor, quantizer: Quantizer) -> Result<Tensor> {
    if ints.dtype() != quantizer.dtype.storage_dtype() {
        return Err(Error::runtime(format!(
            "a {} tensor needs {} storage, got {}",
            quantizer.dtype.name(),
            quantizer.dtype.storage_dtype().name(),
            ints.dtype().name()
        )));
    }
    if let QScheme::PerChannelAffine {
        scales,
        zero_points,
        axis,
    } = &quantizer.scheme
    {
        let sizes = ints.sizes();
        if *axis >= sizes.len()
            || scales.len() as i64 != sizes[*axis]
            || zero_points.len() != scales.len()
        {
            return Err(Error::runtime(format!(
                "per-channel quantization along axis {axis} needs one scale and zero point per channel of a tensor of shape {:?}, got {} and {}",
                sizes.as_slice(),
                scales.len(),
                zero_points.len()
            )));
        }
    }
    Ok(Tensor::with_quantizer(ints, Arc::new(quantizer)))
}

/// The integer tensor under a quantized tensor: same storage and geometry, no quantizer (for
/// views, which the caller re-wraps with [`requantize_view`]).
pub fn plain_view(q: &Tensor) -> Result<Tensor> {
    Tensor::from_parts(
        q.storage(),
        &q.sizes(),
        &q.strides(),
        q.storage_offset(),
        q.dtype(),
    )
}

/// `view` (a view of [`plain_view`]`(q)`) as a quantized tensor with `q`'s quantizer; only
/// per-tensor quantizers survive arbitrary views.
pub fn requantize_view(q: &Tensor, view: &Tensor, what: &str) -> Result<Tensor> {
    let quantizer = quantizer_of(q, what)?;
    quantizer.per_tensor(what)?;
    Ok(Tensor::with_quantizer(view, quantizer.clone()))
}

/// The integer values of a quantized tensor in row-major order.
pub fn int_values(q: &Tensor) -> Vec<i64> {
    q.to_vec::<i64>()
}

/// `Tensor.int_repr()`: a new integer tensor with the stored values.
pub fn int_repr(q: &Tensor, what: &str) -> Result<Tensor> {
    quantizer_of(q, what)?;
    plain_view(q)?.contiguous()?.to_dtype(q.dtype(), true)
}

/// Per-tensor quantization (`torch.quantize_per_tensor`).
pub fn quantize_per_tensor(
    x: &Tensor,
    scale: f64,
    zero_point: i64,
    dtype: QDType,
) -> Result<Tensor> {
    check_float(x, "quantize_per_tensor")?;
    check_qparams(scale, zero_point, dtype)?;
    let qt = fused::QuantizeTo::new(scale, zero_point, dtype);
    let quantizer = Quantizer {
        dtype,
        scheme: QScheme::PerTensorAffine { scale, zero_point },
    };
    fused::with_qint!(dtype, T => {
        let mut out = vec![T::default(); x.numel()];
        if x.dtype() == DType::Float32 {
            fused::with_stored::<f32, _>(x, |v| fused::quantize(v, qt, &mut out));
        } else {
            fused::quantize(&x.to_vec::<f32>(), qt, &mut out);
        }
        from_stored(out, &x.sizes(), quantizer)
    })
}

/// Per-channel quantization along `axis` (`torch.quantize_per_channel`).
pub fn quantize_per_channel(
    x: &Tensor,
    scales: Vec<f64>,
    zero_points: Vec<i64>,
    axis: usize,
    dtype: QDType,
) -> Result<Tensor> {
    check_float(x, "quantize_per_channel")?;
    let sizes = x.sizes();
    if axis >= sizes.len()
        || scales.len() as i64 != sizes[axis]
        || zero_points.len() != scales.len()
    {
        return Err(Error::runtime(format!(
            "quantize_per_channel: expected {} scales and zero points for axis {axis} of shape {:?}, got {} and {}",
            sizes.get(axis).copied().unwrap_or(0),
            sizes.as_slice(),
            scales.len(),
            zero_points.len()
        )));
    }
    for (&s, &z) in scales.iter().zip(&zero_points) {
        check_qparams(s, z, dtype)?;
    }
    let (lo, hi) = dtype.range();
    let inner: usize = sizes[axis + 1..].iter().product::<i64>() as usize;
    let channels = sizes[axis] as usize;
    let inv: Vec<f32> = scales.iter().map(|&s| 1.0f32 / s as f32).collect();
    let vals: Vec<i64> = x
        .to_vec::<f32>()
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let c = (i / inner.max(1)) % channels.max(1);
            quantize_val(v, inv[c], zero_points[c], lo, hi)
        })
        .collect();
    from_int_values(
        &vals,
        &sizes,
        Quantizer {
            dtype,
            scheme: QScheme::PerChannelAffine {
                scales,
                zero_points,
                axis,
            },
        },
    )
}

/// `torch.dequantize`: the float32 values `(q - zero_point) * scale` (computed as ATen's
/// vectorized path does, `q * scale + (-zero_point * scale)` with one rounding).
pub fn dequantize(q: &Tensor) -> Result<Tensor> {
    let quantizer = quantizer_of(q, "dequantize")?;
    let sizes = q.sizes();
    let (scales, zero_points, axis) = match &quantizer.scheme {
        QScheme::PerTensorAffine { scale, zero_point } => {
            let d = fused::Dequant::new(*scale, *zero_point);
            let out = fused::with_qint!(quantizer.dtype, T => {
                let mut out = vec![0.0f32; q.numel()];
                fused::with_stored::<T, _>(q, |v| fused::dequantize(v, d, &mut out));
                out
            });
            return Tensor::from_vec(out, &sizes);
        }
        QScheme::PerChannelAffine {
            scales,
            zero_points,
            axis,
        } => (scales, zero_points, *axis),
    };
    let inner: usize = sizes[axis + 1..].iter().product::<i64>() as usize;
    let channels = sizes[axis] as usize;
    let out: Vec<f32> = int_values(q)
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = (i / inner.max(1)) % channels.max(1);
            (v - zero_points[c]) as f32 * scales[c] as f32
        })
        .collect();
    Tensor::from_vec(out, &sizes)
}

/// Scale and zero point for dynamically quantizing values in `[min, max]` to `[qmin, qmax]`
/// (PyTorch's `ChooseQuantizationParams` without sparsity preservation; `reduce_range` halves
/// the range, as FBGEMM's dynamic operators ask).
pub fn choose_qparams(min: f32, max: f32, qmin: i64, qmax: i64, reduce_range: bool) -> (f32, i64) {
    let min = min.min(0.0);
    let max = max.max(0.0);
    let (qmin, qmax) = if reduce_range {
        (qmin / 2, qmax / 2)
    } else {
        (qmin, qmax)
    };
    let mut scale = (max as f64 - min as f64) / (qmax - qmin) as f64;
    if scale as f32 == 0.0 || (1.0f32 / scale as f32).is_infinite() {
        scale = 0.1;
    }
    let (qmin_f, qmax_f) = (qmin as f64, qmax as f64);
    let zp_from_min = qmin_f - min as f64 / scale;
    let zp_from_max = qmax_f - max as f64 / scale;
    let err_min = qmin_f.abs() - (min as f64 / scale).abs();
    let err_max = qmax_f.abs() - (max as f64 / scale).abs();
    let initial = if err_min < err_max {
        zp_from_min
    } else {
        zp_from_max
    };
    let zp = if initial < qmin_f {
        qmin
    } else if initial > qmax_f {
        qmax
    } else {
        initial.round_ties_even() as i64
    };
    (scale as f32, zp)
}

fn check_float(x: &Tensor, what: &str) -> Result<()> {
    if x.is_quantized() || !x.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "{what} expects a float tensor, got {}",
            if x.is_quantized() {
                "a quantized tensor".to_string()
            } else {
                format!("dtype {}", x.dtype().name())
            }
        )));
    }
    Ok(())
}

fn check_qparams(scale: f64, zero_point: i64, dtype: QDType) -> Result<()> {
    let (lo, hi) = dtype.range();
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::runtime(format!(
            "quantization scale must be a positive finite number, got {scale}"
        )));
    }
    if zero_point < lo || zero_point > hi {
        return Err(Error::runtime(format!(
            "zero_point {zero_point} is out of range for {} ([{lo}, {hi}])",
            dtype.name()
        )));
    }
    Ok(())
}
