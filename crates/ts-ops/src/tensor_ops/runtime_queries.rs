//! Operators about the runtime rather than tensor values: assertions TorchScript's export
//! paths insert (`_assert_async`, `_assert_scalar`, `sym_constrain_range`,
//! `_assert_tensor_metadata`), tracing/autocast state queries (there is no tracer or autocast
//! here, so they report off and the autocast casts are identities unless enabled),
//! `manual_seed`, `_get_cpu_capability`, `_print`, device comparisons, and complex-number
//! constructors (`Complex`, `ComplexImplicit`, `angle`/`polar` of numbers).

use ts_core::IValue;
use ts_tensor::{DType, Error, Scalar, Tensor};

use super::{def, Args};
use crate::registry::Registry;

fn number(a: &Args, i: usize) -> Result<(f64, f64), Error> {
    match a.v(i)? {
        IValue::Complex(c) => Ok((c.0, c.1)),
        IValue::Tensor(t) => {
            if t.numel() != 1 {
                return Err(Error::runtime(format!(
                    "a Tensor with {} elements cannot be converted to Scalar",
                    t.numel()
                )));
            }
            if t.dtype().is_complex() {
                let z = t.to_vec::<ts_tensor::Complex64>()[0];
                Ok((z.re, z.im))
            } else {
                Ok((t.item()?.to_f64(), 0.0))
            }
        }
        v => v
            .as_scalar()
            .map(|s| (s.to_f64(), 0.0))
            .ok_or_else(|| Error::runtime(format!("expected a number, got {}", v.tag_name()))),
    }
}

fn truthy(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(i) => i != 0,
        Scalar::Float(f) => f != 0.0,
    }
}

fn assert_async(t: &Tensor, msg: Option<&str>) -> Result<(), Error> {
    if t.numel() != 1 {
        return Err(Error::runtime(
            "Boolean value of Tensor with more than one value is ambiguous",
        ));
    }
    if !truthy(t.item()?) {
        return Err(Error::runtime(msg.map_or_else(
            || "Expected Tensor with single nonzero value, but got zero".to_string(),
            str::to_string,
        )));
    }
    Ok(())
}

fn constrain_range(a: &Args) -> Result<IValue, Error> {
    let v = a.s(0)?.to_f64();
    if let Some(min) = a.oint(1)? {
        if v < min as f64 {
            return Err(Error::runtime(format!(
                "Invalid value range for {v} between [{min}, {}]",
                a.oint(2)?.map_or("inf".to_string(), |m| m.to_string())
            )));
        }
    }
    if let Some(max) = a.oint(2)? {
        if v > max as f64 {
            return Err(Error::runtime(format!(
                "Invalid value range for {v} between [{}, {max}]",
                a.oint(1)?.map_or("-inf".to_string(), |m| m.to_string())
            )));
        }
    }
    Ok(IValue::None)
}

/// The SIMD level ATen reports (`torch.backends.cpu.get_cpu_capability()`).
fn cpu_capability() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "AVX512";
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return "AVX2";
        }
    }
    "DEFAULT"
}

