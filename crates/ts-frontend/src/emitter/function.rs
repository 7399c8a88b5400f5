//! Emitting one function: its signature, the environment of variables (as `prim::Store` /
//! `prim::Load` until SSA conversion), return handling, and the post-emission pipeline.

use std::collections::HashSet;
use std::sync::Arc;

use ts_core::{
    attr, prim, Argument, ClassType, FunctionSchema, IValue, Source, SourceRange, Symbol, Type,
    TypeRef,
};
use ts_ir::{AttributeValue, BlockId, Graph, NodeId, ValueId};

use super::annotations::{parse_type_comment, type_from_expr, unshaped};
use super::environment::{Environment, Frame};
use super::sugared::Sugared;
use super::CompileCtx;
use crate::ast::{Def, Expr, ExprKind, Stmt};
use crate::error::{CResult, CompileError};

/// Emits one function.
pub struct FunctionEmitter<'c> {
    pub ctx: &'c mut CompileCtx,
    pub g: Graph,
    pub env: Environment,
    /// Blocks that always exit (return, raise, break, continue).
    pub exit_blocks: HashSet<BlockId>,
    pub declared_return: Option<TypeRef>,
    pub merged_return: Option<TypeRef>,
    pub loop_depth: usize,
    pub self_class: Option<Arc<ClassType>>,
    pub name: String,
    /// The current source range (for node annotations).
    pub cur_range: Option<SourceRange>,
    /// Links of a long left-associative chain already emitted bottom-up, by node address
    /// (see `emit_sugared`); each is taken once by the emission of its parent.
    pub spine_values: std::collections::HashMap<*const Expr, Sugared>,
}

/// True for names PyTorch keeps as debug names (not `_` temporaries, not numbers).
pub fn meaningful_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with("$") && !name.bytes().all(|b| b.is_ascii_digit())
}

/// Rebuilds a fork subgraph in the order PyTorch's closure lifting creates its values, so that
/// unnamed values get PyTorch's numbers: the context tuple (%0, later removed), the body's nodes
/// in order with the captured values unpacked (numbered) just before their first use, and the
/// real inputs last (they print with their captured names).
fn relift_fork_subgraph(sub: &Graph) -> Option<Graph> {
    let mut out = Graph::new();
    let ctx = out.add_graph_input(Type::any());
    let old_inputs = sub.inputs().to_vec();
    let mut map: std::collections::HashMap<ValueId, ValueId> = std::collections::HashMap::new();
    let mut unpack: Option<NodeId> = None;
    for n in sub.block_nodes(sub.block()) {
        let uses_input = sub.node(n).inputs().iter().any(|v| old_inputs.contains(v));
        if unpack.is_none() && uses_input {
            let u = out.insert(prim::TupleUnpack, &[ctx], 0);
            for &v in &old_inputs {
                let o = out.add_output(u, sub.value(v).ty().clone());
                map.insert(v, o);
            }
            unpack = Some(u);
        }
        out.clone_node_from(sub, n, &mut map).ok()?;
    }
    for &o in sub.outputs() {
        let v = *map.get(&o)?;
        out.register_output(v);
    }
    let real: Vec<ValueId> = old_inputs
        .iter()
        .map(|&v| out.add_graph_input(sub.value(v).ty().clone()))
        .collect();
    if let Some(u) = unpack {
        let outs = out.node(u).outputs().to_vec();
        for (o, r) in outs.into_iter().zip(&real) {
            out.replace_all_uses_with(o, *r);
        }
        out.destroy_node(u).ok()?;
    }
    let top = out.block();
    out.erase_block_input(top, 0).ok()?;
    Some(out)
}

/// Gives the inputs of each `prim::fork` subgraph the debug names of the values the fork
/// captures, as PyTorch's closure lifting copies them (run after SSA, when names are final).
fn name_fork_inputs(g: &mut Graph) {
    let sub_attr = Symbol::attr("Subgraph");
    for n in g.all_nodes() {
        if g.node(n).kind() != prim::fork {
            continue;
        }
        let Some(sub) = g.node(n).g(sub_attr) else {
            continue;
        };
        let Some(mut sub) = relift_fork_subgraph(sub) else {
            continue;
        };
        let names: Vec<Option<String>> = g
            .node(n)
            .inputs()
            .iter()
            .map(|&v| g.value(v).debug_name().map(str::to_string))
            .collect();
        let sub_inputs = sub.inputs().to_vec();
        for (si, name) in sub_inputs.into_iter().zip(names) {
            if let Some(name) = name {
                let _ = sub.set_debug_name(si, &name);
            }
        }
        g.set_attr(n, sub_attr, AttributeValue::Graph(Arc::new(sub)));
    }
}

