//! Peephole rewrites that need alias analysis (PyTorch's `PeepholeOptimizeAliasSensitive`):
//! `conv{1,2,3}d(...).dim()` is 3/4/5, and the identities `x + 0`, `x - 0`, `x * 1`, `x / 1`
//! (only where removing them cannot change the result's dtype, and only when making the
//! output an alias of the input is unobservable).

use std::collections::HashSet;

use ts_core::{aten, IValue};
use ts_ir::{BlockId, Graph, ValueId};

use crate::alias_analysis::AliasDb;
use crate::node_schema::node_full_name;
use crate::peephole::tensor_type;

/// Runs the rewrites; `shape_peepholes` lets a known floating dtype enable the identities for
/// float scalars. Returns whether the graph changed.
pub fn peephole_optimize_alias_sensitive(g: &mut Graph, shape_peepholes: bool) -> bool {
    let mut p = Impl {
        db: None,
        stale: HashSet::new(),
        shape_peepholes,
    };
    let top = g.block();
    p.run_block(g, top)
}

struct Impl {
    /// Built on first use (most graphs offer no candidate): every rewrite consults it before
    /// changing the graph, so it always describes the graph as the pass found it.
    db: Option<AliasDb>,
    /// Values whose aliasing facts in `db` are out of date after a rewrite.
    stale: HashSet<ValueId>,
    shape_peepholes: bool,
}

impl Impl {
    fn db(&mut self, g: &Graph) -> &AliasDb {
        self.db.get_or_insert_with(|| AliasDb::new(g))
    }

    fn is_floating_point(&self, g: &Graph, v: ValueId) -> bool {
        self.shape_peepholes
            && tensor_type(g, v)
                .and_then(|t| t.dtype)
                .is_some_and(|d| d.is_floating_point())
    }

    fn run_block(&mut self, g: &mut Graph, b: BlockId) -> bool {
        let mut changed = false;
        for n in g.block_nodes(b) {
            if !g.is_alive(n) {
                continue;
            }
            for sb in g.node(n).blocks().to_vec() {
                changed |= self.run_block(g, sb);
            }
            let kind = g.node(n).kind();
            if kind == aten::conv1d || kind == aten::conv2d || kind == aten::conv3d {
                // dim(conv(x)) is common and blocks conv-bn folding.
                let out = g.node(n).output(0);
                let dims: Vec<_> = g
                    .value(out)
                    .uses()
                    .iter()
                    .filter(|u| g.node(u.user).kind() == aten::dim)
                    .map(|u| u.user)
                    .collect();
                if dims.is_empty() {
                    continue;
                }
                let rank = if kind == aten::conv1d {
                    3
                } else if kind == aten::conv2d {
                    4
                } else {
                    5
                };
                let unwritten = !self.db(g).has_writers(g, out);
                for d in dims {
                    if unwritten || self.db(g).move_after_topologically_valid(g, n, d) {
                        let dout = g.node(d).output(0);
                        let c = g.with_insert_point(d, |g| g.insert_constant(&IValue::Int(rank)));
                        g.replace_all_uses_with(dout, c);
                        changed = true;
                    }
                }
                continue;
            }
            let Some(name) = node_full_name(g, n) else {
                continue;
            };
            let ins = g.node(n).inputs().to_vec();
            let is_int = |v: ValueId| g.value(v).ty().is_int();
            match name.as_str() {
                "aten::add.Scalar" | "aten::sub.Scalar" => {
                    let (Some(other), Some(alpha)) = (g.to_ivalue(ins[1]), g.to_ivalue(ins[2]))
                    else {
                        continue;
                    };
                    // With a float scalar, removing the op could skip type promotion.
                    if !self.is_floating_point(g, ins[0]) && (!is_int(ins[1]) || !is_int(ins[2])) {
                        continue;
                    }
                    if as_f64(&alpha) == Some(1.0) && as_f64(&other) == Some(0.0) {
                        let out = g.node(n).output(0);
                        if self.try_replace_output_with_input(g, ins[0], out) {
                            crate::graph_update!(
                                "(x + 0 == x - 0 == x) is replaced with {}",
                                g.display_name(ins[0])
                            );
                            changed = true;
                        }
                    }
                }
                "aten::mul.Scalar" | "aten::div.Scalar" => {
                    let Some(other) = g.to_ivalue(ins[1]) else {
                        continue;
                    };
                    if !self.is_floating_point(g, ins[0])
                        && (name == "aten::div.Scalar" || !is_int(ins[1]))
                    {
                        continue;
                    }
                    if as_f64(&other) == Some(1.0) {
                        let out = g.node(n).output(0);
                        if self.try_replace_output_with_input(g, ins[0], out) {
                            crate::graph_update!(
                                "(x * 1 == x / 1 == x) is replaced with {}",
                                g.display_name(ins[0])
                            );
                            changed = true;
                        }
                    }
                }
                _ => {}
            }
        }
        changed
    }

    fn try_replace_output_with_input(
        &mut self,
        g: &mut Graph,
        input: ValueId,
        output: ValueId,
    ) -> bool {
        if !self
            .db(g)
            .safe_to_change_aliasing_relationship(g, &[input], &[output])
        {
            return false;
        }
        // The database is not updated after a rewrite: values that may alias rewritten ones
        // are left alone.
        let stale: Vec<ValueId> = self.stale.iter().copied().collect();
        if self.db(g).may_alias_any(g, &[input, output], &stale) {
            return false;
        }
        g.replace_all_uses_with(output, input);
        self.stale.insert(input);
        self.stale.insert(output);
        true
    }
}

fn as_f64(v: &IValue) -> Option<f64> {
    match v {
        IValue::Int(i) => Some(*i as f64),
        IValue::Double(d) => Some(*d),
        IValue::Bool(b) => Some(*b as i64 as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn removes_identities_only_when_safe() {
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %zero : int = prim::Constant[value=0]()\n  %one : int = prim::Constant[value=1]()\n  %f : float = prim::Constant[value=1.]()\n  %a : Tensor = aten::mul(%x, %one)\n  %b : Tensor = aten::relu(%a)\n  %c : Tensor = aten::add(%b, %zero, %one)\n  %d : Tensor = aten::mul(%c, %f)\n  %e : Tensor = aten::sigmoid(%d)\n  return (%e)\n",
        )
        .unwrap();
        assert!(peephole_optimize_alias_sensitive(&mut g, false));
        crate::dead_code_elimination::eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        // x * 1 and relu(...) + 0 go (only one side escapes the graph); a float scalar on a
        // tensor of unknown dtype stays (it could promote the dtype).
        FileCheck::new()
            .check_not("aten::mul(%x")
            .check("aten::relu(%x)")
            .check_not("aten::add")
            .check("aten::mul(%b, %f)")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
