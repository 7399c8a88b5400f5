//! Primitive operators with schemas: `prim::Print`, `prim::RaiseException`, `prim::NumToTensor`,
//! tensor property queries, `aten::__is__`, conversions, `prim::TupleIndex`/`TupleUnpack`, ...
//! (Constants, control flow, calls, attribute access, and the container constructors are
//! instructions of the interpreter, not registered operators.)

use std::io::Write;
use std::sync::Arc;

use ts_core::{IValue, Type};
use ts_tensor::{DType, Error, ErrorKind, Scalar, Tensor};

use crate::registry::{op, Registry, Stack};
use crate::schema_table::schema_line;
use crate::stack::*;

fn reg(
    r: &Registry,
    name: &str,
    f: impl Fn(&mut Stack) -> Result<(), Error> + Send + Sync + 'static,
) {
    let _ = r.register_pt(name, op(f));
}

/// The exception class named by a `raise` (`builtins.ValueError` → ValueError).
pub fn error_kind_for_class(cls: &str) -> ErrorKind {
    let base = cls.rsplit('.').next().unwrap_or(cls);
    match base {
        "RuntimeError" => ErrorKind::RuntimeError,
        "IndexError" => ErrorKind::IndexError,
        "ValueError" => ErrorKind::ValueError,
        "TypeError" => ErrorKind::TypeError,
        "KeyError" => ErrorKind::KeyError,
        "ZeroDivisionError" => ErrorKind::ZeroDivisionError,
        "AssertionError" => ErrorKind::AssertionError,
        "NotImplementedError" => ErrorKind::NotImplementedError,
        "StopIteration" => ErrorKind::StopIteration,
        _ => ErrorKind::Exception,
    }
}

/// A Python number as a 0-dim tensor (int → int64, float → float64, bool → bool).
pub fn num_to_tensor(v: &IValue) -> Result<Tensor, Error> {
    let s = v.as_scalar().ok_or_else(|| {
        Error::runtime(format!(
            "NumToTensor expects a number, got '{}'",
            v.tag_name()
        ))
    })?;
    let dt = match s {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::Int64,
        Scalar::Float(_) => DType::Float64,
    };
    Tensor::scalar_tensor(s, dt)
}

/// A one-element tensor as a Python number (`ImplicitTensorToNum`, `aten::Int(Tensor)`, ...).
pub fn tensor_to_number(t: &Tensor) -> Result<Scalar, Error> {
    if t.numel() != 1 {
        return Err(Error::runtime(format!(
            "a Tensor with {} elements cannot be converted to Scalar",
            t.numel()
        )));
    }
    t.item()
}