impl<'c> FunctionEmitter<'c> {
    /// Compiles `def` (a method of `class` when given) to a graph and schema.
    pub fn compile(
        ctx: &'c mut CompileCtx,
        def: &Def,
        class: Option<Arc<ClassType>>,
        name: &str,
    ) -> CResult<(Graph, FunctionSchema)> {
        let mut e = FunctionEmitter {
            ctx,
            g: Graph::new(),
            env: Environment::default(),
            exit_blocks: HashSet::new(),
            declared_return: None,
            merged_return: None,
            loop_depth: 0,
            self_class: class,
            name: name.to_string(),
            cur_range: None,
            spine_values: Default::default(),
        };
        let top = e.g.block();
        e.env.frames.push(Frame::new(top));
        let schema = e.emit_def(def)?;
        let mut g = std::mem::take(&mut e.g);
        crate::convert_to_ssa::convert_to_ssa(&mut g);
        crate::canonicalize::canonicalize_modified_loops(&mut g);
        crate::canonicalize::normalize_ops(&mut g);
        name_fork_inputs(&mut g);
        Ok((g, schema))
    }

    /// An error at `range`.
    pub fn err<T>(&self, range: &SourceRange, msg: impl Into<String>) -> CResult<T> {
        Err(CompileError::new(msg, range))
    }

    /// Inserts a node at the insertion point with the current source range.
    pub fn insert_node(
        &mut self,
        kind: Symbol,
        inputs: &[ValueId],
        out_types: &[TypeRef],
    ) -> NodeId {
        let n = self.g.create(kind, inputs, 0);
        for t in out_types {
            self.g.add_output(n, t.clone());
        }
        // PyTorch creates these with `graph->create*` + `insertNode`, which sets no range.
        let ranged = ![prim::TupleIndex, prim::SetAttr, prim::unchecked_cast].contains(&kind);
        let range = if ranged { self.cur_range.clone() } else { None };
        self.g.set_source_range(n, range);
        self.g.insert_node(n)
    }

    /// Inserts a one-output node and returns the output.
    pub fn insert1(&mut self, kind: Symbol, inputs: &[ValueId], ty: TypeRef) -> ValueId {
        let n = self.insert_node(kind, inputs, &[ty]);
        self.g.node(n).output(0)
    }

    /// Inserts a constant.
    pub fn constant(&mut self, v: IValue) -> ValueId {
        let c = self.g.insert_constant(&v);
        let n = self.g.value(c).node();
        self.g.set_source_range(n, self.cur_range.clone());
        c
    }

    /// The block the insertion point is in.
    pub fn cur_block(&self) -> BlockId {
        self.g.insert_block()
    }

    // -----------------------------------------------------------------------------------------
    // Environment

    /// Pushes a frame for block `b` and moves the insertion point to its end.
    pub fn push_frame(&mut self, b: BlockId) {
        self.env.frames.push(Frame::new(b));
        self.g.set_insert_point_at_end(b);
    }

    /// Pops the innermost frame.
    pub fn pop_frame(&mut self) -> Frame {
        self.env.frames.pop().expect("frame pushed")
    }