/// Registers the operators of this module.
pub fn register(r: &Registry) {
    def(r, "aten::_assert_async", |a| {
        assert_async(a.t(0)?, None).map(|_| IValue::None)
    });
    def(r, "aten::_assert_async.msg", |a| {
        assert_async(a.t(0)?, Some(a.str(1)?)).map(|_| IValue::None)
    });
    def(r, "aten::_assert_scalar", |a| {
        if truthy(a.s(0)?) {
            Ok(IValue::None)
        } else {
            Err(Error::runtime(a.str(1)?.to_string()))
        }
    });
    def(r, "aten::sym_constrain_range", constrain_range);
    def(r, "aten::sym_constrain_range_for_size", constrain_range);
    def(r, "aten::_assert_tensor_metadata", |a| {
        let t = a.t(0)?;
        if let Some(size) = a.oints(1)? {
            if t.sizes().as_slice() != size.as_slice() {
                return Err(Error::runtime(format!(
                    "Tensor sizes mismatch! Expected: {size:?}, Got: {:?}",
                    t.sizes().as_slice()
                )));
            }
        }
        if let Some(stride) = a.oints(2)? {
            if t.strides().as_slice() != stride.as_slice() {
                return Err(Error::runtime(format!(
                    "Tensor strides mismatch! Expected: {stride:?}, Got: {:?}",
                    t.strides().as_slice()
                )));
            }
        }
        if let Some(d) = a.dtype(3)? {
            if d != t.dtype() {
                return Err(Error::runtime(format!(
                    "Tensor dtype mismatch! Expected: {}, Got: {}",
                    d.scalar_type_name(),
                    t.dtype().scalar_type_name()
                )));
            }
        }
        a.check_device(4)?;
        Ok(IValue::None)
    });
    def(r, "aten::_is_tracing", |_| Ok(IValue::Bool(false)));
    def(r, "aten::_get_tracing_state", |_| Ok(IValue::Bool(false)));
    def(r, "aten::is_autocast_cpu_enabled", |_| {
        Ok(IValue::Bool(false))
    });
    def(r, "aten::get_autocast_dtype", |a| {
        let d = match a.str(0)? {
            "cpu" => DType::BFloat16,
            "cuda" | "xpu" | "mps" | "xla" | "hpu" => DType::Float16,
            other => {
                return Err(Error::runtime(format!(
                    "unsupported autocast device_type '{other}'"
                )))
            }
        };
        Ok(IValue::Int(d.scalar_type_index()))
    });
    def(r, "aten::_autocast_to_full_precision", |a| {
        let t = a.t(0)?;
        let reduced = matches!(t.dtype(), DType::Float16 | DType::BFloat16);
        if a.b(2)? && reduced {
            t.to_dtype(DType::Float32, false)
        } else {
            Ok(t.clone())
        }
    });
    def(r, "aten::_autocast_to_reduced_precision", |a| {
        let t = a.t(0)?;
        let floating = matches!(
            t.dtype(),
            DType::Float32 | DType::Float64 | DType::Float16 | DType::BFloat16
        );
        match (a.b(2)?, a.dtype(4)?) {
            (true, Some(d)) if floating => t.to_dtype(d, false),
            _ => Ok(t.clone()),
        }
    });
    def(r, "aten::manual_seed", |a| {
        let seed = a.int(0)?;
        ts_tensor::manual_seed(seed as u64);
        Ok(IValue::None)
    });
    // Back-end availability: no Vulkan here; NNPACK's convolution runs (as conv2d below), so
    // code guarded by `_nnpack_available()` takes the same path as on PyTorch's x86 builds.
    def(r, "aten::is_vulkan_available", |_| Ok(false));
    def(r, "aten::_nnpack_available", |_| Ok(true));
    def(r, "aten::_nnpack_spatial_convolution", |a| {
        crate::autograd::ops::call1(
            "aten::conv2d",
            vec![
                a.v(0)?.clone(),
                a.v(1)?.clone(),
                a.v(2)?.clone(),
                a.v(4)?.clone(),
                a.v(3)?.clone(),
                IValue::int_list([1, 1]),
                IValue::Int(1),
            ],
        )
    });
    def(r, "aten::_has_compatible_shallow_copy_type", |a| {
        // Every tensor here is a CPU tensor of one implementation (strided, or nested).
        Ok(a.t_nested(0)?.is_nested() == a.t_nested(1)?.is_nested())
    });
    def(r, "aten::_get_cpu_capability", |_| {
        Ok(IValue::str(cpu_capability()))
    });
    def(r, "aten::_print", |a| {
        println!("{}", a.str(0)?);
        Ok(IValue::None)
    });
    def(r, "aten::eq.device", |a| Ok(IValue::Bool(same_device(a)?)));
    def(r, "aten::ne.device", |a| Ok(IValue::Bool(!same_device(a)?)));
    def(r, "aten::_is_zerotensor", |a| {
        a.t(0)?;
        Ok(IValue::Bool(false))
    });
    def(r, "aten::Size", |a| Ok(IValue::int_list(a.ints(0)?)));
    def(r, "aten::_size_if_not_equal", |a| {
        let (x, y) = (a.ints(0)?, a.ints(1)?);
        Ok(if x == y {
            IValue::None
        } else {
            IValue::int_list(x)
        })
    });
    def(r, "aten::_debug_has_internal_overlap", |a| {
        let t = a.t(0)?;
        let overlaps = ts_tensor::overlap::assert_no_internal_overlap(&t.meta_snapshot()).is_err();
        Ok(IValue::Int(overlaps as i64))
    });
    def(r, "prim::abs", |a| a.t(0)?.abs());
    def(r, "prim::id", |a| match a.v(0)? {
        // Object identity: the address of the shared object (0 for None).
        IValue::None => Ok(IValue::Int(0)),
        IValue::Object(o) => Ok(IValue::Int(std::sync::Arc::as_ptr(o) as usize as i64)),
        v => Err(Error::runtime(format!(
            "prim::id expects an object, got {}",
            v.tag_name()
        ))),
    });
    def(r, "aten::_unwrap_optional", |a| match a.v(0)? {
        IValue::None => Err(Error::runtime("Unwrapping null optional")),
        v => Ok(v.clone()),
    });
    register_complex_numbers(r);
}

