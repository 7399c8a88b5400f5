//! The exit transform (PyTorch's `exit_transform`): removes `prim::ReturnStmt` and
//! `prim::LoopContinuation` by giving blocks explicit exit flags and values. Code after an exit
//! is deleted; code after a possible exit is guarded by an `if` on the "did exit" flag; blocks
//! that always throw count as exiting either way. Afterwards consecutive `if`s that test a
//! constant flag of the previous `if` are merged.

use std::collections::HashMap;

use ts_core::{prim, IValue, Symbol, Type, TypeRef};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Status {
    Will,
    Wont,
    Might,
    Throws,
}

#[derive(Clone)]
struct ExitPair {
    has_exited: ValueId,
    values: Vec<ValueId>,
}

struct Transformer {
    kind: Symbol,
    true_val: ValueId,
    false_val: ValueId,
    throws_val: ValueId,
    unit_values: HashMap<String, ValueId>,
    target: Option<BlockId>,
}

impl Transformer {
    fn new(g: &mut Graph, kind: Symbol) -> Transformer {
        let first = g.first_node(g.block());
        let (t, f) = g.with_insert_point(first, |g| {
            (
                g.insert_constant(&IValue::Bool(true)),
                g.insert_constant(&IValue::Bool(false)),
            )
        });
        let mut tr = Transformer {
            kind,
            true_val: t,
            false_val: f,
            throws_val: t,
            unit_values: HashMap::new(),
            target: None,
        };
        // A distinct marker value for "throws" (never used at run time).
        tr.throws_val = tr.unit(g, &Type::bool());
        tr.unit_values.clear();
        tr
    }

    /// A `prim::Uninitialized` of type `ty`, shared per type, placed after the graph inputs.
    fn unit(&mut self, g: &mut Graph, ty: &TypeRef) -> ValueId {
        let key = ty.to_string();
        if let Some(&v) = self.unit_values.get(&key) {
            return v;
        }
        let n = g.create(prim::Uninitialized, &[], 0);
        let v = g.add_output(n, ty.clone());
        g.prepend_node(g.block(), n);
        self.unit_values.insert(key, v);
        v
    }

    fn status(&self, p: &ExitPair) -> Status {
        if p.has_exited == self.true_val {
            Status::Will
        } else if p.has_exited == self.false_val {
            Status::Wont
        } else if p.has_exited == self.throws_val {
            Status::Throws
        } else {
            Status::Might
        }
    }

    fn wont(&self) -> ExitPair {
        ExitPair {
            has_exited: self.false_val,
            values: vec![],
        }
    }

    fn throws(&self) -> ExitPair {
        ExitPair {
            has_exited: self.throws_val,
            values: vec![],
        }
    }

    fn add_if_outputs(&mut self, g: &mut Graph, n: NodeId, t: &[ValueId], f: &[ValueId]) {
        let (tb, fb) = (g.node(n).blocks()[0], g.node(n).blocks()[1]);
        for (&a, &b) in t.iter().zip(f) {
            g.add_block_output(tb, a);
            g.add_block_output(fb, b);
            let (ta, tb_) = (g.value(a).ty().clone(), g.value(b).ty().clone());
            let ty = ts_core::unify_types(&ta, &tb_, true).unwrap_or(ta);
            g.add_output(n, ty);
        }
    }

    fn uninit_like(&mut self, g: &mut Graph, vals: &[ValueId]) -> Vec<ValueId> {
        vals.iter()
            .map(|&v| {
                let t = g.value(v).ty().clone();
                self.unit(g, &t)
            })
            .collect()
    }

    fn transform_loop(&mut self, g: &mut Graph, n: NodeId) -> ExitPair {
        let body = g.node(n).blocks()[0];
        let pair = self.transform_exits(g, body);
        let st = self.status(&pair);
        if st == Status::Wont || st == Status::Throws {
            return self.wont();
        }
        // Exit the loop once an exit happened: continue = did_exit ? false : cond.
        let ret = g.return_node(body);
        let new_if = g.create(prim::If, &[pair.has_exited], 0);
        let cond_out = g.add_output(new_if, Type::bool());
        let tb = g.add_block(new_if);
        let fb = g.add_block(new_if);
        g.insert_before(new_if, ret);
        g.add_block_output(tb, self.false_val);
        let old_cond = g.block_outputs(body)[0];
        g.add_block_output(fb, old_cond);
        g.erase_block_output(body, 0);
        g.insert_block_output(body, 0, cond_out);
        // Carry the exit flag and values out of the loop.
        g.add_input(n, self.false_val);
        g.add_block_input(body, Type::bool());
        g.add_block_output(body, pair.has_exited);
        let new_has_exited = g.add_output(n, Type::bool());
        for &v in &pair.values {
            let t = g.value(v).ty().clone();
            let u = self.unit(g, &t);
            g.add_input(n, u);
            g.add_output(n, t.clone());
            g.add_block_input(body, t);
            g.add_block_output(body, v);
        }
        let outs = g.node(n).outputs().to_vec();
        let k = pair.values.len();
        ExitPair {
            has_exited: new_has_exited,
            values: outs[outs.len() - k..].to_vec(),
        }
    }

