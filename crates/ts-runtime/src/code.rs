//! `Code`: a graph linearized into instructions over registers (PyTorch's interpreter Code).
//!
//! Every value gets a register. An operand's last use in its defining block is a `Move` (the
//! register is emptied, so tensors are freed as early as possible); values whose last use is
//! inside a nested block (an `If` branch or a loop body) are loaded, and dropped with `DropR`
//! right after the node owning that block, since whether they die there depends on control
//! flow. `If` becomes `Jf`/`Jmp`, `Loop` a guarded counter loop, calls `Call`, and `fork`/`wait`
//! become `Fork`/`Wait`.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use ts_core::types::ClassMethod;
use ts_core::{aten, attr, prim, IValue, SourceRange, Symbol, Type, TypeRef};
use ts_ir::{BlockId, Function, Graph, NodeId, ValueId};
use ts_ops::{Operation, ScalarOp};
use ts_tensor::Error;

/// One instruction.
#[derive(Clone, Debug)]
pub enum Instr {
    /// Push a copy of a register.
    Load(u32),
    /// Push a register's value, leaving it empty.
    Move(u32),
    /// Pop into a register.
    Store(u32),
    /// Pop and discard.
    Drop,
    /// Empty a register.
    DropR(u32),
    /// Push constant `k`.
    LoadC(u32),
    /// Run operation `k`.
    Op(u32),
    /// Pop a bool; jump to `target` when false.
    Jf(u32),
    /// Jump to `target`.
    Jmp(u32),
    /// Loop guard: continue when `reg[i] < reg[max] && reg[cond]`, else jump to `exit`.
    LoopGuard {
        i: u32,
        max: u32,
        cond: u32,
        exit: u32,
    },
    /// `reg[i] += 1`, jump to `top`.
    LoopNext { i: u32, top: u32 },
    /// Set a register to an int.
    SetInt(u32, i64),
    /// Call function `k` with `n` arguments from the stack.
    Call(u32, u32),
    /// Call method named `names[k]` on the object under `n` arguments (self included).
    CallMethod(u32, u32),
    /// Start function code `k` on the thread pool with `n` arguments; push the future.
    Fork(u32, u32),
    /// Pop a future; push its value (suspending until it completes).
    Wait,
    /// Build a tuple of `n` values (named tuple type `types[t]` when `t > 0`).
    TupleConstruct(u32, u32),
    /// Build a list of element type `types[t]` from `n` values.
    ListConstruct(u32, u32),
    /// Build a dict of type `types[t]` from `n` key/value pairs.
    DictConstruct(u32, u32),
    /// Pop a list; push its `n` elements (error when the length differs).
    ListUnpack(u32),
    /// Pop a tuple; push its `n` elements.
    TupleUnpack(u32),
    /// Pop a tuple; push `elements[begin..end]` as a tuple.
    TupleSlice(u32, u32),
    /// Pop an object; push attribute slot `k`.
    GetAttr(u32),
    /// Pop a value and an object; set attribute slot `k`.
    SetAttr(u32),
    /// Pop an object; push attribute `names[k]` (dynamic lookup, for interfaces).
    GetAttrByName(u32),
    /// Pop a value; push whether it is an instance of any of `type_lists[k]`.
    IsInstance(u32),
    /// Push a new object of class `types[k]`.
    CreateObject(u32),
    /// Push `Uninitialized`.
    Uninitialized,
    /// Return the values on the stack.
    Ret,
    /// `reg[dst] = reg[src].clone()` (a fused `LOAD(src) STORE(dst)`).
    Copy { dst: u32, src: u32 },
    /// `reg[dst] = take(reg[src])` (a fused `MOVE(src) STORE(dst)`).
    MoveTo { dst: u32, src: u32 },
    /// Pop nothing: read register `r` as a bool and jump to `target` when false (a fused
    /// `LOAD(r)`/`MOVE(r)` + `JF`; the condition holds no resources, so it is not cleared).
    JfR { r: u32, target: u32 },
    /// `reg[out] = op(reg[a], reg[b])` run inline; operation `k` runs instead (operands
    /// pushed, moved out of their registers where bit 0 / bit 1 of `moves` says so) when the
    /// operands are not the plain values `op` expects.
    Bin {
        op: ScalarOp,
        moves: u8,
        k: u32,
        a: u32,
        b: u32,
        out: u32,
    },
    /// `reg[out] = op(reg[a])` run inline, else operation `k` (see [`Instr::Bin`]).
    Un {
        op: ScalarOp,
        moves: u8,
        k: u32,
        a: u32,
        out: u32,
    },
    /// `op(reg[a], reg[b])` as a condition: jump to `target` when false (a fused `Bin` + `JF`).
    JfBin {
        op: ScalarOp,
        moves: u8,
        k: u32,
        a: u32,
        b: u32,
        target: u32,
    },
}

