//! Rebuilding quantized tensors (`torch._utils._rebuild_qtensor`): an integer tensor over a
//! `QInt8Storage`/`QUInt8Storage`/`QInt32Storage` plus the quantizer parameters, per tensor
//! `(qscheme, scale, zero_point)` or per channel `(qscheme, scales, zero_points, axis)`.

use ts_core::IValue;
use ts_tensor::quantized::{self, QDType, QScheme, Quantizer};
use ts_tensor::Tensor;

use super::ValueLoader;
use crate::error::Result;
use crate::globals::KnownGlobal;
use crate::pickle_value::PickleValue;

impl<'t> ValueLoader<'t, '_> {
    pub(super) fn rebuild_qtensor(&mut self, args: &'t [PickleValue]) -> Result<Tensor> {
        let name = "_rebuild_qtensor";
        if args.len() < 5 || args.len() > 7 {
            return Err(self.invalid(format!("{name} takes 5 to 7 arguments, got {}", args.len())));
        }
        let ints = self.rebuild_tensor(&KnownGlobal::RebuildTensorV2, &args[..4])?;
        let Some(dtype) = QDType::from_storage_dtype(ints.dtype()) else {
            return Err(self.invalid(format!(
                "{name}: a quantized tensor cannot be stored as {}",
                ints.dtype().name()
            )));
        };
        let params = match self.load(&args[4])? {
            IValue::Tuple(t) => t.elements.clone(),
            other => {
                return Err(self.invalid(format!(
                    "{name}: the quantizer parameters are a {}, not a tuple",
                    other.tag_name()
                )))
            }
        };
        let scheme = match params.as_slice() {
            [IValue::Int(0 | 2), scale, IValue::Int(zp)] => QScheme::PerTensorAffine {
                scale: number(scale).ok_or_else(|| self.invalid(format!("{name}: bad scale")))?,
                zero_point: *zp,
            },
            [IValue::Int(1 | 3), IValue::Tensor(scales), IValue::Tensor(zps), IValue::Int(axis)] => {
                QScheme::PerChannelAffine {
                    scales: scales.to_vec::<f64>(),
                    zero_points: zps.to_vec::<i64>(),
                    axis: usize::try_from(*axis)
                        .map_err(|_| self.invalid(format!("{name}: negative axis {axis}")))?,
                }
            }
            [IValue::Int(4), ..] => {
                return Err(self.unsupported(
                    "quantized tensors with per_channel_affine_float_qparams (float zero points)",
                ))
            }
            _ => {
                return Err(self.invalid(format!(
                    "{name}: unrecognized quantizer parameters ({} values)",
                    params.len()
                )))
            }
        };
        quantized::from_int_tensor(&ints, Quantizer { dtype, scheme })
            .map_err(|e| self.invalid(format!("{name}: {}", e.message)))
    }
}

fn number(v: &IValue) -> Option<f64> {
    match v {
        IValue::Double(d) => Some(*d),
        IValue::Int(i) => Some(*i as f64),
        _ => None,
    }
}
