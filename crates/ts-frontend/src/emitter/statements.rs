//! Statements: assignments (with unpacking and subscript/attribute targets), `if` with type
//! refinement, loops, `return`, `raise`, `assert`, `with`, `del`, `break`/`continue`.

use std::collections::BTreeSet;
use std::sync::Arc;

use ts_core::{attr, prim, IValue, SourceRange, Symbol, Type, TypeRef};
use ts_ir::{AttributeValue, BlockId, ValueId};

use super::annotations::type_from_expr;
use super::call::NamedValue;
use super::function::FunctionEmitter;
use super::sugared::{Iterable, Sugared};
use crate::ast::{BinOp, Expr, ExprKind, Stmt, StmtKind};
use crate::error::{CResult, CompileError};

/// Type refinements a condition implies: variable name → refined type.
#[derive(Clone, Debug, Default)]
pub struct Refinements {
    pub on_true: Vec<(String, TypeRef)>,
    pub on_false: Vec<(String, TypeRef)>,
}

fn intersect(a: &[(String, TypeRef)], b: &[(String, TypeRef)]) -> Vec<(String, TypeRef)> {
    a.iter()
        .filter(|x| b.iter().any(|y| y.0 == x.0 && y.1 == x.1))
        .cloned()
        .collect()
}

fn union(a: &[(String, TypeRef)], b: &[(String, TypeRef)]) -> Vec<(String, TypeRef)> {
    let mut out = a.to_vec();
    for y in b {
        if !out.iter().any(|x| x.0 == y.0) {
            out.push(y.clone());
        }
    }
    out
}

impl Refinements {
    /// Swapped (for `not`).
    pub fn not(&self) -> Refinements {
        Refinements {
            on_true: self.on_false.clone(),
            on_false: self.on_true.clone(),
        }
    }

    /// For `a and b`.
    pub fn and(&self, o: &Refinements) -> Refinements {
        Refinements {
            on_true: union(&self.on_true, &o.on_true),
            on_false: intersect(&self.on_false, &o.on_false),
        }
    }

    /// For `a or b`.
    pub fn or(&self, o: &Refinements) -> Refinements {
        Refinements {
            on_true: intersect(&self.on_true, &o.on_true),
            on_false: union(&self.on_false, &o.on_false),
        }
    }
}

/// A condition: its bool value, refinements, and whether it is known at compile time.
pub struct CondValue {
    pub value: ValueId,
    pub refinements: Refinements,
    pub static_if: Option<bool>,
}