impl Instr {
    /// The jump targets of this instruction, for rewriting after instructions move.
    fn targets_mut(&mut self) -> Vec<&mut u32> {
        match self {
            Instr::Jf(t) | Instr::Jmp(t) => vec![t],
            Instr::LoopGuard { exit, .. } => vec![exit],
            Instr::LoopNext { top, .. } => vec![top],
            Instr::JfR { target, .. } | Instr::JfBin { target, .. } => vec![target],
            _ => Vec::new(),
        }
    }

    /// Every register this instruction reads or writes.
    fn registers(&self) -> Vec<u32> {
        match *self {
            Instr::Load(r)
            | Instr::Move(r)
            | Instr::Store(r)
            | Instr::DropR(r)
            | Instr::SetInt(r, _) => vec![r],
            Instr::LoopGuard { i, max, cond, .. } => vec![i, max, cond],
            Instr::LoopNext { i, .. } => vec![i],
            Instr::Copy { dst, src } | Instr::MoveTo { dst, src } => vec![dst, src],
            Instr::JfR { r, .. } => vec![r],
            Instr::Bin { a, b, out, .. } => vec![a, b, out],
            Instr::Un { a, out, .. } => vec![a, out],
            Instr::JfBin { a, b, .. } => vec![a, b],
            Instr::Drop
            | Instr::LoadC(_)
            | Instr::Op(_)
            | Instr::Jf(_)
            | Instr::Jmp(_)
            | Instr::Call(..)
            | Instr::CallMethod(..)
            | Instr::Fork(..)
            | Instr::Wait
            | Instr::TupleConstruct(..)
            | Instr::ListConstruct(..)
            | Instr::DictConstruct(..)
            | Instr::ListUnpack(_)
            | Instr::TupleUnpack(_)
            | Instr::TupleSlice(..)
            | Instr::GetAttr(_)
            | Instr::SetAttr(_)
            | Instr::GetAttrByName(_)
            | Instr::IsInstance(_)
            | Instr::CreateObject(_)
            | Instr::Uninitialized
            | Instr::Ret => Vec::new(),
        }
    }
}

/// A linearized graph, shared by every execution of it.
pub struct Code {
    pub instructions: Vec<Instr>,
    /// The node each instruction came from (for tracebacks).
    pub instr_nodes: Vec<Option<Arc<NodeInfo>>>,
    pub constants: Vec<IValue>,
    pub operations: Vec<Operation>,
    pub op_names: Vec<String>,
    /// For each operation, its inline version when it has one.
    pub op_scalar: Vec<Option<ScalarOp>>,
    /// Callees (each a `ts_ir::Function` behind the class-method handle).
    pub functions: Vec<Arc<dyn ClassMethod>>,
    pub forked: Vec<Arc<Code>>,
    pub types: Vec<TypeRef>,
    pub type_lists: Vec<Vec<TypeRef>>,
    pub names: Vec<String>,
    pub num_registers: usize,
    pub num_inputs: usize,
    /// Name shown in tracebacks.
    pub function_name: String,
}

/// Where an instruction came from.
#[derive(Debug)]
pub struct NodeInfo {
    pub kind: Symbol,
    pub range: Option<SourceRange>,
    /// The calls an inlined node came through (outermost first).
    pub callstack: Option<Arc<ts_ir::InlinedCallStack>>,
}

impl Code {
    /// Linearizes `g` and fuses instruction sequences (see [`crate::peephole`]).
    pub fn new(g: &Graph, function_name: &str) -> Result<Code, Error> {
        let mut code = Code::unoptimized(g, function_name)?;
        crate::peephole::optimize(&mut code);
        Ok(code)
    }

    /// Linearizes `g` one node at a time, without fusing instructions.
    pub fn unoptimized(g: &Graph, function_name: &str) -> Result<Code, Error> {
        let mut b = Builder::new(g, function_name);
        b.emit_graph()?;
        Ok(b.code)
    }

    /// Replaces the instructions (with the node of each), rewriting jump targets through
    /// `map` (old index to new index, with one entry past the end).
    pub(crate) fn replace_instructions(
        &mut self,
        mut instructions: Vec<Instr>,
        instr_nodes: Vec<Option<Arc<NodeInfo>>>,
        map: &[u32],
    ) {
        for i in &mut instructions {
            for t in i.targets_mut() {
                *t = map.get(*t as usize).copied().unwrap_or(*t);
            }
        }
        self.instructions = instructions;
        self.instr_nodes = instr_nodes;
    }