fn same_device(a: &Args) -> Result<bool, Error> {
    match (a.v(0)?, a.v(1)?) {
        (IValue::Device(x), IValue::Device(y)) => Ok(x == y),
        (x, y) => Err(Error::runtime(format!(
            "expected two devices, got {} and {}",
            x.tag_name(),
            y.tag_name()
        ))),
    }
}

fn complex(re: f64, im: f64) -> IValue {
    IValue::complex(re, im)
}

fn register_complex_numbers(r: &Registry) {
    for name in [
        "aten::Complex.Tensor_Tensor",
        "aten::Complex.int_bool",
        "aten::Complex.bool_int",
        "aten::Complex.float_bool",
        "aten::Complex.bool_float",
        "aten::Complex.float_int",
        "aten::Complex.int_float",
        "aten::Complex.int_int",
        "aten::Complex.bool_bool",
        "aten::Complex.float_float",
        "aten::Complex.Tensor_float",
        "aten::Complex.float_Tensor",
        "aten::Complex.Tensor_int",
        "aten::Complex.int_Tensor",
        "aten::Complex.Tensor_bool",
        "aten::Complex.bool_Tensor",
    ] {
        def(r, name, |a| {
            let (x, _) = number(a, 0)?;
            let (y, _) = number(a, 1)?;
            Ok(complex(x, y))
        });
    }
    for name in ["aten::Complex.Scalar", "aten::ComplexImplicit"] {
        def(r, name, |a| {
            let (re, im) = number(a, 0)?;
            Ok(complex(re, im))
        });
    }
    for name in ["aten::angle.int", "aten::angle.float"] {
        def(r, name, |a| {
            let x = a.f(0)?;
            Ok(IValue::Double(if x.is_nan() {
                x
            } else if x < 0.0 {
                std::f64::consts::PI
            } else {
                0.0
            }))
        });
    }
    def(r, "aten::angle.complex", |a| {
        let (re, im) = number(a, 0)?;
        Ok(IValue::Double(im.atan2(re)))
    });
    def(r, "aten::angle.Scalar", |a| {
        let (re, im) = number(a, 0)?;
        Ok(IValue::Double(if re.is_nan() { re } else { im.atan2(re) }))
    });
    for name in [
        "aten::polar.int",
        "aten::polar.float",
        "aten::polar.int_float",
        "aten::polar.float_int",
        "aten::polar.Scalar_Scalar",
    ] {
        def(r, name, |a| {
            let (m, th) = (a.f(0)?, a.f(1)?);
            Ok(complex(m * th.cos(), m * th.sin()))
        });
    }
    for name in ["aten::as_tensor.complex", "aten::tensor.complex"] {
        def(r, name, |a| {
            let (re, im) = number(a, 0)?;
            a.check_device(2)?;
            let dt = a
                .dtype(1)?
                .unwrap_or(if ts_tensor::default_dtype() == DType::Float64 {
                    DType::Complex128
                } else {
                    DType::Complex64
                });
            Tensor::from_vec(vec![ts_tensor::Complex64 { re, im }], &[])?.to_dtype(dt, false)
        });
    }
}
