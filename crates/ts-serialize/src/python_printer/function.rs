//! Printing one graph function as TorchScript source: the `def` header and the statements of
//! its body.
//!
//! The printer decides per value whether its expression is written inline at its single use
//! or bound to a name. An expression is inlined when re-parsing the printed expression tree
//! would emit the same nodes in the same order (a right-to-left preorder walk of a node's
//! inputs must meet the previously emitted nodes in reverse), the value has one use, no debug
//! name (unless it is returned), one output and no blocks. Constants are always inlined. When an
//! inlined expression grows long (40 columns with the indentation), it and every inlined
//! argument before it are bound to names, keeping evaluation order.

use std::collections::{HashMap, HashSet};

use super::annotation::{annotation, is_named_tuple_class};
use ts_core::{attr, prim, Argument, FunctionSchema, IValue, Symbol, Type, TypeRef};
use ts_ir::{AttributeValue, BlockId, Graph, NodeId, ValueId};

use super::constant::{elem_type_inferable, write_constant, ConstantTable};
use super::deps::Deps;
use super::names::NameGen;
use super::names::{debug_name_base, is_unnamed, is_valid_identifier, make_valid_identifier};
use super::op_schemas::OpSchemas;
use super::PrintError;

type Key<T> = (usize, T);

fn key<T>(g: &Graph, id: T) -> Key<T> {
    (g as *const Graph as usize, id)
}

/// The shared state a function is printed with: the file's text and name counters, the
/// export's constant table and dependency list.
pub(crate) struct Emitter<'a> {
    pub out: &'a mut String,
    pub names: &'a mut NameGen,
    pub constants: &'a mut ConstantTable,
    pub deps: &'a mut Deps,
    pub schemas: &'a mut OpSchemas,
    pub level: usize,
    expr: HashMap<Key<ValueId>, String>,
    idents: HashMap<Key<ValueId>, String>,
    inline: HashSet<Key<NodeId>>,
    visited_split: HashMap<Key<NodeId>, i64>,
    seen_constants: HashSet<Key<NodeId>>,
    annotated_unions: HashSet<Key<ValueId>>,
}

/// The debug name of `v` when it has one (the IR text's `%5` is no name).
fn debug_name(g: &Graph, v: ValueId) -> Option<&str> {
    g.value(v).debug_name().filter(|n| !is_unnamed(n))
}

/// The names of the loop kinds `prim::Loop` can print as.
#[derive(PartialEq, Eq, Clone, Copy)]
enum LoopKind {
    For,
    While,
    Modified,
}

fn sym(q: &str) -> Symbol {
    Symbol::new(q)
}

