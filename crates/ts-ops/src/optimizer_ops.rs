//! Operators that only the optimizer creates: `prim::IfThenElse` (a select), `prim::ConstantChunk`
//! (`chunk` with the chunk count and dim as attributes and one output per chunk),
//! `prim::MMTreeReduce` (a sum of matrix products as one product of concatenations) and
//! `prim::MMBatchSide` (matrix products sharing an operand as one product).

use std::sync::Arc;

use ts_core::{IValue, Symbol};
use ts_tensor::{Error, Scalar, Tensor};

use crate::registry::{op, Registry};
use crate::stack::*;

fn attr_int(g: &ts_ir::Graph, n: ts_ir::NodeId, name: &str) -> Result<i64, Error> {
    g.node(n)
        .i(Symbol::attr(name))
        .ok_or_else(|| Error::runtime(format!("{}: missing attribute '{name}'", g.node(n).kind())))
}

fn same_shape(ts: &[Tensor]) -> bool {
    ts.windows(2).all(|w| w[0].sizes() == w[1].sizes())
}

/// Whether one product of concatenations is faster than the separate products (PyTorch's
/// benchmarked cut-off).
fn fast_for_reduce(lhs: &Tensor, rhs: &Tensor) -> bool {
    let (l, m, r) = (lhs.sizes()[0], lhs.sizes()[1], rhs.sizes()[1]);
    m < 512 || ((l < 256 && r < 256) || (l > 256 && r > 256))
}

fn mm_tree_reduce(inputs: Vec<Tensor>) -> Result<Tensor, Error> {
    if inputs.is_empty() || !inputs.len().is_multiple_of(2) {
        return Err(Error::runtime(
            "prim::MMTreeReduce expects an even, non-zero number of operands",
        ));
    }
    let half = inputs.len() / 2;
    let (lhs, rhs) = inputs.split_at(half);
    let all_2d = inputs.iter().all(|t| t.dim() == 2);
    if all_2d && same_shape(lhs) && same_shape(rhs) && fast_for_reduce(&lhs[0], &rhs[0]) {
        let l = ts_tensor::cat(lhs, 1)?;
        let r = ts_tensor::cat(rhs, 0)?;
        return l.mm(&r);
    }
    let acc = lhs[0].mm(&rhs[0])?;
    for i in 1..half {
        acc.add_(&lhs[i].mm(&rhs[i])?, Scalar::Int(1))?;
    }
    Ok(acc)
}

fn mm_batch_side(side: i64, shared: Tensor, others: Vec<Tensor>) -> Result<Vec<Tensor>, Error> {
    let all_2d = others.iter().all(|t| t.dim() == 2) && shared.dim() == 2;
    if all_2d && same_shape(&others) && others[0].numel() <= 1024 * 2048 {
        let (cat_dim, n) = (if side == 0 { 1 } else { 0 }, others.len() as i64);
        let other = ts_tensor::cat(&others, cat_dim)?;
        let out = if side == 0 {
            shared.mm(&other)?
        } else {
            other.mm(&shared)?
        };
        return out.chunk(n, cat_dim);
    }
    others
        .iter()
        .map(|o| {
            if side == 0 {
                shared.mm(o)
            } else {
                o.mm(&shared)
            }
        })
        .collect()
}

/// Registers the operators.
pub fn register(r: &Registry) {
    let _ = r.register_node_op(
        "prim::IfThenElse(bool cond, Any(a) x, Any(b) y) -> Any(b|a)",
        Arc::new(|_, _| {
            Ok(op(|s| {
                let b = pop(s)?;
                let a = pop(s)?;
                let c = pop_bool(s)?;
                s.push(if c { a } else { b });
                Ok(())
            }))
        }),
    );
    let _ = r.register_node_op(
        "prim::ConstantChunk(Tensor(a) self) -> ...",
        Arc::new(|g, n| {
            let chunks = attr_int(g, n, "chunks")?;
            let dim = attr_int(g, n, "dim")?;
            let outputs = g.node(n).outputs().len();
            Ok(op(move |s| {
                let t = pop_tensor(s)?;
                let parts = t.chunk(chunks, dim)?;
                if parts.len() != outputs {
                    return Err(Error::runtime(format!(
                        "Expected chunk to return {outputs} outputs, but it returned {}",
                        parts.len()
                    )));
                }
                s.extend(parts.into_iter().map(IValue::Tensor));
                Ok(())
            }))
        }),
    );
    let _ = r.register_node_op(
        "prim::MMTreeReduce(...) -> Tensor",
        Arc::new(|g, n| {
            let count = g.node(n).inputs().len();
            Ok(op(move |s| {
                let args = pop_n(s, count)?;
                let ts = args
                    .into_iter()
                    .map(|v| match v {
                        IValue::Tensor(t) => Ok(t),
                        other => Err(Error::runtime(format!(
                            "prim::MMTreeReduce expects tensors, got {}",
                            other.tag_name()
                        ))),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                s.push(IValue::Tensor(mm_tree_reduce(ts)?));
                Ok(())
            }))
        }),
    );
    let _ = r.register_node_op(
        "prim::MMBatchSide(Tensor shared, ...) -> ...",
        Arc::new(|g, n| {
            let side = attr_int(g, n, "side")?;
            let count = g.node(n).inputs().len() - 1;
            Ok(op(move |s| {
                let others = pop_n(s, count)?
                    .into_iter()
                    .map(|v| match v {
                        IValue::Tensor(t) => Ok(t),
                        other => Err(Error::runtime(format!(
                            "prim::MMBatchSide expects tensors, got {}",
                            other.tag_name()
                        ))),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let shared = pop_tensor(s)?;
                let outs = mm_batch_side(side, shared, others)?;
                s.extend(outs.into_iter().map(IValue::Tensor));
                Ok(())
            }))
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f32], r: i64, c: i64) -> Tensor {
        Tensor::from_vec(v.to_vec(), &[r, c]).unwrap()
    }

    #[test]
    fn tree_reduce_equals_the_sum_of_products() {
        let a = t(&[1., 2., 3., 4.], 2, 2);
        let b = t(&[5., 6., 7., 8.], 2, 2);
        let r = mm_tree_reduce(vec![a.clone(), b.clone(), b.clone(), a.clone()]).unwrap();
        let want = a
            .mm(&b)
            .unwrap()
            .add(&b.mm(&a).unwrap(), Scalar::Int(1))
            .unwrap();
        assert_eq!(r.to_vec::<f32>(), want.to_vec::<f32>());
    }

    #[test]
    fn batch_side_equals_separate_products() {
        let w = t(&[1., 2., 3., 4.], 2, 2);
        let xs: Vec<Tensor> = (0..3).map(|i| t(&[i as f32, 1., 2., 3.], 2, 2)).collect();
        let outs = mm_batch_side(1, w.clone(), xs.clone()).unwrap();
        for (o, x) in outs.iter().zip(&xs) {
            assert_eq!(o.to_vec::<f32>(), x.mm(&w).unwrap().to_vec::<f32>());
        }
        let outs = mm_batch_side(0, w.clone(), xs.clone()).unwrap();
        for (o, x) in outs.iter().zip(&xs) {
            assert_eq!(o.to_vec::<f32>(), w.mm(x).unwrap().to_vec::<f32>());
        }
    }
}
