//! Questions about a tensor answered with Python values: sizes, strides, `item`, `len`.

use ts_core::IValue;
use ts_tensor::{Error, ErrorKind};

use super::{def, def_many};
use crate::registry::Registry;

/// Registers the tensor query operators.
pub fn register(r: &Registry) {
    def_many(r, &["aten::size", "aten::sym_size"], |a| {
        Ok(a.t(0)?.sizes().to_vec())
    });
    def_many(r, &["aten::size.int", "aten::sym_size.int"], |a| {
        a.t(0)?.size(a.int(1)?)
    });
    def(r, "aten::stride", |a| Ok(a.t(0)?.strides().to_vec()));
    def(r, "aten::stride.int", |a| a.t(0)?.stride(a.int(1)?));
    def(r, "aten::dim", |a| Ok(a.t_nested(0)?.dim() as i64));
    def(r, "aten::numel", |a| Ok(a.t(0)?.numel() as i64));
    def(r, "aten::element_size", |a| {
        Ok(a.t(0)?.dtype().size() as i64)
    });
    def(r, "aten::is_contiguous", |a| Ok(a.t(0)?.is_contiguous()));
    def(r, "aten::is_floating_point", |a| {
        Ok(a.t(0)?.dtype().is_floating_point())
    });
    def(r, "aten::len.Tensor", |a| {
        let t = a.t(0)?;
        if t.dim() == 0 {
            return Err(Error::runtime("len() of a 0-d tensor"));
        }
        Ok(t.sizes()[0])
    });
    def(r, "aten::item", |a| {
        let t = a.t(0)?;
        if t.numel() != 1 {
            return Err(Error::runtime(format!(
                "a Tensor with {} elements cannot be converted to Scalar",
                t.numel()
            )));
        }
        if t.dtype().is_complex() {
            let (re, im) = t.item_complex()?;
            return Ok(IValue::complex(re, im));
        }
        Ok(IValue::from(t.item()?))
    });
    def(r, "aten::__range_length", |a| {
        let (lo, hi, step) = (a.int(0)?, a.int(1)?, a.int(2)?);
        if step == 0 {
            return Err(Error::runtime("range() arg 3 must not be zero"));
        }
        Ok(if step > 0 && lo < hi {
            1 + (hi - 1 - lo) / step
        } else if step < 0 && lo > hi {
            1 + (lo - 1 - hi) / (-step)
        } else {
            0
        })
    });
    def(r, "aten::__derive_index", |a| {
        Ok(a.int(1)? + a.int(0)? * a.int(2)?)
    });
    // Python's any()/all() over lists of primitives.
    def_many(
        r,
        &[
            "aten::any.int",
            "aten::any.float",
            "aten::any.bool",
            "aten::any.str",
        ],
        |a| {
            let l = a
                .v(0)?
                .as_list()
                .ok_or_else(|| Error::runtime("any() expects a list"))?;
            let r = l.items.read().iter().any(truthy);
            Ok(r)
        },
    );
    def_many(
        r,
        &["aten::all.int", "aten::all.float", "aten::all.bool"],
        |a| {
            let l = a
                .v(0)?
                .as_list()
                .ok_or_else(|| Error::runtime("all() expects a list"))?;
            let r = l.items.read().iter().all(truthy);
            Ok(r)
        },
    );
    def(r, "aten::is_nonzero", |a| {
        let t = a.t(0)?;
        match t.numel() {
            0 => Err(Error::runtime(
                "Boolean value of Tensor with no values is ambiguous",
            )),
            1 => Ok(t.item()?.to_bool()),
            _ => Err(Error::new(
                ErrorKind::RuntimeError,
                "Boolean value of Tensor with more than one value is ambiguous",
            )),
        }
    });
}

/// Python truthiness of a primitive.
fn truthy(v: &IValue) -> bool {
    match v {
        IValue::Bool(b) => *b,
        IValue::Int(i) => *i != 0,
        IValue::Double(d) => *d != 0.0,
        IValue::String(s) => !s.is_empty(),
        IValue::None => false,
        _ => true,
    }
}
