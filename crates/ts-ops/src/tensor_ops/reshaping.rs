//! Joins, splits, repetition, rotation, view scatters, finite differences and the tensor
//! overloads of the range factories.

use ts_tensor::ops::{repeat_rotate, split_join};
use ts_tensor::{Error, Result, Scalar, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

fn each(a: &Args, f: impl Fn(&Tensor) -> Result<Tensor>) -> Result<Vec<Tensor>> {
    a.tensors(0)?.iter().map(f).collect()
}

/// A 0-d tensor argument of a range factory, as its number.
fn endpoint(t: &Tensor, which: &str, other: &str, op: &str) -> Result<Scalar> {
    if t.dim() != 0 {
        return Err(Error::runtime(format!(
            "{op} only supports 0-dimensional start and end tensors, but got {which} with {} dimension(s) and {other}",
            t.dim()
        )));
    }
    t.item()
}

fn range_ends(a: &Args, op: &str) -> Result<(Scalar, Scalar)> {
    let start = match a.v(0)? {
        ts_core::IValue::Tensor(t) => endpoint(t, "start", "end", op)?,
        _ => a.s(0)?,
    };
    let end = match a.v(1)? {
        ts_core::IValue::Tensor(t) => endpoint(t, "end", "start", op)?,
        _ => a.s(1)?,
    };
    Ok((start, end))
}

/// Registers the reshaping operators.
pub fn register(r: &Registry) {
    register_joins(r);
    register_splits(r);
    register_rearrangements(r);
    register_differences(r);
    register_ranges(r);
}

fn register_joins(r: &Registry) {
    def(r, "aten::atleast_1d", |a| a.t(0)?.atleast_1d());
    def(r, "aten::atleast_2d", |a| a.t(0)?.atleast_2d());
    def(r, "aten::atleast_3d", |a| a.t(0)?.atleast_3d());
    def(r, "aten::atleast_1d.Sequence", |a| {
        each(a, Tensor::atleast_1d)
    });
    def(r, "aten::atleast_2d.Sequence", |a| {
        each(a, Tensor::atleast_2d)
    });
    def(r, "aten::atleast_3d.Sequence", |a| {
        each(a, Tensor::atleast_3d)
    });
    def(r, "aten::column_stack", |a| {
        split_join::column_stack(&a.tensors(0)?)
    });
    def(r, "aten::dstack", |a| split_join::dstack(&a.tensors(0)?));
    def(r, "aten::row_stack", |a| {
        ts_tensor::ops::join::vstack(&a.tensors(0)?)
    });
    def(r, "aten::block_diag", |a| {
        split_join::block_diag(&a.tensors(0)?)
    });
    def(r, "aten::cartesian_prod", |a| {
        split_join::cartesian_prod(&a.tensors(0)?)
    });
    def(r, "aten::combinations", |a| {
        a.t(0)?.combinations(a.int(1)?, a.b(2)?)
    });
    def(r, "aten::broadcast_tensors", |a| {
        split_join::broadcast_tensors(&a.tensors(0)?)
    });
    def(r, "aten::_chunk_cat", |a| {
        split_join::chunk_cat(&a.tensors(0)?, a.int(1)?, a.int(2)?)
    });
    def(r, "aten::broadcast_to", |a| {
        a.t(0)?.broadcast_to(&a.ints(1)?)
    });
    def(r, "aten::broadcast_shapes", |a| {
        split_join::broadcast_shape_lists(&a.ints(0)?, &a.ints(1)?)
    });
}

fn register_splits(r: &Registry) {
    for op in ["hsplit", "vsplit", "dsplit"] {
        def(r, &format!("aten::{op}.int"), move |a| {
            a.t(0)?.directional_split_sections(op, a.int(1)?)
        });
        def(r, &format!("aten::{op}.array"), move |a| {
            a.t(0)?.directional_split_indices(op, &a.ints(1)?)
        });
    }
    def(r, "aten::tensor_split.sections", |a| {
        a.t(0)?.tensor_split_sections(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::tensor_split.indices", |a| {
        a.t(0)?.tensor_split_indices(&a.ints(1)?, a.int(2)?)
    });
    def(r, "aten::tensor_split.tensor_indices_or_sections", |a| {
        a.t(0)?.tensor_split_tensor(a.t(1)?, a.int(2)?)
    });
    def(r, "aten::unsafe_chunk", |a| {
        a.t(0)?.chunk(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::unsafe_split.Tensor", |a| {
        a.t(0)?.split(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::unsafe_split_with_sizes", |a| {
        a.t(0)?.split_with_sizes(&a.ints(1)?, a.int(2)?)
    });
}

fn register_rearrangements(r: &Registry) {
    def(r, "aten::tile", |a| a.t(0)?.tile(&a.ints(1)?));
    def(r, "aten::rot90", |a| a.t(0)?.rot90(a.int(1)?, &a.ints(2)?));
    def(r, "aten::fliplr", |a| a.t(0)?.fliplr());
    def(r, "aten::flipud", |a| a.t(0)?.flipud());
    def(r, "aten::diagflat", |a| a.t(0)?.diagflat(a.int(1)?));
    def(r, "aten::diag_embed", |a| {
        a.t(0)?.diag_embed(a.int(1)?, a.int(2)?, a.int(3)?)
    });
    def(r, "aten::repeat_interleave.Tensor", |a| {
        repeat_rotate::repeat_interleave_counts(a.t(0)?, a.oint(1)?)
    });
    def(r, "aten::repeat_interleave.self_Tensor", |a| {
        a.t(0)?
            .repeat_interleave_tensor(a.t(1)?, a.oint(2)?, a.oint(3)?)
    });
    def(r, "aten::repeat_interleave.self_int", |a| {
        a.t(0)?
            .repeat_interleave_int(a.int(1)?, a.oint(2)?, a.oint(3)?)
    });
    def(r, "aten::slice_inverse", |a| {
        // Functionalization's inverse of `slice`: a view of `self`'s storage with the geometry
        // of `src` (the base the slice was taken from); the slice arguments are not consulted.
        let src = a.t(1)?;
        a.t(0)?.as_strided(
            &src.sizes(),
            &src.strides(),
            Some(src.storage_offset() as i64),
        )
    });
    def(r, "aten::slice_scatter", |a| {
        a.t(0)?
            .slice_scatter(a.t(1)?, a.int(2)?, a.oint(3)?, a.oint(4)?, a.int(5)?)
    });
    def(r, "aten::select_scatter", |a| {
        a.t(0)?.select_scatter(a.t(1)?, a.int(2)?, a.int(3)?)
    });
    def(r, "aten::diagonal_scatter", |a| {
        a.t(0)?
            .diagonal_scatter(a.t(1)?, a.int(2)?, a.int(3)?, a.int(4)?)
    });
    def(r, "aten::as_strided_scatter", |a| {
        a.t(0)?
            .as_strided_scatter(a.t(1)?, &a.ints(2)?, &a.ints(3)?, a.oint(4)?)
    });
    def(r, "aten::fill.Scalar", |a| a.t(0)?.fill_scalar(a.s(1)?));
    def(r, "aten::fill.Tensor", |a| a.t(0)?.fill_tensor(a.t(1)?));
    def(r, "aten::sum_to_size", |a| a.t(0)?.sum_to_size(&a.ints(1)?));
    def_many(r, &["aten::moveaxis.int"], |a| {
        a.t(0)?.movedim(a.int(1)?, a.int(2)?)
    });
    def_many(
        r,
        &["aten::movedim.intlist", "aten::moveaxis.intlist"],
        |a| a.t(0)?.movedim_list(&a.ints(1)?, &a.ints(2)?),
    );
}

fn register_differences(r: &Registry) {
    def(r, "aten::diff", |a| {
        a.t(0)?.diff(a.int(1)?, a.int(2)?, a.ot(3)?, a.ot(4)?)
    });
    def_many(r, &["aten::trapezoid.x", "aten::trapz.x"], |a| {
        a.t(0)?.trapezoid_x(a.t(1)?, a.int(2)?)
    });
    def_many(r, &["aten::trapezoid.dx", "aten::trapz.dx"], |a| {
        a.t(0)?.trapezoid_dx(a.s(1)?, a.int(2)?)
    });
    def(r, "aten::cumulative_trapezoid.x", |a| {
        a.t(0)?.cumulative_trapezoid_x(a.t(1)?, a.int(2)?)
    });
    def(r, "aten::cumulative_trapezoid.dx", |a| {
        a.t(0)?.cumulative_trapezoid_dx(a.s(1)?, a.int(2)?)
    });
}

fn register_ranges(r: &Registry) {
    for name in [
        "aten::linspace.Tensor_Tensor",
        "aten::linspace.Tensor_Scalar",
        "aten::linspace.Scalar_Tensor",
    ] {
        def(r, name, |a| {
            a.check_device(5)?;
            let (s, e) = range_ends(a, "linspace")?;
            ts_tensor::ops::factory::linspace(s, e, a.int(2)?, a.dtype(3)?)
        });
    }
    for name in [
        "aten::logspace",
        "aten::logspace.Tensor_Tensor",
        "aten::logspace.Tensor_Scalar",
        "aten::logspace.Scalar_Tensor",
    ] {
        def(r, name, |a| {
            a.check_device(6)?;
            let (s, e) = range_ends(a, "logspace")?;
            ts_tensor::ops::factory::logspace(s, e, a.int(2)?, a.f(3)?, a.dtype(4)?)
        });
    }
}