impl FunctionEmitter<'_> {
    /// Emits one statement.
    pub fn emit_statement(&mut self, s: &Stmt) -> CResult<()> {
        self.cur_range = Some(s.range.clone());
        match &s.kind {
            StmtKind::Expr(e) => {
                if matches!(e.kind, ExprKind::Str(_)) {
                    return Ok(()); // docstring
                }
                self.emit_sugared(e, None)?;
            }
            StmtKind::Assign {
                targets,
                value,
                annotation,
            } => self.emit_assign(s, targets, value.as_ref(), annotation.as_ref())?,
            StmtKind::AugAssign { target, op, value } => {
                self.emit_aug_assign(s, target, *op, value)?
            }
            StmtKind::If { cond, body, orelse } => self.emit_if(&s.range, cond, body, orelse)?,
            StmtKind::While { cond, body } => {
                self.emit_loop(&s.range, None, None, Some(cond), body)?
            }
            StmtKind::For { target, iter, body } => self.emit_for(&s.range, target, iter, body)?,
            StmtKind::Return(v) => {
                let hint = self.declared_return.clone();
                let val = match v {
                    Some(e) => self.emit_expr(e, hint.as_ref())?,
                    None => self.constant(IValue::None),
                };
                self.emit_return_value(&s.range, val)?;
            }
            StmtKind::Raise(e) => self.emit_raise(&s.range, e.as_ref())?,
            StmtKind::Assert { test, msg } => self.emit_assert(&s.range, test, msg.as_ref())?,
            StmtKind::Pass | StmtKind::Import => {}
            StmtKind::Break | StmtKind::Continue => {
                if self.loop_depth == 0 {
                    return self.err(&s.range, "SyntaxError: 'break' or 'continue' outside loop");
                }
                let kind = if matches!(s.kind, StmtKind::Break) {
                    prim::BreakStmt
                } else {
                    prim::ContinueStmt
                };
                self.insert_node(kind, &[], &[]);
                let b = self.cur_block();
                self.exit_blocks.insert(b);
            }
            StmtKind::Delete(targets) => {
                for t in targets {
                    self.emit_delete(t)?;
                }
            }
            StmtKind::With { items, body } => self.emit_with(&s.range, items, body)?,
            StmtKind::Def(_) => {
                return self.err(
                    &s.range,
                    "nested function definitions are not supported in TorchScript",
                )
            }
            StmtKind::Class(_) => {
                return self.err(
                    &s.range,
                    "class definitions inside functions are not supported",
                )
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Assignment

    fn emit_assign(
        &mut self,
        s: &Stmt,
        targets: &[Expr],
        value: Option<&Expr>,
        annotation: Option<&Expr>,
    ) -> CResult<()> {
        let ann = match annotation {
            Some(a) => Some(type_from_expr(a, &*self.ctx)?),
            None => None,
        };
        let Some(value) = value else {
            // A bare declaration `x: T` declares nothing at run time.
            return Ok(());
        };
        if targets.len() == 1 {
            return self.emit_assign_target(&targets[0], value, ann);
        }
        // `a = b = value`: evaluate once.
        let v = self.emit_expr(value, ann.as_ref())?;
        for t in targets {
            self.assign_value(t, Sugared::Simple(v), ann.clone(), &s.range)?;
        }
        Ok(())
    }

    fn emit_assign_target(
        &mut self,
        target: &Expr,
        value: &Expr,
        ann: Option<TypeRef>,
    ) -> CResult<()> {
        match &target.kind {
            ExprKind::Name(_) | ExprKind::Attribute(..) | ExprKind::Subscript(..) => {
                // Sugared values (modules, functions) may be bound to plain names.
                if let (ExprKind::Name(n), None) = (&target.kind, &ann) {
                    let sv = self.emit_sugared(value, None)?;
                    if !matches!(sv, Sugared::Simple(_)) {
                        return self.set_sugared(&target.range, n, sv);
                    }
                    return self.assign_value(target, sv, None, &target.range);
                }
                let v = self.emit_expr(value, ann.as_ref())?;
                self.assign_value(target, Sugared::Simple(v), ann, &target.range)
            }
            ExprKind::Tuple(_) | ExprKind::List(_) => {
                let sv = self.emit_sugared(value, None)?;
                self.assign_value(target, sv, None, &target.range)
            }
            _ => self.err(
                &target.range,
                "unexpected expression on left-hand side of assignment",
            ),
        }
    }

    /// Assigns a (possibly sugared) value to a target expression.
    pub fn assign_value(
        &mut self,
        target: &Expr,
        sv: Sugared,
        ann: Option<TypeRef>,
        range: &SourceRange,
    ) -> CResult<()> {
        match &target.kind {
            ExprKind::Name(n) => match sv {
                Sugared::Simple(v) => {
                    let v = match &ann {
                        Some(a) => super::call::try_convert(&mut self.g, a, v, true),
                        None => v,
                    };
                    self.set_var(&target.range, n, v, ann)
                }
                other => self.set_sugared(&target.range, n, other),
            },
            ExprKind::Starred(_) => self.err(
                &target.range,
                "starred unpacking is only allowed inside a tuple target",
            ),
            ExprKind::Tuple(elems) | ExprKind::List(elems) => {
                let values = self.unpack_for_assign(&sv, elems, range)?;
                for (t, v) in elems.iter().zip(values) {
                    let t = match &t.kind {
                        ExprKind::Starred(inner) => &**inner,
                        _ => t,
                    };
                    self.assign_value(t, v, None, range)?;
                }
                Ok(())
            }
            ExprKind::Attribute(obj, attr_name) => {
                let v = self.as_simple(sv, range)?;
                self.emit_set_attr(obj, &attr_name.name, v, &target.range)
            }
            ExprKind::Subscript(base, subs) => {
                let v = self.as_simple(sv, range)?;
                self.emit_subscript_assign(base, subs, v, &target.range)
            }
            _ => self.err(
                &target.range,
                "unexpected expression on left-hand side of assignment",
            ),
        }
    }

    /// Splits a value for `a, b = value` (tuples, lists of known length, sugared tuples), with
    /// starred targets collecting the middle.
    fn unpack_for_assign(
        &mut self,
        sv: &Sugared,
        targets: &[Expr],
        range: &SourceRange,
    ) -> CResult<Vec<Sugared>> {
        let starred: Vec<usize> = targets
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t.kind, ExprKind::Starred(_)))
            .map(|(i, _)| i)
            .collect();
        if starred.len() > 1 {
            return self.err(range, "Only one starred expression is allowed on the lhs");
        }
        let items: Vec<Sugared> = match sv {
            Sugared::Tuple(v) => v.clone(),
            Sugared::Simple(v) => {
                let t = self.g.value(*v).ty().clone();
                match &*t {
                    Type::Tuple(_) => super::call::tuple_elements(&mut self.g, *v)
                        .into_iter()
                        .map(Sugared::Simple)
                        .collect(),
                    Type::List(e) => {
                        if !starred.is_empty() {
                            return self.err(range, "Starred unpacking of a list is not supported");
                        }
                        let n = self.insert_node(
                            prim::ListUnpack,
                            &[*v],
                            &vec![e.clone(); targets.len()],
                        );
                        self.g
                            .node(n)
                            .outputs()
                            .iter()
                            .map(|&o| Sugared::Simple(o))
                            .collect()
                    }
                    Type::Tensor(_) => {
                        let n = targets.len() as i64;
                        let cnt = self.constant(IValue::Int(n));
                        let zero = self.constant(IValue::Int(0));
                        let l =
                            self.insert1(Symbol::aten("unbind"), &[*v, zero], Type::tensor_list());
                        let _ = cnt;
                        let node = self.insert_node(
                            prim::ListUnpack,
                            &[l],
                            &vec![Type::tensor(); targets.len()],
                        );
                        self.g
                            .node(node)
                            .outputs()
                            .iter()
                            .map(|&o| Sugared::Simple(o))
                            .collect()
                    }
                    _ => {
                        return self.err(
                            range,
                            format!("cannot unpack a value of type {}", t.annotation_str()),
                        )
                    }
                }
            }
            _ => return self.err(range, "cannot unpack this value"),
        };
        if starred.is_empty() {
            if items.len() != targets.len() {
                let (need, found) = (targets.len(), items.len());
                return self.err(
                    range,
                    if found > need {
                        format!("too many values to unpack: need {need} but found {found}")
                    } else {
                        format!("not enough values to unpack: need {need} but found {found}")
                    },
                );
            }
            return Ok(items);
        }
        let s = starred[0];
        let after = targets.len() - s - 1;
        if items.len() < targets.len() - 1 {
            return self.err(
                range,
                format!(
                    "not enough values to unpack: need at least {} but found {}",
                    targets.len() - 1,
                    items.len()
                ),
            );
        }
        let mut out: Vec<Sugared> = items[..s].to_vec();
        let middle: Vec<ValueId> = items[s..items.len() - after]
            .iter()
            .map(|x| self.as_simple(x.clone(), range))
            .collect::<CResult<_>>()?;
        // A starred target collects a tuple in TorchScript.
        let tup = self.g.insert_tuple(&middle);
        out.push(Sugared::Simple(tup));
        out.extend_from_slice(&items[items.len() - after..]);
        // Unwrap the starred targets for the caller.
        Ok(out)
    }

    fn emit_aug_assign(&mut self, s: &Stmt, target: &Expr, op: BinOp, value: &Expr) -> CResult<()> {
        match &target.kind {
            ExprKind::Name(name) => {
                let lhs = self.emit_expr(target, None)?;
                let lt = self.g.value(lhs).ty().clone();
                let in_place = lt.is_tensor() || matches!(*lt, Type::List(_));
                let rhs = self.emit_expr(
                    value,
                    if matches!(*lt, Type::List(_)) {
                        Some(&lt)
                    } else {
                        None
                    },
                )?;
                let out = if let Some(class) = lt.class_type().cloned() {
                    let magic = format!("__i{}__", magic_suffix(op));
                    let plain = format!("__{}__", magic_suffix(op));
                    let m = if class.find_method(&magic).is_some()
                        || self.class_has_pending(&class, &magic)
                    {
                        magic
                    } else {
                        plain
                    };
                    self.call_method_value(
                        lhs,
                        &class,
                        &m,
                        vec![NamedValue::pos(rhs)],
                        vec![],
                        &s.range,
                    )?
                } else {
                    let kind = aug_op(op, in_place);
                    self.emit_builtin_call(
                        &s.range,
                        kind,
                        vec![NamedValue::pos(lhs), NamedValue::pos(rhs)],
                        vec![],
                        None,
                    )?
                };
                self.set_var(&target.range, name, out, None)
            }
            ExprKind::Attribute(obj, a) => {
                let cur = self.emit_expr(target, None)?;
                let lt = self.g.value(cur).ty().clone();
                let in_place = lt.is_tensor() || matches!(*lt, Type::List(_));
                let rhs = self.emit_expr(value, None)?;
                let out = self.emit_builtin_call(
                    &s.range,
                    aug_op(op, in_place),
                    vec![NamedValue::pos(cur), NamedValue::pos(rhs)],
                    vec![],
                    None,
                )?;
                self.emit_set_attr(obj, &a.name, out, &target.range)
            }
            ExprKind::Subscript(base, subs) => {
                let b = self.emit_expr(base, None)?;
                let bt = self.g.value(b).ty().clone();
                if bt.is_tensor() {
                    // x[i] += v  →  x[i].add_(v) on the view.
                    let view = self.emit_subscript_value(b, subs, &target.range)?;
                    let rhs = self.emit_expr(value, None)?;
                    self.emit_builtin_call(
                        &s.range,
                        aug_op(op, true),
                        vec![NamedValue::pos(view), NamedValue::pos(rhs)],
                        vec![],
                        None,
                    )?;
                    Ok(())
                } else {
                    let cur = self.emit_subscript_value(b, subs, &target.range)?;
                    let rhs = self.emit_expr(value, None)?;
                    let out = self.emit_builtin_call(
                        &s.range,
                        aug_op(op, false),
                        vec![NamedValue::pos(cur), NamedValue::pos(rhs)],
                        vec![],
                        None,
                    )?;
                    self.emit_subscript_assign_value(b, subs, out, &target.range)
                }
            }
            _ => self.err(
                &target.range,
                "unexpected expression on left-hand side of augmented assignment",
            ),
        }
    }

    fn emit_delete(&mut self, t: &Expr) -> CResult<()> {
        match &t.kind {
            ExprKind::Name(n) => {
                let known = self.env.find_type(n).is_some() || self.env.find_sugared(n).is_some();
                if !known {
                    return self.err(&t.range, format!("undefined value {n}"));
                }
                for f in self.env.frames.iter_mut().rev() {
                    if f.types.remove(n).is_some() || f.sugared.remove(n).is_some() {
                        break;
                    }
                }
                Ok(())
            }
            ExprKind::Subscript(_, subs)
                if subs.first().is_some_and(|s| matches!(s.kind, ExprKind::Slice { .. })) =>
            {
                self.err(&t.range, "del statements only support deletion at a single index, slicing is not supported (see https://github.com/pytorch/pytorch/issues/31430)")
            }
            ExprKind::Subscript(base, subs) if subs.len() == 1 => {
                let b = self.emit_expr(base, None)?;
                let i = self.emit_expr(&subs[0], None)?;
                self.emit_builtin_call(
                    &t.range,
                    Symbol::aten("Delete"),
                    vec![NamedValue::pos(b), NamedValue::pos(i)],
                    vec![],
                    None,
                )?;
                Ok(())
            }
            // `del x[0], x[1]` deletes each target in turn.
            ExprKind::Tuple(items) => {
                for i in items {
                    self.emit_delete(i)?;
                }
                Ok(())
            }
            _ => self.err(&t.range, "del only supports names and single subscripts"),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Raise / assert

    fn emit_raise(&mut self, range: &SourceRange, e: Option<&Expr>) -> CResult<()> {
        let Some(e) = e else {
            return self.err(range, "re-raising (a bare raise) is not supported");
        };
        let (msg, cls) = self.exception_message(e)?;
        self.insert_node(prim::RaiseException, &[msg, cls], &[]);
        let b = self.cur_block();
        self.exit_blocks.insert(b);
        Ok(())
    }

    /// The message and qualified class name of `raise <e>`.
    fn exception_message(&mut self, e: &Expr) -> CResult<(ValueId, ValueId)> {
        let (callee, args): (&Expr, &[Expr]) = match &e.kind {
            ExprKind::Call { func, args, .. } => (func, args.as_slice()),
            _ => (e, &[]),
        };
        let name = callee.dotted_name().ok_or_else(|| {
            CompileError::new("exceptions must derive from BaseException", &e.range)
        })?;
        let base = name.rsplit('.').next().unwrap_or(&name).to_string();
        let known = matches!(
            base.as_str(),
            "Exception"
                | "RuntimeError"
                | "ValueError"
                | "TypeError"
                | "IndexError"
                | "KeyError"
                | "AssertionError"
                | "ZeroDivisionError"
                | "NotImplementedError"
                | "StopIteration"
                | "AttributeError"
                | "ArithmeticError"
                | "OverflowError"
                | "LookupError"
                | "UserWarning"
                | "Warning"
                | "OSError"
                | "ImportError"
                | "NameError"
                | "MemoryError"
        );
        if !known {
            return self.err(&e.range, "exceptions must derive from BaseException");
        }
        let (prefix, cls) = if base == "AssertionError" {
            ("AssertionError: ".to_string(), IValue::None)
        } else {
            (String::new(), IValue::str(format!("builtins.{base}")))
        };
        // The message is the argument itself, as PyTorch emits it (`""` without one); an
        // assertion's message gets its class as a prefix.
        let mut msg = None;
        if prefix.is_empty() {
            if let Some(a) = args.first() {
                let v = self.emit_expr(a, None)?;
                msg = Some(if matches!(**self.g.value(v).ty(), Type::Str) {
                    v
                } else {
                    self.emit_builtin_call(
                        &a.range,
                        Symbol::aten("str"),
                        vec![NamedValue::pos(v)],
                        vec![],
                        None,
                    )?
                });
            }
        }
        let rest = if msg.is_some() { &args[1..] } else { args };
        let mut msg = match msg {
            Some(m) => m,
            None => self.constant(IValue::str(prefix)),
        };
        for a in rest {
            let mut v = self.emit_expr(a, None)?;
            if !matches!(**self.g.value(v).ty(), Type::Str) {
                v = self.emit_builtin_call(
                    &a.range,
                    Symbol::aten("str"),
                    vec![NamedValue::pos(v)],
                    vec![],
                    None,
                )?;
            }
            msg = self.emit_builtin_call(
                &a.range,
                Symbol::aten("add"),
                vec![NamedValue::pos(msg), NamedValue::pos(v)],
                vec![],
                None,
            )?;
        }
        let cls = self.constant(cls);
        Ok((msg, cls))
    }

    fn emit_assert(&mut self, range: &SourceRange, test: &Expr, msg: Option<&Expr>) -> CResult<()> {
        let cond = self.emit_cond(test)?;
        let msg_expr = msg.cloned().unwrap_or(Expr {
            kind: ExprKind::Str(String::new()),
            range: range.clone(),
        });
        let raise = Stmt {
            kind: StmtKind::Raise(Some(Expr {
                range: range.clone(),
                kind: ExprKind::Call {
                    func: Box::new(Expr {
                        kind: ExprKind::Name("AssertionError".into()),
                        range: range.clone(),
                    }),
                    args: vec![msg_expr],
                    kwargs: vec![],
                },
            })),
            range: range.clone(),
        };
        self.emit_if_else_blocks(range, cond, &[], std::slice::from_ref(&raise))
    }

    // -----------------------------------------------------------------------------------------
    // If

    fn emit_if(
        &mut self,
        range: &SourceRange,
        cond: &Expr,
        body: &[Stmt],
        orelse: &[Stmt],
    ) -> CResult<()> {
        let c = self.emit_cond(cond)?;
        if let Some(taken) = c.static_if {
            if taken {
                self.insert_refinements(range, &c.refinements.on_true)?;
                return self.emit_statements(body);
            }
            return self.emit_statements(orelse);
        }
        self.emit_if_else_blocks(range, c, body, orelse)
    }

    /// Inserts `prim::unchecked_cast` rebinding of refined variables.
    pub fn insert_refinements(
        &mut self,
        range: &SourceRange,
        refs: &[(String, TypeRef)],
    ) -> CResult<()> {
        for (name, ty) in refs {
            let Sugared::Simple(v) = self.get_var(range, name)? else {
                continue;
            };
            // No source range (as PyTorch's `insertUncheckedCast`): see `insert_node`.
            let c = self.insert1(prim::unchecked_cast, &[v], ty.clone());
            self.set_var(range, name, c, None)?;
        }
        Ok(())
    }

    fn emit_branch(
        &mut self,
        b: BlockId,
        stmts: &[Stmt],
        refs: &[(String, TypeRef)],
        range: &SourceRange,
    ) -> CResult<super::environment::Frame> {
        let saved = self.g.insert_point();
        self.push_frame(b);
        let r = (|| {
            self.insert_refinements(range, refs)?;
            self.emit_statements(stmts)
        })();
        let frame = self.pop_frame();
        self.g.set_insert_point_before(saved);
        r.map(|_| frame)
    }

    /// Emits `prim::If` with both branches and records the variables they define.
    pub fn emit_if_else_blocks(
        &mut self,
        range: &SourceRange,
        c: CondValue,
        body: &[Stmt],
        orelse: &[Stmt],
    ) -> CResult<()> {
        let n = self.insert_node(prim::If, &[c.value], &[]);
        let tb = self.g.add_block(n);
        let fb = self.g.add_block(n);
        let save_true = self.emit_branch(tb, body, &c.refinements.on_true, range)?;
        let save_false = self.emit_branch(fb, orelse, &c.refinements.on_false, range)?;
        self.cur_range = Some(range.clone());
        let true_exits = self.exit_blocks.contains(&tb);
        let false_exits = self.exit_blocks.contains(&fb);
        if true_exits && false_exits {
            let b = self.cur_block();
            self.exit_blocks.insert(b);
        }
        let mut mutated: BTreeSet<String> = BTreeSet::new();
        let defined_in_parent =
            |env: &super::environment::Environment, v: &str| env.find_type(v).is_some();
        for v in save_true.types.keys() {
            if save_false.types.contains_key(v) || defined_in_parent(&self.env, v) || false_exits {
                mutated.insert(v.clone());
            } else {
                let msg =
                    CompileError::new(format!("{v} is not defined in the false branch"), range);
                self.env.top().errors.insert(v.clone(), msg);
            }
        }
        for v in save_false.types.keys() {
            if save_true.types.contains_key(v) || defined_in_parent(&self.env, v) || true_exits {
                mutated.insert(v.clone());
            } else {
                let msg =
                    CompileError::new(format!("{v} is not defined in the true branch"), range);
                self.env.top().errors.insert(v.clone(), msg);
            }
        }
        for x in mutated {
            if true_exits && false_exits {
                continue;
            }
            let tt = save_true
                .types
                .get(&x)
                .cloned()
                .or_else(|| self.env.find_type(&x));
            let ft = save_false
                .types
                .get(&x)
                .cloned()
                .or_else(|| self.env.find_type(&x));
            let (tt, ft) = match (tt, ft) {
                (Some(a), Some(b)) => (a, b),
                (Some(a), None) => (a.clone(), a),
                (None, Some(b)) => (b.clone(), b),
                (None, None) => continue,
            };
            // A branch that exits leaves the variable uninitialized along it.
            let (tt, ft) = if true_exits {
                self.store_uninitialized(tb, &x, &ft);
                (ft.clone(), ft)
            } else if false_exits {
                self.store_uninitialized(fb, &x, &tt);
                (tt.clone(), tt)
            } else {
                (tt, ft)
            };
            let full = self.env.find_type(&x);
            let default_to_union = full
                .as_ref()
                .is_some_and(|t| matches!(**t, Type::Union(_) | Type::Optional(_) | Type::Number));
            match ts_core::unify_types(&tt, &ft, default_to_union) {
                Some(u) => {
                    self.env.top().types.insert(x.clone(), u);
                    self.env.top().errors.remove(&x);
                }
                None => {
                    let msg = format!(
                        "Type mismatch: {x} is set to type {} in the true branch and type {} in the false branch",
                        tt.annotation_str(),
                        ft.annotation_str()
                    );
                    if self.env.find_type(&x).is_some() {
                        return self.err(range, msg);
                    }
                    let shown = CompileError::new(msg, range);
                    self.env.top().errors.insert(x.clone(), shown);
                }
            }
        }
        Ok(())
    }

    fn store_uninitialized(&mut self, b: BlockId, name: &str, ty: &TypeRef) {
        let ret = self.g.return_node(b);
        let u = self.g.create(prim::Uninitialized, &[], 0);
        let uv = self.g.add_output(u, ty.clone());
        self.g.insert_before(u, ret);
        let st = self.g.create(prim::Store, &[uv], 0);
        self.g
            .set_attr(st, attr::name, AttributeValue::String(name.to_string()));
        self.g.insert_before(st, ret);
    }

    // -----------------------------------------------------------------------------------------
    // Loops

    fn emit_for(
        &mut self,
        range: &SourceRange,
        target: &Expr,
        iter: &Expr,
        body: &[Stmt],
    ) -> CResult<()> {
        // `for x in a, b:` (an unparenthesized tuple) is a list of iterables.
        if let ExprKind::Tuple(_) = iter.kind {
            if !iter.range.text().starts_with('(') {
                return self.err(range, "List of iterables is not supported currently");
            }
        }
        let sv = self.emit_sugared(iter, None)?;
        let it = self.to_iterable(sv, &iter.range)?;
        if let Iterable::Unrolled(items) = &*it {
            // Tuples (and module lists) are iterated by unrolling the body.
            for item in items.clone() {
                self.push_unrolled_scope();
                self.assign_value(target, item, None, range)?;
                self.emit_statements(body)?;
            }
            return Ok(());
        }
        self.emit_loop(range, Some(it), Some(target), None, body)
    }

    fn push_unrolled_scope(&mut self) {}

    /// PyTorch's `emitLoopCommon`: a `prim::Loop` with a body block and a temporary
    /// condition block (inlined by SSA conversion).
    fn emit_loop(
        &mut self,
        range: &SourceRange,
        iter: Option<Arc<Iterable>>,
        target: Option<&Expr>,
        cond: Option<&Expr>,
        body: &[Stmt],
    ) -> CResult<()> {
        let max_trip = match &iter {
            Some(it) => self.iterable_len(it, range)?,
            None => self.constant(IValue::Int(i64::MAX)),
        };
        let n = self.insert_node(prim::Loop, &[], &[]);
        let body_block = self.g.add_block(n);
        let cond_block = self.g.add_block(n);
        // Condition block.
        {
            let saved = self.g.insert_point();
            self.push_frame(cond_block);
            let out = match cond {
                Some(c) => {
                    let v = self.emit_expr(c, None)?;
                    self.emit_to_bool(&c.range, v)?
                }
                None => self
                    .g
                    .with_insert_point(n, |g| g.insert_constant(&IValue::Bool(true))),
            };
            self.g.add_block_output(cond_block, out);
            self.pop_frame();
            self.g.set_insert_point_before(saved);
        }
        self.g.add_input(n, max_trip);
        self.loop_depth += 1;
        let trip = self.g.add_block_input(body_block, Type::int());
        let saved = self.g.insert_point();
        self.push_frame(body_block);
        let r = (|| {
            if let (Some(it), Some(t)) = (&iter, target) {
                let elem = self.iterable_getitem(it, trip, range)?;
                self.assign_value(t, elem, None, range)?;
            }
            self.emit_statements(body)
        })();
        self.pop_frame();
        self.g.set_insert_point_before(saved);
        self.loop_depth -= 1;
        r
    }

    // -----------------------------------------------------------------------------------------
    // With

    fn emit_with(
        &mut self,
        range: &SourceRange,
        items: &[(Expr, Option<Expr>)],
        body: &[Stmt],
    ) -> CResult<()> {
        let mut entered = Vec::new();
        for (e, target) in items {
            let obj = self.emit_expr(e, None)?;
            let ot = self.g.value(obj).ty().clone();
            let Some(class) = ot.class_type().cloned() else {
                return self.err(&e.range, "With item expression must return an object");
            };
            for m in ["__enter__", "__exit__"] {
                if class.find_method(m).is_none() && !self.class_has_pending(&class, m) {
                    return self.err(&e.range, format!("object does not have {m} method"));
                }
            }
            let enter_ty = self.method_return_type(&class, "__enter__", &e.range)?;
            let enter = self.insert1(prim::Enter, &[obj], enter_ty);
            if let Some(t) = target {
                self.assign_value(t, Sugared::Simple(enter), None, range)?;
            }
            entered.push(obj);
        }
        self.emit_statements(body)?;
        for obj in entered.into_iter().rev() {
            self.insert_node(prim::Exit, &[obj], &[Type::any()]);
        }
        Ok(())
    }
}

fn magic_suffix(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::Div => "truediv",
        BinOp::FloorDiv => "floordiv",
        BinOp::Mod => "mod",
        BinOp::Pow => "pow",
        BinOp::MatMul => "matmul",
        BinOp::BitAnd => "and",
        BinOp::BitOr => "or",
        BinOp::BitXor => "xor",
        BinOp::LShift => "lshift",
        BinOp::RShift => "rshift",
    }
}

/// The operator for an augmented assignment (PyTorch's `getAugOp`).
fn aug_op(op: BinOp, in_place: bool) -> Symbol {
    let name = match (op, in_place) {
        (BinOp::Add, true) => "add_",
        (BinOp::Add, false) => "add",
        (BinOp::Sub, true) => "sub_",
        (BinOp::Sub, false) => "sub",
        (BinOp::Div, true) => "div_",
        (BinOp::Div, false) => "div",
        (BinOp::Mul, true) => "mul_",
        (BinOp::Mul, false) => "mul",
        (BinOp::Mod, true) => "fmod_",
        (BinOp::Mod, false) => "fmod",
        (BinOp::BitOr, true) => "bitwise_or",
        (BinOp::BitOr, false) => "__or__",
        (BinOp::BitAnd, true) => "bitwise_and",
        (BinOp::BitAnd, false) => "__and__",
        (BinOp::BitXor, true) => "bitwise_xor",
        (BinOp::BitXor, false) => "__xor__",
        (BinOp::LShift, _) => "__lshift__",
        (BinOp::RShift, true) => "__irshift__",
        (BinOp::RShift, false) => "__rshift__",
        (BinOp::Pow, _) => "pow",
        (BinOp::FloorDiv, _) => "floordiv",
        (BinOp::MatMul, _) => "matmul",
    };
    Symbol::aten(name)
}