    /// Binds `name` to a first-class value, checking the type against outer bindings and an
    /// optional annotation; emits `prim::Store`.
    pub fn set_var(
        &mut self,
        range: &SourceRange,
        name: &str,
        v: ValueId,
        annotated: Option<TypeRef>,
    ) -> CResult<()> {
        let mut v = v;
        if let Some(parent) = self.env.find_type_in_parents(name) {
            if annotated.is_some() {
                return self.err(range, format!("Attempting to declare and annotate the type of variable '{name}' but it is already defined in an outer block"));
            }
            let parent_ty = unshaped(&parent);
            v = super::call::try_convert(&mut self.g, &parent_ty, v, false);
            let vt = self.g.value(v).ty().clone();
            if !vt.is_subtype_of(&parent_ty) {
                return self.err(
                    range,
                    format!(
                        "Variable '{name}' previously had type {} but is now being assigned to a value of type {}",
                        parent.annotation_str(),
                        vt.annotation_str()
                    ),
                );
            }
        }
        let vt = self.g.value(v).ty().clone();
        if let Some(a) = &annotated {
            if !vt.is_subtype_of(a) {
                return self.err(
                    range,
                    format!(
                        "Variable '{name}' is annotated with type {} but is being assigned to a value of type {}",
                        a.annotation_str(),
                        vt.annotation_str()
                    ),
                );
            }
        }
        let store_ty = annotated.unwrap_or_else(|| unshaped(&vt));
        // Name the value after the variable when it was made in this block.
        let in_block = self.g.node(self.g.value(v).node()).owning_block() == Some(self.cur_block());
        if self.g.value(v).debug_name().is_none() && meaningful_name(name) && in_block {
            let _ = self.g.set_debug_name(v, name);
        }
        let n = self.insert_node(prim::Store, &[v], &[]);
        self.g
            .set_attr(n, attr::name, AttributeValue::String(name.to_string()));
        let frame = self.env.top();
        frame.types.insert(name.to_string(), store_ty);
        frame.sugared.remove(name);
        frame.errors.remove(name);
        Ok(())
    }

    /// Binds `name` to a sugared (non first-class) value.
    pub fn set_sugared(&mut self, range: &SourceRange, name: &str, s: Sugared) -> CResult<()> {
        if let Sugared::Simple(v) = s {
            return self.set_var(range, name, v, None);
        }
        if self.env.find_type_in_parents(name).is_some() {
            return self.err(
                range,
                format!("Cannot re-assign '{name}' to a value that is not a first-class value. Only reassignments to first-class values are allowed"),
            );
        }
        let f = self.env.top();
        f.types.remove(name);
        f.sugared.insert(name.to_string(), s);
        Ok(())
    }

