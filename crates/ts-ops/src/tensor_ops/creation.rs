//! Factories: `torch.tensor`, zeros/ones/full/empty (and `_like`, `new_`), ranges, random.

use ts_core::IValue;
use ts_tensor::{default_dtype, factory, DType, Error, Scalar, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

/// The dtype of `torch.tensor(data)` when none is given: bool, int64 or the default float.
fn infer_dtype(v: &IValue) -> DType {
    match v {
        IValue::Bool(_) => DType::Bool,
        IValue::Int(_) => DType::Int64,
        IValue::Double(_) => default_dtype(),
        IValue::Tensor(t) => t.dtype(),
        IValue::List(l) => {
            l.items
                .read()
                .first()
                .map(infer_dtype)
                .unwrap_or_else(|| match &*l.elem_type {
                    ts_core::Type::Int => DType::Int64,
                    ts_core::Type::Bool => DType::Bool,
                    _ => default_dtype(),
                })
        }
        _ => default_dtype(),
    }
}

/// Flattens nested lists of numbers, checking that they are rectangular.
fn flatten_nested(
    v: &IValue,
    depth: usize,
    sizes: &mut Vec<i64>,
    out: &mut Vec<Scalar>,
) -> Result<(), Error> {
    match v {
        IValue::List(l) => {
            let items = l.items.read();
            if sizes.len() == depth {
                sizes.push(items.len() as i64);
            } else if sizes.get(depth) != Some(&(items.len() as i64)) {
                return Err(Error::runtime(format!(
                    "Expected sequence of length {} at dim {depth} (got {})",
                    sizes.get(depth).copied().unwrap_or(0),
                    items.len()
                )));
            }
            for x in items.iter() {
                flatten_nested(x, depth + 1, sizes, out)?;
            }
            Ok(())
        }
        other => {
            if depth != sizes.len() {
                return Err(Error::runtime(format!(
                    "Expected sequence at dim {depth} but found a number"
                )));
            }
            let s = other.as_scalar().ok_or_else(|| {
                Error::runtime(format!(
                    "Expected a number in torch.tensor data, got '{}'",
                    other.tag_name()
                ))
            })?;
            out.push(s);
            Ok(())
        }
    }
}

/// `torch.tensor(data, dtype=...)` for a number or nested lists of numbers.
pub fn tensor_from_value(v: &IValue, dtype: Option<DType>) -> Result<Tensor, Error> {
    let dtype = dtype.unwrap_or_else(|| infer_dtype(v));
    let mut sizes = Vec::new();
    let mut flat = Vec::new();
    flatten_nested(v, 0, &mut sizes, &mut flat)?;
    let f64s: Vec<f64> = flat.iter().map(|s| s.to_f64()).collect();
    let t = if dtype.is_floating_point() {
        Tensor::from_vec(f64s, &sizes)?
    } else if dtype == DType::Bool {
        Tensor::from_vec(
            flat.iter().map(|s| s.to_bool()).collect::<Vec<bool>>(),
            &sizes,
        )?
    } else {
        Tensor::from_vec(
            flat.iter().map(|s| s.to_i64()).collect::<Vec<i64>>(),
            &sizes,
        )?
    };
    t.to_dtype(dtype, false)
}

fn scalar_factory(a: &Args, s: Scalar) -> Result<Tensor, Error> {
    a.check_device(2)?;
    let dtype = a.dtype(1)?.unwrap_or_else(|| match s {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::Int64,
        Scalar::Float(_) => default_dtype(),
    });
    Tensor::scalar_tensor(s, dtype)
}

/// `torch.device(str)`: `cpu`, `cpu:0`, `cuda`, `cuda:N`, with PyTorch's message otherwise.
fn parse_device(s: &str) -> Result<ts_tensor::Device, Error> {
    if s == "cpu:0" {
        return Ok(ts_tensor::Device::Cpu);
    }
    ts_tensor::Device::parse(s).ok_or_else(|| {
        Error::runtime(format!(
            "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {s}"
        ))
    })
}

/// Registers the factory operators.
pub fn register(r: &Registry) {
    def(r, "aten::device", |a| {
        parse_device(a.str(0)?).map(IValue::Device)
    });
    def(r, "aten::device.with_index", |a| {
        let index = a.int(1)?;
        parse_device(&format!("{}:{index}", a.str(0)?)).map(IValue::Device)
    });
    def_many(
        r,
        &[
            "aten::tensor.int",
            "aten::tensor.float",
            "aten::tensor.bool",
        ],
        |a| scalar_factory(a, a.s(0)?),
    );
    def_many(
        r,
        &[
            "aten::as_tensor.int",
            "aten::as_tensor.float",
            "aten::as_tensor.bool",
        ],
        |a| scalar_factory(a, a.s(0)?),
    );
    def(r, "aten::tensor", |a| {
        a.check_device(2)?;
        tensor_from_value(a.v(0)?, a.dtype(1)?)
    });
    def(r, "aten::as_tensor.list", |a| {
        a.check_device(2)?;
        tensor_from_value(a.v(0)?, a.dtype(1)?)
    });
    def(r, "aten::as_tensor", |a| {
        a.check_device(2)?;
        let t = a.t(0)?;
        match a.dtype(1)? {
            Some(d) => t.to_dtype(d, false),
            None => Ok(t.clone()),
        }
    });
    def(r, "aten::scalar_tensor", |a| {
        let s = a.s(0)?;
        Tensor::scalar_tensor(s, a.dtype(1)?.unwrap_or_else(default_dtype))
    });
    def(r, "aten::zeros", |a| {
        factory::zeros(&a.ints(0)?, a.dtype(1)?)
    });
    def(r, "aten::ones", |a| factory::ones(&a.ints(0)?, a.dtype(1)?));
    def(r, "aten::empty.memory_format", |a| {
        // Fresh memory is zero-filled: deterministic where PyTorch's is arbitrary.
        factory::zeros(&a.ints(0)?, a.dtype(1)?)
    });
    def(r, "aten::full", |a| {
        factory::full(&a.ints(0)?, a.s(1)?, a.dtype(2)?)
    });
    def(r, "aten::zeros_like", |a| {
        factory::zeros_like(a.t(0)?, a.dtype(1)?)
    });
    def(r, "aten::ones_like", |a| {
        factory::ones_like(a.t(0)?, a.dtype(1)?)
    });
    def(r, "aten::empty_like", |a| {
        factory::zeros_like(a.t(0)?, a.dtype(1)?)
    });
    def(r, "aten::full_like", |a| {
        factory::full_like(a.t(0)?, a.s(1)?, a.dtype(2)?)
    });
    def(r, "aten::new_zeros", |a| {
        factory::zeros(&a.ints(1)?, Some(a.dtype(2)?.unwrap_or(a.t(0)?.dtype())))
    });
    def(r, "aten::new_ones", |a| {
        factory::ones(&a.ints(1)?, Some(a.dtype(2)?.unwrap_or(a.t(0)?.dtype())))
    });
    def(r, "aten::new_empty", |a| {
        factory::zeros(&a.ints(1)?, Some(a.dtype(2)?.unwrap_or(a.t(0)?.dtype())))
    });
    def(r, "aten::new_full", |a| {
        factory::full(
            &a.ints(1)?,
            a.s(2)?,
            Some(a.dtype(3)?.unwrap_or(a.t(0)?.dtype())),
        )
    });
    def(r, "aten::arange", |a| {
        factory::arange(Scalar::Int(0), a.s(0)?, Scalar::Int(1), a.dtype(1)?)
    });
    def(r, "aten::arange.start", |a| {
        factory::arange(a.s(0)?, a.s(1)?, Scalar::Int(1), a.dtype(2)?)
    });
    def(r, "aten::arange.start_step", |a| {
        factory::arange(a.s(0)?, a.s(1)?, a.s(2)?, a.dtype(3)?)
    });
    def(r, "aten::linspace", |a| {
        factory::linspace(a.s(0)?, a.s(1)?, a.int(2)?, a.dtype(3)?)
    });
    def(r, "aten::eye", |a| {
        factory::eye(a.int(0)?, None, a.dtype(1)?)
    });
    def(r, "aten::eye.m", |a| {
        factory::eye(a.int(0)?, Some(a.int(1)?), a.dtype(2)?)
    });
    def(r, "aten::rand", |a| {
        ts_tensor::ops::random::rand(&a.ints(0)?, a.dtype(1)?, None)
    });
    def(r, "aten::randn", |a| {
        ts_tensor::ops::random::randn(&a.ints(0)?, a.dtype(1)?, None)
    });
    def(r, "aten::randint", |a| {
        ts_tensor::ops::random::randint(0, a.int(0)?, &a.ints(1)?, a.dtype(2)?, None)
    });
    def(r, "aten::randint.low", |a| {
        ts_tensor::ops::random::randint(a.int(0)?, a.int(1)?, &a.ints(2)?, a.dtype(3)?, None)
    });
    def(r, "aten::rand_like", |a| {
        ts_tensor::ops::random::rand_like(a.t(0)?, a.dtype(1)?, None)
    });
    def(r, "aten::randn_like", |a| {
        ts_tensor::ops::random::randn_like(a.t(0)?, a.dtype(1)?, None)
    });
    def(r, "aten::bernoulli", |a| {
        a.t(0)?.bernoulli(super::generators::generator_arg(a, 1)?)
    });
    def(r, "aten::normal_", |a| {
        let t = a.t(0)?;
        t.normal_(a.f(1)?, a.f(2)?, super::generators::generator_arg(a, 3)?)?;
        Ok(t.clone())
    });
    def(r, "aten::uniform_", |a| {
        let t = a.t(0)?;
        t.uniform_(a.f(1)?, a.f(2)?, super::generators::generator_arg(a, 3)?)?;
        Ok(t.clone())
    });
    register_index_factories(r);
}

/// `torch.range`: `start, start + step, ...` up to and including `end`, in the default
/// floating dtype unless one is given.
fn range(start: Scalar, end: Scalar, step: Scalar, dtype: Option<DType>) -> Result<Tensor, Error> {
    let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
    if st == 0.0 {
        return Err(Error::runtime("step must be nonzero"));
    }
    if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
        return Err(Error::runtime(
            "upper bound and larger bound inconsistent with step sign",
        ));
    }
    let n = ((e - s) / st).floor() as i64 + 1;
    let dt = dtype.unwrap_or_else(default_dtype);
    let vals: Vec<f64> = (0..n).map(|i| s + i as f64 * st).collect();
    Tensor::from_vec(vals, &[n])?.to_dtype(dt, false)
}

