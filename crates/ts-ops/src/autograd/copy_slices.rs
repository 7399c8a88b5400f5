//! In-place writes through views (PyTorch's `CopySlices`).
//!
//! A view made while grad mode is on remembers its base (the tensor it views, never itself a
//! view) and the storage version at which its history was in step with the base's. An in-place
//! operator on such a view records its node `N` as usual, then:
//! - the base's history is replaced by a `CopySlices` node: the base's gradient with the view's
//!   region replaced by what `N` sends to `self`, and `N`'s other inputs' gradients;
//! - the view's history becomes an `AsStridedBackward0` node reading the base's new history.
//!
//! Other views of the same base see a newer storage version than theirs; the first operator
//! that uses one regenerates its history from the base the same way ([`refresh_view`]).

use std::sync::Arc;

use ts_core::IValue;
use ts_tensor::autograd::{Edge, Node};
use ts_tensor::{Error, Storage, Tensor};

use super::ops::{call, call1, tv};
use super::record::edge_of;

/// Where a view lies inside its base, so that a base-shaped gradient can be cut the same way.
#[derive(Clone)]
struct Geometry {
    base_sizes: Vec<i64>,
    base_strides: Vec<i64>,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
}

impl Geometry {
    fn of(view: &Tensor, base: &Tensor) -> Geometry {
        Geometry {
            base_sizes: base.sizes().to_vec(),
            base_strides: base.strides().to_vec(),
            sizes: view.sizes().to_vec(),
            strides: view.strides().to_vec(),
            offset: view.storage_offset() as i64 - base.storage_offset() as i64,
        }
    }

    /// A zero tensor laid out as the base (dtype of `like`), and the view's region of it.
    fn fresh(&self, like: &Tensor) -> Result<(Tensor, Tensor), Error> {
        let full = Tensor::empty_strided(&self.base_sizes, &self.base_strides, like.dtype())?;
        let part = self.cut(&full)?;
        Ok((full, part))
    }

    fn cut(&self, full: &Tensor) -> Result<Tensor, Error> {
        call1(
            "aten::as_strided",
            vec![
                tv(full),
                IValue::int_list(self.sizes.iter().copied()),
                IValue::int_list(self.strides.iter().copied()),
                IValue::Int(self.offset),
            ],
        )
    }
}

fn copy_into(dst: &Tensor, src: &Tensor) -> Result<(), Error> {
    call("aten::copy_", vec![tv(dst), tv(src), IValue::Bool(false)]).map(|_| ())
}

/// The view's history read from its base's: the base's gradient is zero outside the view.
fn as_strided_node(view: &Tensor, base: &Tensor, base_edge: Option<Edge>) -> Arc<Node> {
    let geo = Geometry::of(view, base);
    let m = view.meta();
    Arc::new(Node::new(
        "AsStridedBackward0".into(),
        vec![base_edge],
        vec![(m.sizes.clone(), m.dtype)],
        Vec::new(),
        Box::new(move |grads: &[Tensor]| {
            let (full, part) = geo.fresh(&grads[0])?;
            copy_into(&part, &grads[0])?;
            Ok(vec![Some(full)])
        }),
    ))
}

/// True when `t` and `base` share storage (an operator that may return a copy, `reshape`,
/// `contiguous`, `to`, made a view only when they do).
fn shares_storage(t: &Tensor, base: &Tensor) -> bool {
    !Tensor::is_same(t, base) && Storage::ptr_eq(&t.storage(), &base.storage())
}

/// Marks the outputs of a view operator on `input` as views of `input`'s base.
pub(super) fn mark_views(input: &Tensor, outs: &[Tensor]) {
    let base = input
        .view_info()
        .map(|(b, _)| b)
        .unwrap_or_else(|| input.clone());
    for t in outs {
        if shares_storage(t, &base) {
            t.set_view_base(base.clone(), t.version());
        }
    }
}

/// Brings a view's history in step with its base after a write through the base or another
/// view of it.
pub(super) fn refresh_view(v: &Tensor) {
    let Some((base, version)) = v.view_info() else {
        return;
    };
    let now = v.version();
    if now == version {
        return;
    }
    if base.requires_grad() {
        v.set_grad_fn(as_strided_node(v, &base, edge_of(&base)), 0);
    }
    v.set_view_base(base, now);
}

/// After an in-place operator recorded its node on the view `v` of `base`: rewrites the base's
/// history as `CopySlices` over that node, and the view's as a view of the new base history.
pub(super) fn rebase_through_view(v: &Tensor, base: &Tensor) -> Result<(), Error> {
    let Some((n, _)) = v.grad_fn() else {
        return Ok(());
    };
    let geo = Geometry::of(v, base);
    let mut edges = vec![edge_of(base)];
    edges.extend(n.next_edges.iter().skip(1).cloned());
    let m = base.meta();
    let outputs = vec![(m.sizes.clone(), m.dtype)];
    drop(m);
    let inner = n.clone();
    let copy_slices = Arc::new(Node::new(
        "CopySlices".into(),
        edges,
        outputs,
        Vec::new(),
        Box::new(move |grads: &[Tensor]| {
            let (full, part) = geo.fresh(&grads[0])?;
            copy_into(&full, &grads[0])?;
            let part_grad = call1("aten::clone", vec![tv(&part), IValue::None])?;
            let mut res = inner.apply(&[part_grad], false)?;
            match res.first().cloned().flatten() {
                Some(r) => copy_into(&part, &r)?,
                None => {
                    call("aten::zero_", vec![tv(&part)])?;
                }
            }
            if res.is_empty() {
                res.push(None);
            }
            res[0] = Some(full);
            Ok(res)
        }),
    ));
    base.set_grad_fn(copy_slices.clone(), 0);
    let edge = Some(Edge::Node {
        node: copy_slices,
        input_nr: 0,
    });
    v.set_grad_fn(as_strided_node(v, base, edge), 0);
    Ok(())
}