    fn if_status(t: Status, f: Status) -> Status {
        if t == Status::Throws {
            return f;
        }
        if f == Status::Throws {
            return t;
        }
        if t == Status::Wont && f == Status::Wont {
            return Status::Wont;
        }
        if t == Status::Will && f == Status::Will {
            return Status::Will;
        }
        Status::Might
    }

    fn transform_if(&mut self, g: &mut Graph, n: NodeId) -> ExitPair {
        let (tb, fb) = (g.node(n).blocks()[0], g.node(n).blocks()[1]);
        let mut tp = self.transform_exits(g, tb);
        let mut fp = self.transform_exits(g, fb);
        let (ts, fs) = (self.status(&tp), self.status(&fp));
        let st = Self::if_status(ts, fs);
        if st == Status::Throws {
            return self.throws();
        }
        if st == Status::Wont {
            return self.wont();
        }
        if ts == Status::Wont || ts == Status::Throws {
            let vals = self.uninit_like(g, &fp.values);
            tp = ExitPair {
                has_exited: tp.has_exited,
                values: vals,
            };
        } else if fs == Status::Wont || fs == Status::Throws {
            let vals = self.uninit_like(g, &tp.values);
            fp = ExitPair {
                has_exited: fp.has_exited,
                values: vals,
            };
        }
        let has_exited = if st == Status::Will {
            self.true_val
        } else {
            self.add_if_outputs(g, n, &[tp.has_exited], &[fp.has_exited]);
            *g.node(n).outputs().last().expect("just added")
        };
        self.add_if_outputs(g, n, &tp.values, &fp.values);
        let outs = g.node(n).outputs().to_vec();
        let k = tp.values.len();
        ExitPair {
            has_exited,
            values: outs[outs.len() - k..].to_vec(),
        }
    }

    /// Wraps the nodes after a possible exit in `if did_exit: <exit> else: <rest>`.
    fn guard_block_nodes(
        &mut self,
        g: &mut Graph,
        b: BlockId,
        pair: &ExitPair,
        from: NodeId,
    ) -> ExitPair {
        let new_if = g.create(prim::If, &[pair.has_exited], 0);
        g.insert_before(new_if, from);
        let exit_block = g.add_block(new_if);
        let guard_block = g.add_block(new_if);
        let ret = g.return_node(b);
        let mut cur = from;
        while cur != ret {
            let nx = g.next_node(cur);
            let gr = g.return_node(guard_block);
            g.move_before(cur, gr);
            cur = nx;
        }
        let outs = g.block_outputs(b).to_vec();
        let exit_vals = self.uninit_like(g, &outs);
        for (i, &o) in outs.iter().enumerate() {
            g.add_block_output(exit_block, exit_vals[i]);
            g.add_block_output(guard_block, o);
            let t = g.value(o).ty().clone();
            g.add_output(new_if, t);
        }
        while !g.block_outputs(b).is_empty() {
            g.erase_block_output(b, 0);
        }
        for o in g.node(new_if).outputs().to_vec() {
            g.add_block_output(b, o);
        }
        let marker = g.create(self.kind, &pair.values, 0);
        let er = g.return_node(exit_block);
        g.insert_before(marker, er);
        let normal = outs.len();
        let pair = self.transform_if(g, new_if);
        // PyTorch's guard `if` lists the exit flag and values before the block's own outputs.
        rotate_outputs_to_end(g, new_if, normal);
        pair
    }

    fn destroy_after_exit(&mut self, g: &mut Graph, n: NodeId) {
        for o in g.node(n).outputs().to_vec() {
            if g.value(o).has_uses() {
                let t = g.value(o).ty().clone();
                let u = self.unit(g, &t);
                g.replace_all_uses_with(o, u);
            }
        }
        let _ = g.destroy_node(n);
    }

    fn delete_after_exit_nodes(&mut self, g: &mut Graph, b: BlockId, from: NodeId) {
        let ret = g.return_node(b);
        let mut after = Vec::new();
        let mut cur = from;
        while cur != ret {
            after.push(cur);
            cur = g.next_node(cur);
        }
        for n in after.into_iter().rev() {
            self.destroy_after_exit(g, n);
        }
    }