/// The `[2, N]` coordinates of the lower (`lower`) or upper triangle of a `row x col` matrix
/// relative to diagonal `offset`, row-major.
fn triangle_indices(
    row: i64,
    col: i64,
    offset: i64,
    lower: bool,
    dtype: Option<DType>,
) -> Result<Tensor, Error> {
    if row < 0 || col < 0 {
        return Err(Error::runtime(format!(
            "row must be non-negative, got{}",
            row.min(col)
        )));
    }
    let (mut rs, mut cs) = (Vec::new(), Vec::new());
    for i in 0..row {
        for j in 0..col {
            let keep = if lower {
                j - i <= offset
            } else {
                j - i >= offset
            };
            if keep {
                rs.push(i);
                cs.push(j);
            }
        }
    }
    let n = rs.len() as i64;
    rs.extend(cs);
    Tensor::from_vec(rs, &[2, n])?.to_dtype(dtype.unwrap_or(DType::Int64), false)
}

/// `torch.bincount`: occurrences (or summed weights) of each non-negative integer.
fn bincount(x: &Tensor, weights: Option<&Tensor>, minlength: i64) -> Result<Tensor, Error> {
    if x.dim() != 1 || !x.dtype().is_integral() || x.dtype() == DType::Bool {
        return Err(Error::runtime(
            "bincount only supports 1-d non-negative integral inputs.",
        ));
    }
    if minlength < 0 {
        return Err(Error::runtime("minlength should be >= 0"));
    }
    let v = x.to_vec::<i64>();
    if v.iter().any(|&k| k < 0) {
        return Err(Error::runtime(
            "bincount only supports 1-d non-negative integral inputs.",
        ));
    }
    let len = (v.iter().max().map_or(0, |m| m + 1)).max(minlength) as usize;
    match weights {
        None => {
            let mut counts = vec![0i64; len];
            for k in v {
                counts[k as usize] += 1;
            }
            Tensor::from_vec(counts, &[len as i64])
        }
        Some(w) => {
            if w.dim() != 1 || w.sizes()[0] != x.sizes()[0] {
                return Err(Error::runtime(
                    "weights should be 1-d and have the same length as input",
                ));
            }
            let mut sums = vec![0f64; len];
            for (k, wv) in v.into_iter().zip(w.to_vec::<f64>()) {
                sums[k as usize] += wv;
            }
            let dt = if w.dtype().is_floating_point() {
                w.dtype()
            } else {
                DType::Float64
            };
            Tensor::from_vec(sums, &[len as i64])?.to_dtype(dt, false)
        }
    }
}