/// Registers the primitive operators.
pub fn register(r: &Registry) {
    let _ = r.register_node_op(
        schema_line("prim::Print").unwrap_or("prim::Print(...) -> ()"),
        Arc::new(|g, n| {
            let count = g.node(n).inputs().len();
            Ok(op(move |s| {
                let args = pop_n(s, count)?;
                let line: Vec<String> = args.iter().map(|a| a.to_display_string()).collect();
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", line.join(" "));
                Ok(())
            }))
        }),
    );
    reg(r, "prim::RaiseException", |s| {
        let cls = pop_opt_str(s)?;
        let msg = pop_str(s)?;
        // Without a class (what `assert` emits) PyTorch raises a plain RuntimeError.
        Err(match cls.as_deref() {
            Some(c) => Error::raised(error_kind_for_class(c), c, msg.to_string()),
            None => Error::new(ErrorKind::Exception, msg.to_string()),
        })
    });
    // `torch.jit._awaitable_nowait(x)` / `_awaitable_wait(aw)`: an Await of an already
    // computed value is a completed future (the lazy `prim::awaitable` form, which defers a
    // call, is not an operator of PyTorch's table).
    reg(r, "prim::awaitable_nowait", |s| {
        let v = pop(s)?;
        let f = ts_core::future::Future::new(v.type_of());
        f.complete(Ok(v));
        s.push(IValue::Future(Arc::new(f)));
        Ok(())
    });
    reg(r, "prim::awaitable_wait", |s| match pop(s)? {
        IValue::Future(f) => {
            let v = f.wait()?;
            s.push(v);
            Ok(())
        }
        v => Err(Error::runtime(format!(
            "awaitable_wait: expected an Await but got '{}'",
            v.tag_name()
        ))),
    });
    reg(r, "prim::Uninitialized", |s| {
        s.push(IValue::Uninitialized);
        Ok(())
    });
    reg(r, "prim::unchecked_cast", |_s| Ok(()));
    reg(r, "prim::NumToTensor.Scalar", |s| {
        let v = pop(s)?;
        s.push(IValue::Tensor(num_to_tensor(&v)?));
        Ok(())
    });
    reg(r, "prim::NumToTensor.bool", |s| {
        let v = pop(s)?;
        s.push(IValue::Tensor(num_to_tensor(&v)?));
        Ok(())
    });
    reg(r, "prim::TupleIndex", |s| {
        let i = pop_int(s)?;
        let t = pop_tuple(s)?;
        let k = crate::containers::norm_index(i, t.elements.len())
            .ok_or_else(|| Error::new(ErrorKind::IndexError, "tuple index out of range"))?;
        s.push(t.elements[k].clone());
        Ok(())
    });
    let _ = r.register_node_op(
        schema_line("prim::TupleUnpack").unwrap_or("prim::TupleUnpack(Any tup) -> ..."),
        Arc::new(|g, n| {
            let count = g.node(n).outputs().len();
            Ok(op(move |s| {
                let t = pop_tuple(s)?;
                if t.elements.len() != count {
                    return Err(Error::runtime(format!(
                        "Expected a tuple of {count} elements, but got {}",
                        t.elements.len()
                    )));
                }
                s.extend(t.elements.iter().cloned());
                Ok(())
            }))
        }),
    );
    reg(r, "prim::dtype", |s| {
        let t = pop_tensor(s)?;
        push(s, t.dtype().scalar_type_index());
        Ok(())
    });
    reg(r, "prim::device", |s| {
        let t = pop_tensor(s)?;
        s.push(IValue::Device(t.device()));
        Ok(())
    });
    reg(r, "prim::layout", |s| {
        pop_tensor(s)?;
        push(s, 0i64);
        Ok(())
    });
    reg(r, "prim::requires_grad", |s| {
        let t = pop_tensor(s)?;
        push(s, t.requires_grad());
        Ok(())
    });
    reg(r, "prim::is_cuda", |s| {
        let t = pop_tensor(s)?;
        push(s, matches!(t.device(), ts_tensor::Device::Cuda(_)));
        Ok(())
    });
    for q in [
        "prim::is_sparse",
        "prim::is_sparse_csr",
        "prim::is_mkldnn",
        "prim::is_quantized",
        "prim::is_meta",
        "prim::is_xpu",
        "prim::is_mps",
        "prim::is_vulkan",
        "prim::is_ipu",
        "prim::is_xla",
        "prim::is_maia",
        "prim::is_mtia",
    ] {
        reg(r, q, |s| {
            pop_tensor(s)?;
            push(s, false);
            Ok(())
        });
    }
    reg(r, "prim::is_nested", |s| {
        let t = pop_tensor(s)?;
        push(s, t.is_nested());
        Ok(())
    });
    reg(r, "prim::is_cpu", |s| {
        let t = pop_tensor(s)?;
        push(s, t.device() == ts_tensor::Device::Cpu);
        Ok(())
    });
    reg(r, "prim::data", |s| {
        let t = pop_tensor(s)?;
        s.push(IValue::Tensor(t.detach()));
        Ok(())
    });
    reg(r, "prim::name", |s| {
        pop_tensor(s)?;
        s.push(IValue::None);
        Ok(())
    });
    reg(r, "prim::itemsize", |s| {
        let t = pop_tensor(s)?;
        push(s, t.dtype().size() as i64);
        Ok(())
    });
    reg(r, "prim::nbytes", |s| {
        let t = pop_tensor(s)?;
        push(s, (t.numel() * t.dtype().size()) as i64);
        Ok(())
    });
    reg(r, "prim::index", |s| {
        let d = pop(s)?;
        match d.as_device().and_then(|d| d.index()) {
            Some(i) => push(s, i as i64),
            None => s.push(IValue::None),
        }
        Ok(())
    });
    reg(r, "prim::type", |s| {
        let d = pop(s)?;
        let dev = d
            .as_device()
            .ok_or_else(|| Error::runtime("expected a device"))?;
        push(s, dev.type_name());
        Ok(())
    });
    reg(r, "aten::__is__", |s| {
        let b = pop(s)?;
        let a = pop(s)?;
        push(s, a.is_same(&b));
        Ok(())
    });
    reg(r, "aten::__isnot__", |s| {
        let b = pop(s)?;
        let a = pop(s)?;
        push(s, !a.is_same(&b));
        Ok(())
    });
    reg(r, "aten::__not__", |s| {
        let b = pop_bool(s)?;
        push(s, !b);
        Ok(())
    });
    r.set_scalar_op("aten::__not__", crate::fast::ScalarOp::Not);
    for (name, to) in [
        ("aten::Int.Tensor", 'i'),
        ("aten::IntImplicit", 'i'),
        ("aten::Float.Tensor", 'f'),
        ("aten::FloatImplicit", 'f'),
        ("aten::Bool.Tensor", 'b'),
        ("aten::ScalarImplicit", 's'),
    ] {
        reg(r, name, move |s| {
            let t = pop_tensor(s)?;
            if to == 'i' && t.dtype().is_floating_point() && name == "aten::IntImplicit" {
                return Err(Error::runtime(
                    "Cannot input a tensor of type Float as an integral argument",
                ));
            }
            let v = tensor_to_number(&t)?;
            s.push(match to {
                'i' => IValue::Int(v.to_i64()),
                'f' => IValue::Double(v.to_f64()),
                'b' => IValue::Bool(v.to_bool()),
                _ => IValue::from_scalar(v),
            });
            Ok(())
        });
    }
    for name in [
        "aten::Int.bool",
        "aten::Int.float",
        "aten::Int.Scalar",
        "aten::Float.int",
        "aten::Float.bool",
        "aten::Float.Scalar",
        "aten::Bool.int",
        "aten::Bool.float",
    ] {
        let to = name.as_bytes()[6];
        reg(r, name, move |s| {
            let v = pop_scalar(s)?;
            s.push(match to {
                b'I' => IValue::Int(v.to_i64()),
                b'F' => IValue::Double(v.to_f64()),
                _ => IValue::Bool(v.to_bool()),
            });
            Ok(())
        });
    }
    reg(r, "prim::rangelist", |s| {
        let n = pop_int(s)?;
        s.push(IValue::int_list(0..n.max(0)));
        Ok(())
    });
    for (name, want_equal) in [("aten::eq.enum", true), ("aten::ne.enum", false)] {
        reg(r, name, move |s| {
            let b = pop(s)?;
            let a = pop(s)?;
            let same = match (&a, &b) {
                (IValue::Enum(x), IValue::Enum(y)) => {
                    x.enum_type.name == y.enum_type.name && x.name == y.name
                }
                _ => return Err(Error::runtime("enum comparison expects two enum values")),
            };
            s.push(IValue::Bool(same == want_equal));
            Ok(())
        });
    }
    reg(r, "prim::tolist", |s| {
        let code = pop_int(s)?;
        let dims = pop_int(s)?;
        let t = pop_tensor(s)?;
        s.push(tensor_to_list(&t, dims, code)?);
        Ok(())
    });
    reg(r, "prim::EnumName", |s| match pop(s)? {
        IValue::Enum(e) => {
            push(s, e.name.clone());
            Ok(())
        }
        v => Err(Error::runtime(format!(
            "EnumName expects an enum, got '{}'",
            v.tag_name()
        ))),
    });
    for name in [
        "prim::EnumValue.int",
        "prim::EnumValue.float",
        "prim::EnumValue.str",
    ] {
        reg(r, name, |s| match pop(s)? {
            IValue::Enum(e) => {
                s.push(e.value.clone());
                Ok(())
            }
            v => Err(Error::runtime(format!(
                "EnumValue expects an enum, got '{}'",
                v.tag_name()
            ))),
        });
    }
    reg(r, "aten::warn", |s| {
        let _stacklevel = pop_int(s)?;
        let msg = pop(s)?;
        eprintln!("UserWarning: {}", msg.to_display_string());
        Ok(())
    });
    let _ = Type::any();
}