    /// Indices that some instruction jumps to.
    pub(crate) fn jump_targets(&self) -> Vec<bool> {
        let mut t = vec![false; self.instructions.len() + 1];
        for i in &self.instructions {
            for x in i.clone().targets_mut() {
                if let Some(slot) = t.get_mut(*x as usize) {
                    *slot = true;
                }
            }
        }
        t
    }

    /// How many instructions mention each register.
    pub(crate) fn register_uses(&self) -> Vec<u32> {
        let mut n = vec![0u32; self.num_registers];
        for i in &self.instructions {
            for r in i.registers() {
                if let Some(c) = n.get_mut(r as usize) {
                    *c += 1;
                }
            }
        }
        n
    }
}

struct Builder<'g> {
    g: &'g Graph,
    code: Code,
    regs: HashMap<ValueId, u32>,
    /// For each value: the node of its defining block that is its last user there.
    last_user: HashMap<ValueId, NodeId>,
    /// Registers never moved out of: loop counters, which the loop's own instructions read.
    pinned: HashSet<u32>,
    /// Loop-carried params whose register a later value of the body reuses (see
    /// [`Builder::share_carried_registers`]); their register is never dropped as theirs.
    shared: HashSet<ValueId>,
    /// Constants of loop bodies emitted once, before the graph's first node (see
    /// [`Builder::hoist_loop_constants`]).
    hoisted: HashSet<NodeId>,
    cur_node: Option<Arc<NodeInfo>>,
}