    fn update_target(&mut self, g: &Graph, b: BlockId) {
        let owner = g.block_owner(b);
        let owner_kind = owner.map(|o| g.node(o).kind());
        let loop_target = owner_kind == Some(prim::Loop) && self.kind == prim::LoopContinuation;
        let function_target = owner.is_none() && self.kind == prim::ReturnStmt;
        if loop_target || function_target {
            self.target = Some(b);
        }
    }

    fn transform_exits(&mut self, g: &mut Graph, b: BlockId) -> ExitPair {
        let prev_target = self.target;
        self.update_target(g, b);
        let mut pair = self.wont();
        let mut n = g.first_node(b);
        let ret = g.return_node(b);
        while n != ret {
            let next = g.next_node(n);
            let kind = g.node(n).kind();
            if kind == prim::RaiseException {
                pair = self.throws();
            } else if kind == prim::ReturnStmt || kind == prim::LoopContinuation {
                if kind == self.kind {
                    pair = ExitPair {
                        has_exited: self.true_val,
                        values: g.node(n).inputs().to_vec(),
                    };
                    g.remove_all_inputs(n);
                    let _ = g.destroy_node(n);
                }
            } else if kind == prim::If {
                pair = self.transform_if(g, n);
            } else if kind == prim::Loop {
                pair = self.transform_loop(g, n);
            } else if kind == prim::With {
                // The body may exit; the exit block (`__exit__`) always runs.
                let body = g.node(n).blocks()[0];
                pair = self.transform_exits(g, body);
            }
            let st = self.status(&pair);
            if st == Status::Will || st == Status::Throws {
                if next != ret {
                    self.delete_after_exit_nodes(g, b, next);
                }
                break;
            }
            if st == Status::Might {
                if next != ret {
                    pair = self.guard_block_nodes(g, b, &pair, next);
                }
                break;
            }
            n = next;
        }
        if self.target == Some(b) {
            match self.status(&pair) {
                Status::Might => {
                    let ret = g.return_node(b);
                    let new_if = g.create(prim::If, &[pair.has_exited], 0);
                    g.insert_before(new_if, ret);
                    g.add_block(new_if);
                    g.add_block(new_if);
                    let outs = g.block_outputs(b).to_vec();
                    self.add_if_outputs(g, new_if, &pair.values, &outs);
                    while !g.block_outputs(b).is_empty() {
                        g.erase_block_output(b, 0);
                    }
                    for o in g.node(new_if).outputs().to_vec() {
                        g.add_block_output(b, o);
                    }
                }
                Status::Will => {
                    while !g.block_outputs(b).is_empty() {
                        g.erase_block_output(b, 0);
                    }
                    for &v in &pair.values {
                        g.add_block_output(b, v);
                    }
                }
                _ => {}
            }
            pair = self.wont();
        }
        self.target = prev_target;
        pair
    }
}

/// Removes exits: loop continuations first, then returns; then merges consecutive ifs.
/// `with` statements are wrapped in `prim::With` blocks meanwhile (as PyTorch does), so that
/// an exit inside the body skips the rest of the body but not the `prim::Exit`.
pub fn transform_exits(g: &mut Graph) {
    let top = g.block();
    enter_exit_to_with_blocks(g, top);
    let mut t = Transformer::new(g, prim::LoopContinuation);
    t.transform_exits(g, top);
    let mut r = Transformer::new(g, prim::ReturnStmt);
    r.transform_exits(g, top);
    inline_consecutive_ifs(g, top);
    with_blocks_to_enter_exit(g, top);
}

/// PyTorch's `convertEnterExitNodesToWithBlocks`: the nodes between each `prim::Enter` and its
/// `prim::Exit` move into the body block of a `prim::With` placed after the Enter, and the Exit
/// into its second block (innermost pairs first).
fn enter_exit_to_with_blocks(g: &mut Graph, b: BlockId) {
    let mut open: Vec<NodeId> = Vec::new();
    let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
    for n in g.block_nodes(b) {
        for sub in g.node(n).blocks().to_vec() {
            enter_exit_to_with_blocks(g, sub);
        }
        let kind = g.node(n).kind();
        if kind == prim::Enter {
            open.push(n);
        } else if kind == prim::Exit {
            if let Some(enter) = open.pop() {
                pairs.push((enter, n));
            }
        }
    }
    for (enter, exit) in pairs {
        let with = g.create(prim::With, &[], 0);
        let body = g.add_block(with);
        let exit_block = g.add_block(with);
        let mut cur = g.next_node(enter);
        let body_ret = g.return_node(body);
        while cur != exit {
            let next = g.next_node(cur);
            g.move_before(cur, body_ret);
            cur = next;
        }
        let exit_ret = g.return_node(exit_block);
        g.move_before(exit, exit_ret);
        let after_enter = g.next_node(enter);
        g.insert_before(with, after_enter);
    }
}