/// `x.tolist()` as nested lists of `dims` levels of int (code 0), float (1) or bool (2).
fn tensor_to_list(t: &Tensor, dims: i64, code: i64) -> Result<IValue, Error> {
    if t.dim() as i64 != dims {
        return Err(Error::runtime(format!(
            "Output annotation list dimension and runtime tensor dimension must match for tolist(): the annotation has {dims} dimension(s), the tensor {}",
            t.dim()
        )));
    }
    let (elem, want): (ts_core::TypeRef, fn(DType) -> bool) = match code {
        0 => (Type::int(), |d| d.is_integral() && d != DType::Bool),
        1 => (Type::float(), |d| d.is_floating_point()),
        _ => (Type::bool(), |d| d == DType::Bool),
    };
    if !want(t.dtype()) {
        return Err(Error::runtime(format!(
            "Output annotation element type and runtime tensor element type must match for tolist(): the annotation says {}, the tensor holds {}",
            elem.annotation_str(),
            t.dtype().scalar_type_name()
        )));
    }
    let leaves: Vec<IValue> = match code {
        0 => t
            .contiguous()?
            .to_dtype(DType::Int64, false)?
            .to_vec::<i64>()
            .into_iter()
            .map(IValue::Int)
            .collect(),
        1 => t
            .contiguous()?
            .to_dtype(DType::Float64, false)?
            .to_vec::<f64>()
            .into_iter()
            .map(IValue::Double)
            .collect(),
        _ => t
            .contiguous()?
            .to_vec::<bool>()
            .into_iter()
            .map(IValue::Bool)
            .collect(),
    };
    let sizes = t.sizes().to_vec();
    fn build(leaves: &[IValue], sizes: &[i64], elem: &ts_core::TypeRef) -> IValue {
        let Some((&first, rest)) = sizes.split_first() else {
            return leaves.first().cloned().unwrap_or_default();
        };
        let n = first.max(0) as usize;
        let step = leaves.len().checked_div(n).unwrap_or(0);
        let inner_ty = rest.iter().fold(elem.clone(), |t, _| Type::list(t));
        let items = (0..n)
            .map(|i| build(&leaves[i * step..(i + 1) * step], rest, elem))
            .collect();
        IValue::list(inner_ty, items)
    }
    Ok(build(&leaves, &sizes, &elem))
}