impl<'g> Builder<'g> {
    fn new(g: &'g Graph, name: &str) -> Builder<'g> {
        Builder {
            g,
            code: Code {
                instructions: Vec::new(),
                instr_nodes: Vec::new(),
                constants: Vec::new(),
                operations: Vec::new(),
                op_names: Vec::new(),
                op_scalar: Vec::new(),
                functions: Vec::new(),
                forked: Vec::new(),
                types: vec![Type::any()],
                type_lists: Vec::new(),
                names: Vec::new(),
                num_registers: 0,
                num_inputs: g.inputs().len(),
                function_name: name.to_string(),
            },
            regs: HashMap::new(),
            last_user: HashMap::new(),
            pinned: HashSet::new(),
            shared: HashSet::new(),
            hoisted: HashSet::new(),
            cur_node: None,
        }
    }

    fn emit(&mut self, i: Instr) -> usize {
        self.code.instructions.push(i);
        self.code.instr_nodes.push(self.cur_node.clone());
        self.code.instructions.len() - 1
    }

    fn here(&self) -> u32 {
        self.code.instructions.len() as u32
    }

    fn reg(&mut self, v: ValueId) -> u32 {
        if let Some(&r) = self.regs.get(&v) {
            return r;
        }
        let r = self.code.num_registers as u32;
        self.code.num_registers += 1;
        self.regs.insert(v, r);
        r
    }

    fn fresh_reg(&mut self) -> u32 {
        let r = self.code.num_registers as u32;
        self.code.num_registers += 1;
        r
    }

    fn add_type(&mut self, t: TypeRef) -> u32 {
        self.code.types.push(t);
        (self.code.types.len() - 1) as u32
    }

    fn add_name(&mut self, n: &str) -> u32 {
        if let Some(i) = self.code.names.iter().position(|x| x == n) {
            return i as u32;
        }
        self.code.names.push(n.to_string());
        (self.code.names.len() - 1) as u32
    }

    fn add_constant(&mut self, v: IValue) -> u32 {
        self.code.constants.push(v);
        (self.code.constants.len() - 1) as u32
    }

    /// Computes, for each value, its last user among the nodes of its defining block.
    fn liveness(&mut self, b: BlockId) {
        let g = self.g;
        let mut nodes = g.block_nodes(b);
        nodes.push(g.return_node(b));
        for &n in &nodes {
            for &blk in g.node(n).blocks() {
                self.liveness(blk);
            }
        }
        // Values defined in this block: its params and its nodes' outputs.
        let mut defined: Vec<ValueId> = g.block_inputs(b).to_vec();
        for &n in &nodes {
            defined.extend_from_slice(g.node(n).outputs());
        }
        let pos: HashMap<NodeId, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        for v in defined {
            let mut best: Option<(usize, NodeId)> = None;
            for u in g.value(v).uses() {
                // Climb to the ancestor of the user that sits in block `b`.
                let mut cur = u.user;
                loop {
                    if let Some(&p) = pos.get(&cur) {
                        if best.is_none_or(|(bp, _)| p > bp) {
                            best = Some((p, cur));
                        }
                        break;
                    }
                    match g.node(cur).owning_block().and_then(|ob| g.block_owner(ob)) {
                        Some(owner) => cur = owner,
                        None => break,
                    }
                }
            }
            if let Some((_, n)) = best {
                self.last_user.insert(v, n);
            }
        }
    }

    /// True when `n` uses `v` inside one of its nested blocks.
    fn used_in_blocks(&self, n: NodeId, v: ValueId) -> bool {
        let g = self.g;
        g.value(v)
            .uses()
            .iter()
            .any(|u| u.user != n && self.encloses(n, u.user))
    }

    fn encloses(&self, outer: NodeId, mut n: NodeId) -> bool {
        let g = self.g;
        while let Some(owner) = g.node(n).owning_block().and_then(|b| g.block_owner(b)) {
            if owner == outer {
                return true;
            }
            n = owner;
        }
        false
    }

    /// Pushes node `n`'s inputs, moving each value at its last use.
    fn load_inputs(&mut self, n: NodeId, inputs: &[ValueId]) {
        for i in 0..inputs.len() {
            let moved = self.moves_at(n, inputs, i);
            let r = self.reg(inputs[i]);
            self.emit(if moved {
                Instr::Move(r)
            } else {
                Instr::Load(r)
            });
        }
    }

    /// Whether node `n` may move `inputs[i]` out of its register: this is the value's last
    /// use, and its register is not one that must keep its value.
    fn moves_at(&mut self, n: NodeId, inputs: &[ValueId], i: usize) -> bool {
        let v = inputs[i];
        let r = self.reg(v);
        self.last_user.get(&v) == Some(&n)
            && !inputs[i + 1..].contains(&v)
            && !self.used_in_blocks(n, v)
            && !self.pinned.contains(&r)
    }

    /// Ends a block at its return node `ret`: the parallel assignment `dsts[k] = values[k]`
    /// (`None` discards the value). A value already in its destination register stays
    /// there, so it is neither pushed nor stored, and no other slot moves it out.
    fn assign_block_outputs(&mut self, ret: NodeId, values: &[ValueId], dsts: &[Option<u32>]) {
        let regs: Vec<u32> = values.iter().map(|&v| self.reg(v)).collect();
        let stays: Vec<bool> = regs.iter().zip(dsts).map(|(&r, &d)| d == Some(r)).collect();
        let kept: Vec<u32> = (0..regs.len())
            .filter(|&k| stays[k])
            .map(|k| regs[k])
            .collect();
        for k in 0..values.len() {
            if stays[k] {
                continue;
            }
            let moved = self.moves_at(ret, values, k) && !kept.contains(&regs[k]);
            self.emit(if moved {
                Instr::Move(regs[k])
            } else {
                Instr::Load(regs[k])
            });
        }
        for k in (0..values.len()).rev() {
            if stays[k] {
                continue;
            }
            self.emit(match dsts[k] {
                Some(r) => Instr::Store(r),
                None => Instr::Drop,
            });
        }
    }

    /// After node `n`: drop the registers of values whose last use was inside `n`'s blocks.
    fn drop_dead_after(&mut self, n: NodeId) {
        let g = self.g;
        if g.node(n).blocks().is_empty() {
            return;
        }
        // Int, float and bool values own nothing: dropping them early frees nothing, and
        // the `DROPR`s were two of every seven instructions of a scalar loop's body.
        let mut dead: Vec<ValueId> = self
            .last_user
            .iter()
            .filter(|(v, &u)| {
                u == n
                    && self.used_in_blocks(n, **v)
                    && !owns_nothing(g, **v)
                    && !self.shared.contains(*v)
            })
            .map(|(v, _)| *v)
            .collect();
        dead.sort();
        for v in dead {
            let r = self.reg(v);
            self.emit(Instr::DropR(r));
        }
    }

    fn store_outputs(&mut self, outs: &[ValueId]) {
        for &o in outs.iter().rev() {
            if self.g.value(o).has_uses() {
                let r = self.reg(o);
                self.emit(Instr::Store(r));
            } else {
                self.emit(Instr::Drop);
            }
        }
    }

    fn emit_graph(&mut self) -> Result<(), Error> {
        let g = self.g;
        let top = g.block();
        self.liveness(top);
        for (i, &v) in g.inputs().iter().enumerate() {
            let r = self.reg(v);
            debug_assert_eq!(r as usize, i);
        }
        for &v in g.inputs() {
            if !g.value(v).has_uses() {
                let r = self.reg(v);
                self.emit(Instr::DropR(r));
            }
        }
        self.hoist_loop_constants(top, false)?;
        self.emit_block(top)?;
        let ret = g.return_node(top);
        let outs = g.block_outputs(top).to_vec();
        self.cur_node = None;
        self.load_inputs(ret, &outs);
        self.emit(Instr::Ret);
        Ok(())
    }

    fn emit_block(&mut self, b: BlockId) -> Result<(), Error> {
        for n in self.g.block_nodes(b) {
            if !self.hoisted.contains(&n) {
                self.emit_node(n)?;
            }
        }
        Ok(())
    }

    /// Sets the plain (int, float, bool) constants of loop bodies once, up front, into
    /// registers nothing moves out of: emitted in place, a constant of an unrolled body
    /// (`i + 2`, `i + 3`, ...) was an instruction of every iteration. Constants that a block
    /// returns stay in place (their register may become a carried value's).
    fn hoist_loop_constants(&mut self, b: BlockId, in_loop: bool) -> Result<(), Error> {
        let g = self.g;
        for n in g.block_nodes(b) {
            let node = g.node(n);
            let kind = node.kind();
            if in_loop && kind == prim::Constant {
                let out = node.outputs()[0];
                let plain = matches!(**g.value(out).ty(), Type::Int | Type::Float | Type::Bool);
                let returned = g
                    .value(out)
                    .uses()
                    .iter()
                    .any(|u| g.node(u.user).kind() == prim::Return);
                if plain && !returned && g.value(out).has_uses() {
                    self.emit_node(n)?;
                    let r = self.reg(out);
                    self.pinned.insert(r);
                    self.hoisted.insert(n);
                }
            }
            let inner = in_loop || kind == prim::Loop;
            for &blk in node.blocks() {
                self.hoist_loop_constants(blk, inner)?;
            }
        }
        Ok(())
    }

    fn emit_node(&mut self, n: NodeId) -> Result<(), Error> {
        let g = self.g;
        let node = g.node(n);
        let kind = node.kind();
        self.cur_node = Some(Arc::new(NodeInfo {
            kind,
            range: node.source_range().cloned(),
            callstack: node.callstack().cloned(),
        }));
        let inputs = node.inputs().to_vec();
        let outputs = node.outputs().to_vec();
        match kind {
            k if k == prim::Constant => {
                let out = outputs[0];
                if !g.value(out).has_uses() {
                    return Ok(());
                }
                if matches!(&**g.value(out).ty(), Type::Function(_)) {
                    // Function values are resolved statically by their callers.
                    return Ok(());
                }
                let v = g
                    .constant_value(n)
                    .ok_or_else(|| Error::runtime("internal error: unreadable prim::Constant"))?;
                let k = self.add_constant(v);
                self.emit(Instr::LoadC(k));
                self.store_outputs(&outputs);
            }
            k if k == prim::If => self.emit_if(n)?,
            k if k == prim::Loop => self.emit_loop(n)?,
            k if k == prim::CallFunction => {
                let func = match &**g.value(inputs[0]).ty() {
                    Type::Function(ft) => ft.function.clone(),
                    _ => None,
                }
                .filter(|m| m.as_any().downcast_ref::<Function>().is_some())
                .ok_or_else(|| {
                    Error::runtime("prim::CallFunction: the callee is not a known function")
                })?;
                let fk = self.code.functions.len() as u32;
                self.code.functions.push(func);
                self.load_inputs(n, &inputs[1..]);
                self.emit(Instr::Call(fk, (inputs.len() - 1) as u32));
                self.store_outputs(&outputs);
            }
            k if k == prim::CallMethod => {
                let name = node
                    .s(attr::name)
                    .ok_or_else(|| Error::runtime("prim::CallMethod without a name"))?
                    .to_string();
                let nk = self.add_name(&name);
                self.load_inputs(n, &inputs);
                self.emit(Instr::CallMethod(nk, inputs.len() as u32));
                self.store_outputs(&outputs);
            }
            k if k == prim::GetAttr => {
                let name = node
                    .s(attr::name)
                    .ok_or_else(|| Error::runtime("prim::GetAttr without a name"))?;
                let obj_ty = g.value(inputs[0]).ty().clone();
                self.load_inputs(n, &inputs);
                match obj_ty.class_type().and_then(|c| c.attribute_index(name)) {
                    Some(slot) => self.emit(Instr::GetAttr(slot as u32)),
                    None => {
                        let nk = self.add_name(name);
                        self.emit(Instr::GetAttrByName(nk))
                    }
                };
                self.store_outputs(&outputs);
            }
            k if k == prim::SetAttr => {
                let name = node
                    .s(attr::name)
                    .ok_or_else(|| Error::runtime("prim::SetAttr without a name"))?;
                let slot = g
                    .value(inputs[0])
                    .ty()
                    .class_type()
                    .and_then(|c| c.attribute_index(name))
                    .ok_or_else(|| {
                        Error::runtime(format!("prim::SetAttr: unknown attribute '{name}'"))
                    })?;
                self.load_inputs(n, &inputs);
                self.emit(Instr::SetAttr(slot as u32));
            }
            k if k == prim::TupleConstruct => {
                let ty = g.value(outputs[0]).ty().clone();
                let named = matches!(&*ty, Type::Tuple(t) if t.names.is_some());
                let t = if named { self.add_type(ty) } else { 0 };
                self.load_inputs(n, &inputs);
                self.emit(Instr::TupleConstruct(inputs.len() as u32, t));
                self.store_outputs(&outputs);
            }
            k if k == prim::ListConstruct => {
                let elem = g
                    .value(outputs[0])
                    .ty()
                    .list_elem()
                    .cloned()
                    .unwrap_or_else(Type::any);
                let t = self.add_type(elem);
                self.load_inputs(n, &inputs);
                self.emit(Instr::ListConstruct(t, inputs.len() as u32));
                self.store_outputs(&outputs);
            }
            k if k == prim::DictConstruct => {
                let t = self.add_type(g.value(outputs[0]).ty().clone());
                self.load_inputs(n, &inputs);
                self.emit(Instr::DictConstruct(t, (inputs.len() / 2) as u32));
                self.store_outputs(&outputs);
            }
            k if k == prim::ListUnpack => {
                self.load_inputs(n, &inputs);
                self.emit(Instr::ListUnpack(outputs.len() as u32));
                self.store_outputs(&outputs);
            }
            k if k == prim::TupleUnpack => {
                self.load_inputs(n, &inputs);
                self.emit(Instr::TupleUnpack(outputs.len() as u32));
                self.store_outputs(&outputs);
            }
            k if k == prim::TupleSlice => {
                let beg = node.i(Symbol::attr("beg")).unwrap_or(0);
                let end = node.i(Symbol::attr("end")).unwrap_or(0);
                self.load_inputs(n, &inputs);
                self.emit(Instr::TupleSlice(beg as u32, end as u32));
                self.store_outputs(&outputs);
            }
            k if k == prim::isinstance => {
                let types = match node.attr(Symbol::attr("types")) {
                    Some(ts_ir::AttributeValue::Types(t)) => t.clone(),
                    Some(ts_ir::AttributeValue::Type(t)) => vec![t.clone()],
                    _ => return Err(Error::runtime("prim::isinstance without types")),
                };
                self.code.type_lists.push(types);
                let k = (self.code.type_lists.len() - 1) as u32;
                self.load_inputs(n, &inputs);
                self.emit(Instr::IsInstance(k));
                self.store_outputs(&outputs);
            }
            k if k == prim::CreateObject => {
                let t = self.add_type(g.value(outputs[0]).ty().clone());
                self.emit(Instr::CreateObject(t));
                self.store_outputs(&outputs);
            }
            k if k == prim::Uninitialized => {
                self.emit(Instr::Uninitialized);
                self.store_outputs(&outputs);
            }
            k if k == prim::unchecked_cast || k == prim::unchecked_unwrap_optional => {
                self.load_inputs(n, &inputs);
                self.store_outputs(&outputs);
            }
            k if k == prim::DifferentiableGraph => {
                let operation =
                    crate::differentiable_graph::operation(g, n, &self.code.function_name)?;
                let k = self.code.operations.len() as u32;
                self.code.operations.push(operation);
                self.code.op_scalar.push(None);
                self.code
                    .op_names
                    .push("prim::DifferentiableGraph".to_string());
                self.load_inputs(n, &inputs);
                self.emit(Instr::Op(k));
                self.store_outputs(&outputs);
            }
            k if k == prim::fork => {
                let sub = node
                    .g(Symbol::attr("Subgraph"))
                    .ok_or_else(|| Error::runtime("prim::fork without a subgraph"))?;
                let code = Code::new(sub, &format!("{}.<forked>", self.code.function_name))?;
                self.code.forked.push(Arc::new(code));
                let k = (self.code.forked.len() - 1) as u32;
                self.load_inputs(n, &inputs);
                self.emit(Instr::Fork(k, inputs.len() as u32));
                self.store_outputs(&outputs);
            }
            k if k == aten::wait => {
                self.load_inputs(n, &inputs);
                self.emit(Instr::Wait);
                self.store_outputs(&outputs);
            }
            k if k == prim::Enter || k == prim::Exit => {
                let name = if k == prim::Enter {
                    "__enter__"
                } else {
                    "__exit__"
                };
                let nk = self.add_name(name);
                self.load_inputs(n, &inputs);
                if k == prim::Exit {
                    for _ in 0..3 {
                        let c = self.add_constant(IValue::None);
                        self.emit(Instr::LoadC(c));
                    }
                    self.emit(Instr::CallMethod(nk, 4));
                } else {
                    self.emit(Instr::CallMethod(nk, 1));
                }
                self.store_outputs(&outputs);
            }
            _ => {
                let opr = ts_ops::registry().resolve_node(g, n).ok_or_else(|| {
                    let types: Vec<String> = inputs.iter().map(|&v| g.value(v).ty().to_string()).collect();
                    if ts_ops::registry().lookup(kind).is_empty() {
                        Error::runtime(format!("Unknown builtin op: {kind}. This operator is not implemented in torchscript-rs."))
                    } else {
                        Error::runtime(format!(
                            "no implemented overload of {kind} matches argument types ({})",
                            types.join(", ")
                        ))
                    }
                })?;
                let operation = opr.operation_for(g, n)?;
                let k = self.code.operations.len() as u32;
                self.code.operations.push(operation);
                let full_name = opr.full_name();
                self.code
                    .op_scalar
                    .push(ts_ops::registry().scalar_op(&full_name));
                self.code.op_names.push(full_name);
                self.load_inputs(n, &inputs);
                self.emit(Instr::Op(k));
                self.store_outputs(&outputs);
            }
        }
        self.drop_dead_after(n);
        Ok(())
    }

    fn emit_if(&mut self, n: NodeId) -> Result<(), Error> {
        let g = self.g;
        let node = g.node(n);
        let outputs = node.outputs().to_vec();
        let cond = node.input(0);
        let (tb, fb) = (node.blocks()[0], node.blocks()[1]);
        self.load_inputs(n, &[cond]);
        let jf = self.emit(Instr::Jf(0));
        self.emit_branch(tb, &outputs)?;
        let jmp = self.emit(Instr::Jmp(0));
        let else_start = self.here();
        self.code.instructions[jf] = Instr::Jf(else_start);
        self.emit_branch(fb, &outputs)?;
        let end = self.here();
        self.code.instructions[jmp] = Instr::Jmp(end);
        Ok(())
    }

    fn emit_branch(&mut self, b: BlockId, outputs: &[ValueId]) -> Result<(), Error> {
        self.emit_block(b)?;
        let ret = self.g.return_node(b);
        let outs = self.g.block_outputs(b).to_vec();
        let dsts: Vec<Option<u32>> = outputs
            .iter()
            .map(|&o| self.g.value(o).has_uses().then(|| self.reg(o)))
            .collect();
        self.assign_block_outputs(ret, &outs, &dsts);
        Ok(())
    }

    fn emit_loop(&mut self, n: NodeId) -> Result<(), Error> {
        let g = self.g;
        let node = g.node(n);
        let inputs = node.inputs().to_vec();
        let outputs = node.outputs().to_vec();
        let body = node.blocks()[0];
        let params = g.block_inputs(body).to_vec();
        let (r_max, r_cond) = (self.fresh_reg(), self.fresh_reg());
        // The body reads its iteration number straight from the loop's counter register,
        // which therefore is never moved out of.
        let r_i = self.fresh_reg();
        self.regs.insert(params[0], r_i);
        self.pinned.insert(r_i);
        // Initial values: trip count, condition, carried values into the body params' registers.
        self.load_inputs(n, &inputs);
        let carried_regs: Vec<u32> = params[1..].iter().map(|&p| self.reg(p)).collect();
        for &r in carried_regs.iter().rev() {
            self.emit(Instr::Store(r));
        }
        self.emit(Instr::Store(r_cond));
        self.emit(Instr::Store(r_max));
        self.emit(Instr::SetInt(r_i, 0));
        let outs = g.block_outputs(body).to_vec();
        self.share_carried_registers(body, &params[1..], &outs[1..]);
        let top = self.here();
        let guard = self.emit(Instr::LoopGuard {
            i: r_i,
            max: r_max,
            cond: r_cond,
            exit: 0,
        });
        self.emit_block(body)?;
        // The back edge. A body that always continues (`for` loops) leaves the condition
        // register as the guard found it: true, since the body ran.
        let ret = g.return_node(body);
        let always = g
            .to_ivalue(outs[0])
            .is_some_and(|c| matches!(c, IValue::Bool(true)));
        let mut dsts: Vec<Option<u32>> = vec![Some(r_cond)];
        dsts.extend(carried_regs.iter().map(|&r| Some(r)));
        let from = usize::from(always);
        self.assign_block_outputs(ret, &outs[from..], &dsts[from..]);
        self.emit(Instr::LoopNext { i: r_i, top });
        let exit = self.here();
        self.code.instructions[guard] = Instr::LoopGuard {
            i: r_i,
            max: r_max,
            cond: r_cond,
            exit,
        };
        for (&o, &r) in outputs.iter().zip(&carried_regs) {
            if g.value(o).has_uses() {
                let ro = self.reg(o);
                self.emit(Instr::Move(r));
                self.emit(Instr::Store(ro));
            } else {
                self.emit(Instr::DropR(r));
            }
        }
        self.emit(Instr::DropR(r_max));
        self.emit(Instr::DropR(r_cond));
        Ok(())
    }

    /// Gives a loop body's carried result the register of its carried param when the param
    /// is dead by the time the result is made, so the back edge need not copy it over.
    ///
    /// `outs[j]` qualifies when a node of the body itself makes it, no other slot carries it,
    /// and no use of `params[j]` comes after that node (a node reads all its inputs before
    /// it writes an output, so the node itself may read the param).
    fn share_carried_registers(&mut self, body: BlockId, params: &[ValueId], outs: &[ValueId]) {
        let g = self.g;
        let nodes = g.block_nodes(body);
        let pos = |n: NodeId| nodes.iter().position(|&m| m == n);
        for (j, (&p, &o)) in params.iter().zip(outs).enumerate() {
            let Some(def) = pos(g.value(o).node()) else {
                continue;
            };
            let dead_by_then = match self.last_user.get(&p) {
                None => true,
                Some(&u) => pos(u).is_some_and(|at| at <= def),
            };
            let carried_once = outs.iter().enumerate().all(|(k, &x)| k == j || x != o);
            if dead_by_then && carried_once && !self.regs.contains_key(&o) {
                let r = self.reg(p);
                self.regs.insert(o, r);
                self.shared.insert(p);
            }
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} ({} registers, {} inputs)",
            self.function_name, self.num_registers, self.num_inputs
        )?;
        for (pc, i) in self.instructions.iter().enumerate() {
            let text = match i {
                Instr::Op(k) => format!("OP {}", self.op_names[*k as usize]),
                Instr::LoadC(k) => {
                    format!("LOADC {}", self.constants[*k as usize].to_quoted_string())
                }
                Instr::Call(k, n) => {
                    format!("CALL {} ({n} args)", self.functions[*k as usize].name())
                }
                Instr::CallMethod(k, n) => {
                    format!("CALL_METHOD {} ({n} args)", self.names[*k as usize])
                }
                Instr::Copy { dst, src } => format!("LOAD({src}) -> STORE({dst})"),
                Instr::MoveTo { dst, src } => format!("MOVE({src}) -> STORE({dst})"),
                Instr::JfR { r, target } => format!("LOAD({r}) -> JF({target})"),
                Instr::Bin {
                    op,
                    moves,
                    a,
                    b,
                    out,
                    ..
                } => format!(
                    "FASTOP {}({}, {}) -> STORE({out})",
                    op.name(),
                    operand(*a, moves & 1 != 0),
                    operand(*b, moves & 2 != 0)
                ),
                Instr::Un {
                    op, moves, a, out, ..
                } => format!(
                    "FASTOP {}({}) -> STORE({out})",
                    op.name(),
                    operand(*a, moves & 1 != 0)
                ),
                Instr::JfBin {
                    op,
                    moves,
                    a,
                    b,
                    target,
                    ..
                } => format!(
                    "FASTOP {}({}, {}) -> JF({target})",
                    op.name(),
                    operand(*a, moves & 1 != 0),
                    operand(*b, moves & 2 != 0)
                ),
                other => format!("{other:?}").to_uppercase(),
            };
            writeln!(f, "{pc:4} {text}")?;
        }
        Ok(())
    }
}

/// A register operand as printed: `LOAD(r)`, or `MOVE(r)` at its last use.
fn operand(r: u32, moved: bool) -> String {
    if moved {
        format!("MOVE({r})")
    } else {
        format!("LOAD({r})")
    }
}

/// Whether values of `v`'s static type never own memory (int, float, bool), so that their
/// register needs no early release.
fn owns_nothing(g: &Graph, v: ValueId) -> bool {
    matches!(
        **g.value(v).ty(),
        Type::Int | Type::Float | Type::Bool | Type::SymInt | Type::SymFloat | Type::SymBool
    )
}