/// PyTorch's `convertWithBlocksToEnterExitNodes`: inlines the body and exit blocks of every
/// `prim::With` in place of it.
fn with_blocks_to_enter_exit(g: &mut Graph, b: BlockId) {
    for n in g.block_nodes(b) {
        let blocks = g.node(n).blocks().to_vec();
        for &sub in &blocks {
            with_blocks_to_enter_exit(g, sub);
        }
        if g.node(n).kind() == prim::With {
            for sub in blocks {
                for inner in g.block_nodes(sub) {
                    g.move_before(inner, n);
                }
            }
            let _ = g.destroy_node(n);
        }
    }
}

fn const_bool(g: &Graph, v: ValueId) -> Option<bool> {
    g.to_ivalue(v).and_then(|x| x.as_bool())
}

/// The most outputs a fused `if` may have (see `inline_consecutive_if`).
const MAX_FUSED_OUTPUTS: usize = 64;

fn inline_consecutive_if(g: &mut Graph, n: NodeId) -> bool {
    if g.node(n).kind() != prim::If {
        return false;
    }
    let next = g.next_node(n);
    if g.node(next).owning_block().is_none()
        || g.node(next).kind() != prim::If
        || next == g.return_node(g.node(n).owning_block().expect("placed"))
    {
        return false;
    }
    let cond = g.node(next).input(0);
    if g.value(cond).node() != n {
        return false;
    }
    let off = g.value(cond).offset();
    if g.node(n).blocks().len() != 2 || g.node(next).blocks().len() != 2 {
        return false;
    }
    let (ft, ff) = (g.node(n).blocks()[0], g.node(n).blocks()[1]);
    let (Some(tv), Some(fv)) = (
        const_bool(g, g.block_outputs(ft)[off]),
        const_bool(g, g.block_outputs(ff)[off]),
    ) else {
        return false;
    };
    if tv == fv {
        return false;
    }
    // Each fusion keeps both ifs' outputs and rotates them, so a long chain of fusable ifs
    // (`x and x and x ...` on constants) would cost quadratic time or worse; past this many
    // outputs the ifs stay apart (the same behaviour, one more branch at run time).
    if g.node(n).outputs().len() + g.node(next).outputs().len() > MAX_FUSED_OUTPUTS {
        return false;
    }
    let (st, sf) = (g.node(next).blocks()[0], g.node(next).blocks()[1]);
    let first_outputs = g.node(n).outputs().to_vec();
    let next_outputs = g.node(next).outputs().len();
    for (first_block, second_block) in [
        (ft, if tv { st } else { sf }),
        (ff, if fv { st } else { sf }),
    ] {
        // Values of the first if's outputs map to this branch's outputs.
        let mut map: HashMap<ValueId, ValueId> = HashMap::new();
        for (k, &o) in first_outputs.iter().enumerate() {
            map.insert(o, g.block_outputs(first_block)[k]);
        }
        let ret = g.return_node(first_block);
        let saved = g.insert_point();
        g.set_insert_point_before(ret);
        for m in g.block_nodes(second_block) {
            g.clone_node_within(m, &mut map);
        }
        g.set_insert_point_before(saved);
        for o in g.block_outputs(second_block).to_vec() {
            let v = *map.get(&o).unwrap_or(&o);
            g.add_block_output(first_block, v);
        }
    }
    for o in g.node(next).outputs().to_vec() {
        let t = g.value(o).ty().clone();
        let new_out = g.add_output(n, t);
        g.copy_metadata(new_out, o);
        g.replace_all_uses_with(o, new_out);
    }
    let _ = g.destroy_node(next);
    // The second if's outputs come first (the order PyTorch's merged ifs print in).
    let moved = g.node(n).outputs().len() - next_outputs;
    rotate_outputs_to_end(g, n, moved);
    true
}

/// Moves the first `m` outputs of `n` (and what each block returns for them) after the others.
fn rotate_outputs_to_end(g: &mut Graph, n: NodeId, m: usize) {
    for _ in 0..m {
        let old = g.node(n).output(0);
        let t = g.value(old).ty().clone();
        let new = g.add_output(n, t);
        g.copy_metadata(new, old);
        g.replace_all_uses_with(old, new);
        for b in g.node(n).blocks().to_vec() {
            let v = g.block_outputs(b)[0];
            g.erase_block_output(b, 0);
            g.add_block_output(b, v);
        }
        let _ = g.erase_output(n, 0);
    }
}

fn inline_consecutive_ifs(g: &mut Graph, b: BlockId) {
    let mut n = g.first_node(b);
    let ret = g.return_node(b);
    while n != ret {
        for blk in g.node(n).blocks().to_vec() {
            inline_consecutive_ifs(g, blk);
        }
        if !inline_consecutive_if(g, n) {
            n = g.next_node(n);
        }
    }
}