    /// Reads variable `name`: a `prim::Load` of a first-class variable, a sugared binding, or
    /// a global (function, class, builtin).
    pub fn get_var(&mut self, range: &SourceRange, name: &str) -> CResult<Sugared> {
        if let Some(t) = self.env.find_type(name) {
            let v = self.insert1(prim::Load, &[], t);
            let n = self.g.value(v).node();
            self.g
                .set_attr(n, attr::name, AttributeValue::String(name.to_string()));
            return Ok(Sugared::Simple(v));
        }
        if let Some(s) = self.env.find_sugared(name) {
            return Ok(s);
        }
        if let Some(e) = self.env.deferred_error(name) {
            return Err(CompileError::plain(e));
        }
        match self.resolve_global(range, name)? {
            Some(s) => Ok(s),
            None => self.err(range, format!("undefined value {name}")),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Definitions

    fn param_types(
        &mut self,
        def: &Def,
        is_method: bool,
    ) -> CResult<(Vec<TypeRef>, Option<TypeRef>)> {
        let names: &CompileCtx = self.ctx;
        let n_params = def.params.len() - usize::from(is_method);
        if let Some((text, r)) = &def.type_comment {
            if def.params.iter().any(|p| p.annotation.is_some()) || def.return_type.is_some() {
                return self.err(
                    r,
                    "A function can not have both a type comment and type annotations",
                );
            }
            let (args, ret) = parse_type_comment(text, r, names)?;
            if args.len() != n_params {
                return self.err(
                    r,
                    format!("Number of type annotations ({}) did not match the number of function parameters ({n_params})", args.len()),
                );
            }
            return Ok((args, ret));
        }
        let mut out = Vec::new();
        for p in def.params.iter().skip(usize::from(is_method)) {
            out.push(match &p.annotation {
                Some(a) => type_from_expr(a, names)?,
                None => Type::tensor(),
            });
        }
        let ret = match &def.return_type {
            Some(r) => Some(type_from_expr(r, names)?),
            None => None,
        };
        Ok((out, ret))
    }

    /// Evaluates a default argument expression to a constant.
    pub fn default_value(&self, e: &Expr, ty: &TypeRef) -> CResult<IValue> {
        let v = const_expr(e)
            .ok_or_else(|| CompileError::new("default arguments must be constants", &e.range))?;
        Ok(match (&v, &**ty) {
            (IValue::Int(i), Type::Float) => IValue::Double(*i as f64),
            (IValue::List(l), Type::List(_) | Type::Optional(_)) if l.items.read().is_empty() => {
                let elem = match &**ty {
                    Type::List(e) => e.clone(),
                    Type::Optional(o) => o.list_elem().cloned().unwrap_or_else(Type::tensor),
                    _ => elem_of(ty),
                };
                IValue::list(elem, vec![])
            }
            _ => v,
        })
    }

    fn emit_def(&mut self, def: &Def) -> CResult<FunctionSchema> {
        let is_method = self.self_class.is_some()
            && !def
                .decorators
                .iter()
                .any(|d| d.dotted_name().as_deref() == Some("staticmethod"));
        if is_method && def.params.is_empty() {
            return self.err(&def.range, "methods must have a self argument");
        }
        let (types, ret) = self.param_types(def, is_method)?;
        self.declared_return = ret.clone();
        let mut arguments = Vec::new();
        let top = self.g.block();
        self.g.set_insert_point_at_end(top);
        if is_method {
            let cls = self.self_class.clone().expect("method");
            let v = self.g.add_graph_input(Type::class(cls));
            let p = &def.params[0];
            let _ = self.g.set_debug_name(v, &p.name.name);
            arguments.push(Argument {
                name: p.name.name.clone(),
                ty: self.g.value(v).ty().clone(),
                real_ty: None,
                n: None,
                default: None,
                kwarg_only: false,
                alias_info: None,
            });
            self.set_var(&p.name.range, &p.name.name, v, None)?;
        }
        for (p, ty) in def.params.iter().skip(usize::from(is_method)).zip(types) {
            let default = match &p.default {
                Some(d) => Some(self.default_value(d, &ty)?),
                None => None,
            };
            let v = self.g.add_graph_input(ty.clone());
            let _ = self.g.set_debug_name(v, &p.name.name);
            arguments.push(Argument {
                name: p.name.name.clone(),
                ty,
                real_ty: None,
                n: p.annotation.as_ref().and_then(broadcasting_list_len),
                default,
                kwarg_only: p.kwarg_only,
                alias_info: None,
            });
            self.set_var(&p.name.range, &p.name.name, v, None)?;
        }
        self.cur_range = Some(def.range.clone());
        self.emit_statements(&def.body)?;
        self.handle_maybe_no_return(def)?;
        let ret_ty = self.merged_return.clone().unwrap_or_else(Type::none);
        let placeholder = self.insert1(prim::Uninitialized, &[], ret_ty.clone());
        self.g.register_output(placeholder);
        Ok(FunctionSchema {
            name: self
                .name
                .rsplit('.')
                .next()
                .unwrap_or(&self.name)
                .to_string(),
            overload_name: String::new(),
            arguments,
            returns: vec![Argument {
                name: String::new(),
                ty: ret_ty,
                real_ty: None,
                n: None,
                default: None,
                kwarg_only: false,
                alias_info: None,
            }],
            is_vararg: false,
            is_varret: false,
        })
    }

    fn handle_maybe_no_return(&mut self, def: &Def) -> CResult<()> {
        let top = self.g.block();
        if !self.exit_blocks.contains(&top) {
            if let Some(d) = &self.declared_return {
                if !d.is_none_type() {
                    return self.err(&def.range, "Function was not annotated as having type None, but does not return along all paths");
                }
            }
            self.g.set_insert_point_at_end(top);
            let none = self.constant(IValue::None);
            self.emit_return_value(&def.range, none)?;
        } else if self.merged_return.is_none() {
            self.merged_return = Some(self.declared_return.clone().unwrap_or_else(Type::none));
        }
        Ok(())
    }

    /// Emits `prim::ReturnStmt` for `v`, checking it against the declared or merged type.
    pub fn emit_return_value(&mut self, range: &SourceRange, mut v: ValueId) -> CResult<()> {
        let vt = self.g.value(v).ty().clone();
        let ret_ty = if let Some(d) = self.declared_return.clone() {
            if !(vt.is_tensor() && vt.is_none_type()) {
                v = super::call::try_convert(&mut self.g, &d, v, true);
            }
            let vt = self.g.value(v).ty().clone();
            if !vt.is_subtype_of(&d) {
                return self.err(
                    range,
                    format!(
                        "Return value was annotated as having type {} but is actually of type {}",
                        d.annotation_str(),
                        vt.annotation_str()
                    ),
                );
            }
            d
        } else {
            let prev = self.merged_return.clone().unwrap_or_else(|| vt.clone());
            match ts_core::unify_types(&prev, &vt, false) {
                Some(t) => t,
                None => {
                    return self.err(
                        range,
                        format!(
                            "Previous return statement returned a value of type {} but this return statement returns a value of type {}",
                            prev.annotation_str(),
                            vt.annotation_str()
                        ),
                    )
                }
            }
        };
        self.merged_return = Some(ret_ty.clone());
        if matches!(*ret_ty, Type::Any) && !matches!(**self.g.value(v).ty(), Type::Any) {
            v = self.insert1(prim::unchecked_cast, &[v], Type::any());
        }
        self.insert_node(prim::ReturnStmt, &[v], &[]);
        let b = self.cur_block();
        self.exit_blocks.insert(b);
        Ok(())
    }

    /// Emits a sequence of statements.
    pub fn emit_statements(&mut self, stmts: &[Stmt]) -> CResult<()> {
        for s in stmts {
            self.emit_statement(s)?;
        }
        Ok(())
    }

    /// The source of the function being compiled (for synthesized ranges).
    pub fn source_of(range: &SourceRange) -> Arc<Source> {
        range.source.clone()
    }
}

fn elem_of(t: &TypeRef) -> TypeRef {
    t.list_elem().cloned().unwrap_or_else(Type::tensor)
}

/// A constant expression's value (literals, negated numbers, tuples/lists of constants).
pub fn const_expr(e: &Expr) -> Option<IValue> {
    Some(match &e.kind {
        ExprKind::Int(i) => IValue::Int(*i),
        ExprKind::Float(f) => IValue::Double(*f),
        ExprKind::Str(s) => IValue::str(s.clone()),
        ExprKind::True => IValue::Bool(true),
        ExprKind::False => IValue::Bool(false),
        ExprKind::None => IValue::None,
        ExprKind::Unary(crate::ast::UnaryOp::Neg, x) => match const_expr(x)? {
            IValue::Int(i) => IValue::Int(-i),
            IValue::Double(d) => IValue::Double(-d),
            _ => return None,
        },
        ExprKind::Tuple(v) => IValue::tuple(v.iter().map(const_expr).collect::<Option<Vec<_>>>()?),
        ExprKind::List(v) => {
            let items = v.iter().map(const_expr).collect::<Option<Vec<_>>>()?;
            let elem = items
                .first()
                .map(|x| x.type_of())
                .unwrap_or_else(Type::tensor);
            IValue::list(elem, items)
        }
        ExprKind::Call { func, args, .. }
            if func.dotted_name().as_deref() == Some("float") && args.len() == 1 =>
        {
            match const_expr(&args[0])? {
                IValue::String(s) => match s.trim().to_lowercase().as_str() {
                    "inf" => IValue::Double(f64::INFINITY),
                    "-inf" => IValue::Double(f64::NEG_INFINITY),
                    "nan" => IValue::Double(f64::NAN),
                    other => IValue::Double(other.parse().ok()?),
                },
                IValue::Int(i) => IValue::Double(i as f64),
                d @ IValue::Double(_) => d,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// `N` of a `BroadcastingListN[...]` (possibly inside `Optional[...]`) annotation.
fn broadcasting_list_len(e: &Expr) -> Option<usize> {
    let ExprKind::Subscript(base, args) = &e.kind else {
        return None;
    };
    let name = base.dotted_name()?;
    let short = name.rsplit('.').next().unwrap_or(&name);
    if short == "Optional" {
        return args.first().and_then(broadcasting_list_len);
    }
    short.strip_prefix("BroadcastingList")?.parse().ok()
}