fn register_index_factories(r: &Registry) {
    def(r, "aten::range.step", |a| {
        a.check_device(5)?;
        range(a.s(0)?, a.s(1)?, a.s(2)?, a.dtype(3)?)
    });
    def(r, "aten::range", |a| {
        a.check_device(4)?;
        range(a.s(0)?, a.s(1)?, Scalar::Int(1), a.dtype(2)?)
    });
    def(r, "aten::range.out_", |a| {
        let out = a.t(2)?;
        let t = range(a.s(0)?, a.s(1)?, Scalar::Int(1), Some(out.dtype()))?;
        ts_tensor::resize_out_and_copy(out, &t)
    });
    def(r, "aten::triu_indices", |a| {
        a.check_device(5)?;
        triangle_indices(a.int(0)?, a.int(1)?, a.int(2)?, false, a.dtype(3)?)
    });
    def(r, "aten::tril_indices", |a| {
        a.check_device(5)?;
        triangle_indices(a.int(0)?, a.int(1)?, a.int(2)?, true, a.dtype(3)?)
    });
    def(r, "aten::bincount", |a| {
        bincount(a.t(0)?, a.ot(1)?, a.int(2)?)
    });
    def(r, "aten::empty_strided", |a| {
        a.check_device(4)?;
        let (sizes, strides) = (a.ints(0)?, a.ints(1)?);
        if sizes.len() != strides.len() {
            return Err(Error::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        Tensor::empty_strided(&sizes, &strides, a.dtype(2)?.unwrap_or_else(default_dtype))
    });
    def(r, "aten::_list_to_tensor", |a| {
        let v = a.ints(0)?;
        Tensor::from_vec(
            v.iter().map(|&x| x as i32).collect::<Vec<i32>>(),
            &[v.len() as i64],
        )
    });
    def(r, "aten::_tensor_to_list", |a| {
        let t = a.t(0)?;
        if t.dim() != 1 {
            return Err(Error::runtime("_tensor_to_list expects a 1-D tensor"));
        }
        Ok(IValue::int_list(t.to_vec::<i64>()))
    });
}