impl<'a> Emitter<'a> {
    /// An emitter writing at indentation `level`.
    pub fn new(
        out: &'a mut String,
        names: &'a mut NameGen,
        constants: &'a mut ConstantTable,
        deps: &'a mut Deps,
        schemas: &'a mut OpSchemas,
        level: usize,
    ) -> Emitter<'a> {
        Emitter {
            out,
            names,
            constants,
            deps,
            schemas,
            level,
            expr: HashMap::new(),
            idents: HashMap::new(),
            inline: HashSet::new(),
            visited_split: HashMap::new(),
            seen_constants: HashSet::new(),
            annotated_unions: HashSet::new(),
        }
    }

    fn indent(&mut self) {
        for _ in 0..self.level {
            self.out.push_str("  ");
        }
    }

    // -----------------------------------------------------------------------------------------
    // The header

    /// Prints `def name(args) -> ret:` and the body of `g`. Argument names and defaults come
    /// from `schema`; its arguments must match the graph inputs one to one.
    pub fn function(
        &mut self,
        name: &str,
        g: &Graph,
        schema: &FunctionSchema,
        print_first_type: bool,
    ) -> Result<(), PrintError> {
        if schema.arguments.len() != g.inputs().len() {
            return Err(PrintError::new(format!(
                "function '{name}': the schema has {} arguments but the graph {} inputs",
                schema.arguments.len(),
                g.inputs().len()
            )));
        }
        let ret = schema.returns.first().ok_or_else(|| {
            PrintError::new(format!("function '{name}': the schema has no return"))
        })?;
        self.names.reset_used();
        self.indent();
        self.out.push_str("def ");
        self.out.push_str(name);
        self.out.push('(');
        for (i, (arg, &input)) in schema.arguments.iter().zip(g.inputs()).enumerate() {
            self.deps.add_contained(&arg.ty);
            let arg_name = self.names.fresh(&arg.name);
            if i == 0 {
                self.out.push_str(&arg_name);
                if print_first_type {
                    self.out.push_str(": ");
                    self.out.push_str(&annotation(&arg.ty));
                }
            } else {
                self.out.push_str(",\n    ");
                self.out.push_str(&arg_name);
                self.out.push_str(": ");
                self.out.push_str(&annotation(&arg.ty));
            }
            if let Some(d) = &arg.default {
                self.default_value(arg, d);
            }
            self.idents.insert(key(g, input), arg_name);
        }
        self.out.push_str(") -> ");
        self.out.push_str(&annotation(&ret.ty));
        self.out.push_str(":\n");
        self.deps.add_contained(&ret.ty);
        self.body(g, g.block())
    }

    /// `=value`; a scalar default of a fixed-size list argument (`int[2] stride=1`) is
    /// broadcast to the list (`=[1, 1]`).
    fn default_value(&mut self, arg: &Argument, v: &IValue) {
        self.out.push('=');
        let value = match (&*arg.ty, v, arg.n) {
            (Type::List(e), IValue::Int(_) | IValue::Double(_) | IValue::Bool(_), Some(n)) => {
                IValue::list(e.clone(), vec![v.clone(); n])
            }
            _ => v.clone(),
        };
        write_constant(self.out, &value, self.constants);
    }

    // -----------------------------------------------------------------------------------------
    // Inlining decisions

    fn can_inline(&self, g: &Graph, v: ValueId) -> bool {
        let val = g.value(v);
        let n = g.node(val.node());
        if n.outputs().len() != 1 || val.uses().len() != 1 {
            return false;
        }
        let u = val.uses()[0];
        let user_kind = g.node(u.user).kind();
        if debug_name(g, v).is_some() && user_kind != prim::Return {
            return false;
        }
        if !n.blocks().is_empty() {
            return false;
        }
        if user_kind == prim::Loop && u.offset >= 2 {
            return false;
        }
        if user_kind == prim::fork
            || user_kind == prim::rpc_async
            || user_kind == sym("prim::rpc_sync")
            || user_kind == sym("prim::rpc_remote")
        {
            return false;
        }
        n.kind() != prim::isinstance
    }

    fn scan_value(&mut self, g: &Graph, block_point: NodeId, v: ValueId) -> NodeId {
        let n = g.value(v).node();
        if n == block_point && self.can_inline(g, v) {
            let bp = self.scan_node(g, block_point);
            self.inline.insert(key(g, n));
            bp
        } else {
            if g.node(n).kind() == prim::Constant {
                self.inline.insert(key(g, n));
            }
            block_point
        }
    }

    fn previous_non_constant(g: &Graph, n: NodeId) -> NodeId {
        let mut p = g.prev_node(n);
        while g.node(p).kind() == prim::Constant {
            p = g.prev_node(p);
        }
        p
    }

    fn scan_node(&mut self, g: &Graph, n: NodeId) -> NodeId {
        if self.inline.contains(&key(g, n)) {
            return n;
        }
        for &b in g.node(n).blocks() {
            self.scan_block(g, b);
        }
        let mut block_point = Self::previous_non_constant(g, n);
        for &v in g.node(n).inputs().iter().rev() {
            block_point = self.scan_value(g, block_point, v);
        }
        block_point
    }

    fn scan_block(&mut self, g: &Graph, b: BlockId) {
        self.scan_node(g, g.return_node(b));
        for n in g.block_nodes(b).into_iter().rev() {
            self.scan_node(g, n);
        }
    }

    fn constant_list(&mut self, g: &Graph, b: BlockId, out: &mut Vec<NodeId>) {
        for n in g.block_nodes(b) {
            self.constant_list_of_node(g, n, out);
        }
        self.constant_list_of_node(g, g.return_node(b), out);
    }

    fn constant_list_of_node(&mut self, g: &Graph, n: NodeId, out: &mut Vec<NodeId>) {
        for &v in g.node(n).inputs() {
            let p = g.value(v).node();
            if g.node(p).kind() == prim::Constant && self.seen_constants.insert(key(g, p)) {
                out.push(p);
            }
        }
        for &b in g.node(n).blocks() {
            self.constant_list(g, b, out);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Names and expressions

    fn use_of(&self, g: &Graph, v: ValueId) -> Result<String, PrintError> {
        let k = key(g, v);
        if let Some(s) = self.idents.get(&k) {
            return Ok(s.clone());
        }
        self.expr.get(&k).cloned().ok_or_else(|| {
            PrintError::new(format!(
                "value %{} is used before it is defined",
                g.display_name(v)
            ))
        })
    }

    fn unique_name_for(&mut self, g: &Graph, v: ValueId) -> String {
        match debug_name(g, v) {
            Some(n) => {
                let base = make_valid_identifier(debug_name_base(n));
                self.names.fresh(&base)
            }
            None => self.names.fresh("_"),
        }
    }

    fn assign_unique_names(&mut self, g: &Graph, values: &[ValueId]) {
        for &v in values {
            let name = self.unique_name_for(g, v);
            self.idents.insert(key(g, v), name);
        }
    }

    fn value_list(&self, g: &Graph, values: &[ValueId]) -> Result<String, PrintError> {
        let parts = values
            .iter()
            .map(|&v| self.use_of(g, v))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(parts.join(", "))
    }

    fn assignment(
        &mut self,
        g: &Graph,
        lhs: &[ValueId],
        rhs: &[ValueId],
    ) -> Result<(), PrintError> {
        if lhs.is_empty() {
            return Ok(());
        }
        let mut l = self.value_list(g, lhs)?;
        let r = self.value_list(g, rhs)?;
        // The first assignment to a single Optional/Union variable keeps its annotation, so
        // that the reparsed variable gets the declared type (tuple unpacking cannot carry one).
        if let &[v] = lhs {
            let k = key(g, v);
            let ty = g.value(v).ty();
            if matches!(**ty, Type::Optional(_) | Type::Union(_))
                && !self.expr.contains_key(&k)
                && self.annotated_unions.insert(k)
            {
                l.push_str(" : ");
                l.push_str(&annotation(ty));
            }
        }
        self.indent();
        self.out.push_str(&format!("{l} = {r}\n"));
        Ok(())
    }

    fn annotated_assignment(
        &mut self,
        g: &Graph,
        lhs: &[ValueId],
        rhs: &[ValueId],
    ) -> Result<(), PrintError> {
        for (&l, &r) in lhs.iter().zip(rhs) {
            let ls = self.use_of(g, l)?;
            let rs = self.use_of(g, r)?;
            self.indent();
            self.out.push_str(&ls);
            let lt = g.value(l).ty();
            if **lt != **g.value(r).ty() {
                self.out.push_str(": ");
                self.out.push_str(&annotation(lt));
            }
            self.out.push_str(&format!(" = {rs}\n"));
        }
        Ok(())
    }

    fn output_definition(&mut self, g: &Graph, n: NodeId, expr: &str) -> Result<(), PrintError> {
        let outs = g.node(n).outputs();
        self.assign_unique_names(g, outs);
        self.indent();
        if !outs.is_empty() {
            let l = self.value_list(g, outs)?;
            self.out.push_str(&l);
            self.out.push_str(" = ");
        }
        self.out.push_str(expr);
        self.out.push('\n');
        Ok(())
    }

    fn is_long_line(&self, s: &str) -> bool {
        s.len() + self.level * 2 >= 40
    }

    fn is_non_constant_inline(&self, g: &Graph, v: ValueId) -> bool {
        let n = g.value(v).node();
        g.node(n).kind() != prim::Constant && self.inline.contains(&key(g, n))
    }

    fn split_long_inlines(&mut self, g: &Graph, v: ValueId) -> Result<(), PrintError> {
        let Some(&u) = g.value(v).uses().first() else {
            return Ok(());
        };
        let mut to_split = Vec::new();
        self.scan_long_inlines(g, u.user, u.offset as i64, &mut to_split);
        for &w in to_split.iter().rev() {
            let e = self.use_of(g, w)?;
            self.output_definition(g, g.value(w).node(), &e)?;
        }
        Ok(())
    }

    fn scan_long_inlines(&mut self, g: &Graph, user: NodeId, offset: i64, out: &mut Vec<ValueId>) {
        let prev = self.visited_split.get(&key(g, user)).copied();
        let low = prev.map(|p| p + 1).unwrap_or(0);
        let inputs = g.node(user).inputs();
        let mut i = offset;
        while i >= low {
            if let Some(&arg) = inputs.get(i as usize) {
                if self.is_non_constant_inline(g, arg) {
                    out.push(arg);
                }
            }
            i -= 1;
        }
        self.visited_split.insert(key(g, user), offset);
        if prev.is_none() && self.inline.contains(&key(g, user)) {
            let node = g.node(user);
            if let Some(&o) = node.outputs().first() {
                if let Some(&u) = g.value(o).uses().first() {
                    self.scan_long_inlines(g, u.user, u.offset as i64 - 1, out);
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Statements

    /// Prints the statements of a function body (constants that must be bound first, then
    /// the nodes, then `return`), one level deeper than the current one.
    pub fn body(&mut self, g: &Graph, b: BlockId) -> Result<(), PrintError> {
        let mut constants = Vec::new();
        self.constant_list(g, b, &mut constants);
        self.scan_block(g, b);
        self.level += 1;
        for n in constants {
            self.node(g, n, true)?;
        }
        let has_return = !g.block_outputs(b).is_empty();
        self.block(g, b, has_return)?;
        self.node(g, g.return_node(b), false)?;
        self.level -= 1;
        Ok(())
    }

    fn block(
        &mut self,
        g: &Graph,
        b: BlockId,
        has_other_statements: bool,
    ) -> Result<(), PrintError> {
        let nodes = g.block_nodes(b);
        if !has_other_statements && nodes.is_empty() {
            self.indent();
            self.out.push_str("pass\n");
        }
        for n in nodes {
            self.node(g, n, false)?;
        }
        Ok(())
    }

    fn if_stmt(&mut self, g: &Graph, n: NodeId) -> Result<(), PrintError> {
        let node = g.node(n);
        let outs = node.outputs();
        let (cond, blocks) = match (node.inputs().first(), node.blocks()) {
            (Some(&c), &[t, e]) => (c, (t, e)),
            _ => return Err(PrintError::new("prim::If needs a condition and two blocks")),
        };
        self.assign_unique_names(g, outs);
        let c = self.use_of(g, cond)?;
        self.indent();
        self.out.push_str(&format!("if {c}:\n"));
        for (i, b) in [blocks.0, blocks.1].into_iter().enumerate() {
            if i == 1 {
                self.indent();
                self.out.push_str("else:\n");
            }
            self.level += 1;
            self.block(g, b, !outs.is_empty())?;
            self.assignment(g, outs, g.block_outputs(b))?;
            self.level -= 1;
        }
        Ok(())
    }

    fn loop_kind(g: &Graph, n: NodeId) -> LoopKind {
        let node = g.node(n);
        let Some(&body) = node.blocks().first() else {
            return LoopKind::Modified;
        };
        let const_bool = |v: Option<&ValueId>| {
            v.and_then(|&v| g.to_ivalue(v))
                .and_then(|c| c.as_bool())
                .unwrap_or(false)
        };
        let always_true =
            const_bool(node.inputs().get(1)) && const_bool(g.block_outputs(body).first());
        let trip = node.inputs().first().and_then(|&v| g.to_ivalue(v));
        let trip_used = g
            .block_inputs(body)
            .first()
            .is_some_and(|&v| g.value(v).has_uses());
        let trip_specified = match trip {
            None => true,
            Some(t) => t.as_int() != Some(i64::MAX) || trip_used,
        };
        match (always_true, trip_specified) {
            (true, true) => LoopKind::For,
            (true, false) | (false, false) => LoopKind::While,
            (false, true) => LoopKind::Modified,
        }
    }

    fn loop_stmt(&mut self, g: &Graph, n: NodeId) -> Result<(), PrintError> {
        let kind = Self::loop_kind(g, n);
        if kind == LoopKind::Modified {
            return Err(PrintError::new(
                "loop cannot be printed as python because it has gone through an optimization \
                 that combined while and for loops",
            ));
        }
        let node = g.node(n);
        let (Some(&body), true) = (node.blocks().first(), node.inputs().len() >= 2) else {
            return Err(PrintError::new(
                "prim::Loop needs a trip count, a condition and a body",
            ));
        };
        let outs = node.outputs();
        let carried_inputs = &node.inputs()[2..];
        let body_inputs = g.block_inputs(body);
        let body_outputs = g.block_outputs(body);
        if body_inputs.len() != outs.len() + 1 || body_outputs.len() != outs.len() + 1 {
            return Err(PrintError::new(
                "prim::Loop has mismatched loop-carried values",
            ));
        }
        self.assign_unique_names(g, outs);
        for (&bi, &o) in body_inputs[1..].iter().zip(outs) {
            let e = self.use_of(g, o)?;
            self.expr.insert(key(g, bi), e);
        }
        self.annotated_assignment(g, outs, carried_inputs)?;
        let trip = body_inputs[0];
        self.assign_unique_names(g, &[trip]);
        let for_loop = kind == LoopKind::For;
        if for_loop {
            let t = self.use_of(g, trip)?;
            let m = self.use_of(g, node.inputs()[0])?;
            self.indent();
            self.out.push_str(&format!("for {t} in range({m}):\n"));
        } else {
            self.assignment(g, &[trip], &node.inputs()[1..2])?;
            let t = self.use_of(g, trip)?;
            self.indent();
            self.out.push_str(&format!("while {t}:\n"));
        }
        self.level += 1;
        let offset = usize::from(for_loop);
        let carried = &body_inputs[offset..];
        self.block(g, body, !carried.is_empty())?;
        self.assignment(g, carried, &body_outputs[offset..])?;
        self.level -= 1;
        Ok(())
    }

    fn node(&mut self, g: &Graph, n: NodeId, print_const: bool) -> Result<(), PrintError> {
        let node = g.node(n);
        let kind = node.kind();
        for &v in node.inputs().iter().chain(node.outputs()) {
            self.deps.add_contained(g.value(v).ty());
        }
        for (_, a) in node.attrs() {
            match a {
                AttributeValue::Type(t) => self.deps.add_contained(t),
                AttributeValue::Types(ts) => ts.iter().for_each(|t| self.deps.add_contained(t)),
                _ => {}
            }
        }
        if !print_const && kind == prim::Constant {
            return Ok(());
        }
        match kind {
            k if k == prim::Return => {
                if !node.inputs().is_empty() {
                    let l = self.value_list(g, node.inputs())?;
                    self.indent();
                    self.out.push_str(&format!("return {l}\n"));
                }
            }
            k if k == prim::Loop => self.loop_stmt(g, n)?,
            k if k == prim::If => self.if_stmt(g, n)?,
            k if k == prim::TupleUnpack || k == prim::ListUnpack => {
                self.assign_unique_names(g, node.outputs());
                let input = self.use_of(g, input0(g, n)?)?;
                self.indent();
                if !node.outputs().is_empty() {
                    let l = self.value_list(g, node.outputs())?;
                    self.out.push_str(&format!("{l}, = "));
                }
                self.out.push_str(&input);
                self.out.push('\n');
            }
            k if k == prim::SetAttr => {
                let (obj, val) = match node.inputs() {
                    &[o, v] => (o, v),
                    _ => return Err(PrintError::new("prim::SetAttr needs two inputs")),
                };
                let name = string_attr(g, n, attr::name)?;
                let o = self.use_of(g, obj)?;
                let v = self.use_of(g, val)?;
                self.indent();
                self.out.push_str(&format!("{o}.{name} = {v}\n"));
            }
            k if k == prim::fork => {
                let name = self.names.fresh("__forked_function");
                let sub = node
                    .g(attr::Subgraph)
                    .ok_or_else(|| PrintError::new("prim::fork has no Subgraph"))?
                    .clone();
                self.indent();
                self.out.push_str(&format!("def {name}():\n"));
                for (&si, &ni) in sub.inputs().iter().zip(node.inputs()) {
                    let e = self.use_of(g, ni)?;
                    self.expr.insert(key(&sub, si), e);
                }
                self.body(&sub, sub.block())?;
                self.output_definition(g, n, &format!("fork({name})"))?;
            }
            k if k == prim::Enter => {
                let input = self.use_of(g, input0(g, n)?)?;
                self.indent();
                self.out.push_str(&format!("with {input}"));
                if let Some(&out) = node.outputs().first() {
                    if g.value(out).has_uses() {
                        let name = self.unique_name_for(g, out);
                        self.idents.insert(key(g, out), name.clone());
                        self.out.push_str(&format!(" as {name}"));
                    }
                }
                self.out.push_str(":\n");
                self.level += 1;
            }
            k if k == prim::Exit => {
                if g.node(g.prev_node(n)).kind() == prim::Enter {
                    self.indent();
                    self.out.push_str("pass\n");
                }
                self.level = self.level.saturating_sub(1);
            }
            k if k == prim::Closure => {
                return Err(PrintError::new("closures are not exportable"));
            }
            k if k == prim::ModuleContainerIndex => {
                let (c, i) = match node.inputs() {
                    &[c, i] => (c, i),
                    _ => {
                        return Err(PrintError::new(
                            "prim::ModuleContainerIndex needs two inputs",
                        ))
                    }
                };
                let out = output0(g, n)?;
                self.assign_unique_names(g, &[out]);
                let o = self.use_of(g, out)?;
                let cs = self.use_of(g, c)?;
                let is = self.use_of(g, i)?;
                let t = annotation(g.value(out).ty());
                self.indent();
                self.out.push_str(&format!("{o} : {t} = {cs}[{is}]\n"));
            }
            _ => {
                let e = self.rhs(g, n)?;
                let inline = self.inline.contains(&key(g, n));
                if !inline || (kind == prim::Constant && self.is_long_line(&e)) {
                    self.output_definition(g, n, &e)?;
                } else {
                    let out = output0(g, n)?;
                    let long = self.is_long_line(&e);
                    self.expr.insert(key(g, out), e);
                    if long {
                        self.split_long_inlines(g, out)?;
                    }
                }
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    fn call_args(
        &self,
        g: &Graph,
        inputs: &[ValueId],
        open: &str,
        close: &str,
    ) -> Result<String, PrintError> {
        Ok(format!("{open}{}{close}", self.value_list(g, inputs)?))
    }

    fn rhs(&mut self, g: &Graph, n: NodeId) -> Result<String, PrintError> {
        let node = g.node(n);
        let kind = node.kind();
        let inputs = node.inputs();
        let out_ty = || -> Result<TypeRef, PrintError> { Ok(g.value(output0(g, n)?).ty().clone()) };
        let s = match kind {
            k if k == prim::PythonOp => {
                return Err(PrintError::new(
                    "could not export a Python function call: remove calls to Python functions \
                     before export",
                ))
            }
            k if k == prim::Uninitialized => {
                format!("uninitialized({})", annotation(&*out_ty()?))
            }
            k if k == prim::Constant => {
                let t = out_ty()?;
                if let Type::Function(f) = &*t {
                    self.deps.add_named(&t);
                    f.name.clone()
                } else {
                    match g.constant_value(n) {
                        None if node.attr(attr::value).is_some() => {
                            return Err(PrintError::new(format!(
                                "constant %{} has a value of an unknown kind",
                                g.display_name(output0(g, n)?)
                            )))
                        }
                        Some(IValue::None) | None => "None".to_string(),
                        Some(v) => {
                            let mut s = String::new();
                            write_constant(&mut s, &v, self.constants);
                            s
                        }
                    }
                }
            }
            k if k == aten::ScalarImplicit
                || k == aten::FloatImplicit
                || k == aten::IntImplicit =>
            {
                format!(
                    "annotate({}, {})",
                    annotation(&*out_ty()?),
                    self.use_of(g, input0(g, n)?)?
                )
            }
            k if k == aten::Int => self.call_args(g, inputs, "int(", ")")?,
            k if k == aten::Float => self.call_args(g, inputs, "float(", ")")?,
            k if k == aten::Bool => self.call_args(g, inputs, "bool(", ")")?,
            k if k == aten::str => self.call_args(g, inputs, "str(", ")")?,
            k if k == prim::Print => self.call_args(g, inputs, "print(", ")")?,
            k if k == sym("aten::sorted") => self.call_args(g, inputs, "sorted(", ")")?,
            k if k == aten::__getitem__ => {
                let (c, i) = match inputs {
                    &[c, i] => (c, i),
                    _ => return Err(PrintError::new("aten::__getitem__ needs two inputs")),
                };
                let cs = self.use_of(g, c)?;
                let is = self.use_of(g, i)?;
                if is_valid_identifier(&cs) {
                    format!("{cs}[{is}]")
                } else {
                    format!("({cs})[{is}]")
                }
            }
            k if k == prim::TupleConstruct => {
                let t = out_ty()?;
                let mut s = String::new();
                if is_named_tuple_class(&t) {
                    s.push_str(&annotation(&t));
                }
                let close = if inputs.len() == 1 { ",)" } else { ")" };
                s.push_str(&self.call_args(g, inputs, "(", close)?);
                s
            }
            k if k == prim::TupleIndex => {
                let (t, i) = match inputs {
                    &[t, i] => (t, i),
                    _ => return Err(PrintError::new("prim::TupleIndex needs two inputs")),
                };
                format!("({})[{}]", self.use_of(g, t)?, self.use_of(g, i)?)
            }
            k if k == prim::TupleSlice => {
                let b = node.i(sym("attr::beg")).unwrap_or(0);
                let e = node.i(sym("attr::end")).unwrap_or(0);
                format!("({})[{b}:{e}]", self.use_of(g, input0(g, n)?)?)
            }
            k if k == prim::ListConstruct => {
                let t = out_ty()?;
                let elem_inferable = match &*t {
                    Type::List(e) => elem_type_inferable(e),
                    _ => true,
                };
                if inputs.is_empty() {
                    format!("annotate({}, [])", annotation(&t))
                } else if !elem_inferable {
                    format!(
                        "annotate({}, {})",
                        annotation(&t),
                        self.call_args(g, inputs, "[", "]")?
                    )
                } else {
                    self.call_args(g, inputs, "[", "]")?
                }
            }
            k if k == prim::DictConstruct => {
                let t = out_ty()?;
                let inferable = match &*t {
                    Type::Dict(k, v) => elem_type_inferable(k) && elem_type_inferable(v),
                    _ => true,
                };
                let mut d = String::from("{");
                for (i, pair) in inputs.chunks(2).enumerate() {
                    if i > 0 {
                        d.push_str(", ");
                    }
                    match pair {
                        &[k, v] => {
                            d.push_str(&format!("{}: {}", self.use_of(g, k)?, self.use_of(g, v)?))
                        }
                        _ => {
                            return Err(PrintError::new(
                                "prim::DictConstruct needs key/value pairs",
                            ))
                        }
                    }
                }
                d.push('}');
                if inputs.is_empty() || !inferable {
                    format!("annotate({}, {d})", annotation(&t))
                } else {
                    d
                }
            }
            k if k == prim::CreateObject => {
                let t = annotation(&*out_ty()?);
                format!("{t}.__new__({t})")
            }
            k if k == prim::GetAttr => {
                let obj = self.use_of(g, input0(g, n)?)?;
                let field = string_attr(g, n, attr::name)?;
                if is_valid_identifier(field) {
                    format!("{obj}.{field}")
                } else {
                    let mut q = String::new();
                    ts_core::scanner::quote_string(field, &mut q);
                    format!("getattr({obj}, {q})")
                }
            }
            k if k == prim::CallFunction => {
                let f = self.use_of(g, input0(g, n)?)?;
                let mut s = format!("{f}(");
                for &v in &inputs[1..] {
                    s.push_str(&self.use_of(g, v)?);
                    s.push_str(", ");
                }
                s.push(')');
                s
            }
            k if k == prim::CallMethod => {
                let this = input0(g, n)?;
                let name = string_attr(g, n, attr::name)?;
                let mut s = format!("({}).{name}(", self.use_of(g, this)?);
                for &v in &inputs[1..] {
                    s.push_str(&self.use_of(g, v)?);
                    s.push_str(", ");
                }
                s.push(')');
                self.deps.add_named(g.value(this).ty());
                s
            }
            k if k == sym("aten::_unwrap_optional") => {
                let v = input0(g, n)?;
                let u = self.use_of(g, v)?;
                let none_input = matches!(**g.value(v).ty(), Type::NoneType)
                    || matches!(g.to_ivalue(v), Some(IValue::None));
                if none_input {
                    let t = Type::optional(out_ty()?);
                    format!("{}(annotate({}, {u}))", op_name(kind), annotation(&t))
                } else {
                    format!("{}({u})", op_name(kind))
                }
            }
            k if k == prim::unchecked_cast || k == prim::unchecked_unwrap_optional => {
                format!(
                    "unchecked_cast({}, {})",
                    annotation(&*out_ty()?),
                    self.use_of(g, input0(g, n)?)?
                )
            }
            k if k == prim::isinstance => {
                let v = self.use_of(g, input0(g, n)?)?;
                let types = match node.attr(attr::types) {
                    Some(AttributeValue::Types(ts)) => ts.clone(),
                    Some(AttributeValue::Type(t)) => vec![t.clone()],
                    _ => return Err(PrintError::new("prim::isinstance has no types")),
                };
                let ts: Vec<String> = types.iter().map(|t| annotation(t)).collect();
                if ts.len() == 1 {
                    format!("isinstance({v}, {})", ts[0])
                } else {
                    format!("isinstance({v}, ({}))", ts.join(", "))
                }
            }
            k if k == prim::tolist => {
                format!(
                    "annotate({}, {}.tolist())",
                    annotation(&*out_ty()?),
                    self.use_of(g, input0(g, n)?)?
                )
            }
            k if k == prim::EnumValue => format!("({}).value", self.use_of(g, input0(g, n)?)?),
            k if k == prim::EnumName => format!("({}).name", self.use_of(g, input0(g, n)?)?),
            _ => {
                let args = self.schemas.printed_arguments(g, n);
                let mut s = format!("{}(", op_name(kind));
                for (j, (i, name)) in args.into_iter().enumerate() {
                    if j > 0 {
                        s.push_str(", ");
                    }
                    if let Some(name) = name {
                        s.push_str(&name);
                        s.push('=');
                    }
                    let v = inputs
                        .get(i)
                        .copied()
                        .ok_or_else(|| PrintError::new(format!("{kind} has no input {i}")))?;
                    s.push_str(&self.use_of(g, v)?);
                }
                s.push(')');
                s
            }
        };
        Ok(s)
    }
}

/// How an operator is spelled in printed source: `torch.add` for `aten::add`, `ops.prim.X`
/// for other namespaces, with `backward`/`grad` under `torch.autograd`.
pub fn op_name(kind: Symbol) -> String {
    match kind.qualified() {
        "aten::backward" => "torch.autograd.backward".to_string(),
        "aten::grad" => "torch.autograd.grad".to_string(),
        _ if kind.ns() == "aten" => format!("torch.{}", kind.name()),
        _ => format!("ops.{}.{}", kind.ns(), kind.name()),
    }
}

use ts_core::aten;

fn input0(g: &Graph, n: NodeId) -> Result<ValueId, PrintError> {
    g.node(n)
        .inputs()
        .first()
        .copied()
        .ok_or_else(|| PrintError::new(format!("{} has no inputs", g.node(n).kind())))
}

fn output0(g: &Graph, n: NodeId) -> Result<ValueId, PrintError> {
    g.node(n)
        .outputs()
        .first()
        .copied()
        .ok_or_else(|| PrintError::new(format!("{} has no outputs", g.node(n).kind())))
}

fn string_attr(g: &Graph, n: NodeId, name: Symbol) -> Result<&str, PrintError> {
    g.node(n).s(name).ok_or_else(|| {
        PrintError::new(format!(
            "{} has no string attribute '{}'",
            g.node(n).kind(),
            name.name()
        ))
    })
}
