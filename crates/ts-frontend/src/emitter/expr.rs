//! Expressions: literals, names, operators (through the magic-method protocol), comparisons,
//! short-circuit logic and conditional expressions (with refinement), calls, attributes,
//! subscripts and slicing, list/tuple/dict literals and comprehensions, f-strings.

use std::sync::Arc;

use ts_core::{attr, prim, IValue, SourceRange, Symbol, Type, TypeRef};
use ts_ir::{AttributeValue, ValueId};

use super::call::{tuple_elements, NamedValue};
use super::function::FunctionEmitter;
use super::statements::{CondValue, Refinements};
use super::sugared::{Special, Sugared};
use crate::ast::{BinOp, CmpOp, Expr, ExprKind, FStringPart, UnaryOp};
use crate::error::{CResult, CompileError};

/// Chains with this many links below an expression are emitted bottom-up (see
/// `FunctionEmitter::emit_sugared`); shorter ones recurse as usual.
const SPINE_STEP: usize = 64;

/// The operand whose emission a chain link starts with, through `emit_sugared`: the left
/// operand of a binary operator, the callee of a call, the object of an attribute or subscript.
/// (`and`/`or` chains go through `emit_cond`, which walks them itself.)
fn emit_spine_child(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Binary(_, a, _)
        | ExprKind::Attribute(a, _)
        | ExprKind::Subscript(a, _)
        | ExprKind::Call { func: a, .. } => Some(a),
        _ => None,
    }
}

/// The number of links below `e` along [`emit_spine_child`], counting to [`SPINE_STEP`].
fn emit_spine_len(e: &Expr) -> usize {
    let mut n = 0;
    let mut cur = e;
    while let Some(c) = emit_spine_child(cur) {
        n += 1;
        if n >= SPINE_STEP {
            break;
        }
        cur = c;
    }
    n
}

/// `(kind, magic method)` of a binary operator.
fn binop_kind(op: BinOp) -> (&'static str, &'static str) {
    match op {
        BinOp::Add => ("add", "__add__"),
        BinOp::Sub => ("sub", "__sub__"),
        BinOp::Mul => ("mul", "__mul__"),
        BinOp::Div => ("div", "__truediv__"),
        BinOp::FloorDiv => ("floordiv", "__floordiv__"),
        BinOp::Mod => ("remainder", "__mod__"),
        BinOp::Pow => ("pow", "__pow__"),
        BinOp::MatMul => ("matmul", "__matmul__"),
        BinOp::BitAnd => ("__and__", "__and__"),
        BinOp::BitOr => ("__or__", "__or__"),
        BinOp::BitXor => ("__xor__", "__xor__"),
        BinOp::LShift => ("__lshift__", "__lshift__"),
        BinOp::RShift => ("__rshift__", "__rshift__"),
    }
}

fn cmp_kind(op: CmpOp) -> (&'static str, &'static str) {
    match op {
        CmpOp::Eq => ("eq", "__eq__"),
        CmpOp::Ne => ("ne", "__ne__"),
        CmpOp::Lt => ("lt", "__lt__"),
        CmpOp::Le => ("le", "__le__"),
        CmpOp::Gt => ("gt", "__gt__"),
        CmpOp::Ge => ("ge", "__ge__"),
        CmpOp::Is => ("__is__", ""),
        CmpOp::IsNot => ("__isnot__", ""),
        CmpOp::In | CmpOp::NotIn => ("__contains__", "__contains__"),
    }
}

impl FunctionEmitter<'_> {
    /// Emits an expression that must be a first-class value.
    pub fn emit_expr(&mut self, e: &Expr, hint: Option<&TypeRef>) -> CResult<ValueId> {
        let sv = self.emit_sugared(e, hint)?;
        self.as_simple(sv, &e.range)
    }

    /// The graph value of a sugared value, or an error when it is not first-class.
    pub fn as_simple(&mut self, sv: Sugared, range: &SourceRange) -> CResult<ValueId> {
        match sv {
            Sugared::Simple(v) => Ok(v),
            Sugared::Tuple(items) => {
                let vs = items
                    .into_iter()
                    .map(|i| self.as_simple(i, range))
                    .collect::<CResult<Vec<_>>>()?;
                Ok(self.g.insert_tuple(&vs))
            }
            Sugared::Function(f) => {
                let n = self.insert_node(prim::Constant, &[], &[f.function_type()]);
                self.g.set_source_range(n, None);
                self.g.set_attr(
                    n,
                    attr::name,
                    // PyTorch shows the function's own name, not its qualified one.
                    AttributeValue::String(
                        f.qualified_name()
                            .rsplit('.')
                            .next()
                            .unwrap_or_default()
                            .to_string(),
                    ),
                );
                Ok(self.g.node(n).output(0))
            }
            Sugared::Module(m) => self.err(
                range,
                format!("Module '{m}' is not a value; did you forget to call a function?"),
            ),
            Sugared::Builtin { name, .. } => self.err(
                range,
                format!("builtin function {name} is not a first-class value"),
            ),
            Sugared::Class(c) => self.err(range, format!("class '{}' is not a value", c.name)),
            Sugared::TypeName(t) => self.err(
                range,
                format!("the type '{}' is not a value", t.annotation_str()),
            ),
            _ => self.err(range, "this expression is not a first-class value"),
        }
    }

    /// Emits an expression, keeping sugared results.
    ///
    /// A long left-associative chain (`x + 1 + 1 ...`, `x.add(1).add(1) ...`, `x[0][0] ...`)
    /// would recurse once per link down its first operand. Past [`SPINE_STEP`] links, the
    /// chain's links are emitted bottom-up instead, each parked in `spine_values` where its
    /// parent's emission picks it up at once: the same nodes in the same order, with bounded
    /// recursion.
    pub fn emit_sugared(&mut self, e: &Expr, hint: Option<&TypeRef>) -> CResult<Sugared> {
        if let Some(done) = self.spine_values.remove(&(e as *const Expr)) {
            return Ok(done);
        }
        if emit_spine_len(e) >= SPINE_STEP {
            return self.emit_long_chain(e, hint);
        }
        let saved = self.cur_range.replace(e.range.clone());
        let r = self.emit_sugared_inner(e, hint);
        self.cur_range = saved;
        r
    }

    fn emit_long_chain(&mut self, e: &Expr, hint: Option<&TypeRef>) -> CResult<Sugared> {
        let mut links = vec![e];
        while let Some(c) = emit_spine_child(links[links.len() - 1]) {
            links.push(c);
        }
        let mut parked = Vec::with_capacity(links.len());
        let mut result = Ok(());
        for link in links[1..].iter().rev() {
            let saved = self.cur_range.replace(link.range.clone());
            let r = self.emit_sugared_inner(link, None);
            self.cur_range = saved;
            match r {
                Ok(v) => {
                    let key = *link as *const Expr;
                    self.spine_values.insert(key, v);
                    parked.push(key);
                }
                Err(err) => {
                    result = Err(err);
                    break;
                }
            }
        }
        let r = result.and_then(|()| {
            let saved = self.cur_range.replace(e.range.clone());
            let r = self.emit_sugared_inner(e, hint);
            self.cur_range = saved;
            r
        });
        // A link its parent did not consume (an error, or a form that does not emit its
        // operand) must not be found by a later emission of the same expression.
        for key in parked {
            self.spine_values.remove(&key);
        }
        r
    }

    fn emit_sugared_inner(&mut self, e: &Expr, hint: Option<&TypeRef>) -> CResult<Sugared> {
        let simple = |v| Ok(Sugared::Simple(v));
        match &e.kind {
            ExprKind::Name(n) => self.get_var(&e.range, n),
            ExprKind::Int(i) => simple(self.constant(IValue::Int(*i))),
            ExprKind::Float(f) => simple(self.constant(IValue::Double(*f))),
            ExprKind::Imag(f) => simple(self.constant(IValue::complex(0.0, *f))),
            ExprKind::Str(s) => simple(self.constant(IValue::str(s.clone()))),
            ExprKind::True => simple(self.constant(IValue::Bool(true))),
            ExprKind::False => simple(self.constant(IValue::Bool(false))),
            ExprKind::None => simple(self.constant(IValue::None)),
            ExprKind::Ellipsis => self.err(&e.range, "'...' can only be used in a subscript"),
            ExprKind::FString(parts) => {
                let mut fmt = String::new();
                let mut args = Vec::new();
                for p in parts {
                    match p {
                        FStringPart::Lit(s) => {
                            fmt.push_str(&s.replace('{', "{{").replace('}', "}}"))
                        }
                        FStringPart::Expr(x) => {
                            fmt.push_str("{}");
                            args.push(self.emit_expr(x, None)?);
                        }
                    }
                }
                let f = self.constant(IValue::str(fmt.replace("{{", "{").replace("}}", "}")));
                let mut nv = vec![NamedValue::pos(f)];
                nv.extend(args.into_iter().map(NamedValue::pos));
                simple(self.emit_builtin_call(
                    &e.range,
                    Symbol::aten("format"),
                    nv,
                    vec![],
                    None,
                )?)
            }
            ExprKind::Unary(op, x) => match op {
                UnaryOp::Neg => {
                    if let ExprKind::Int(i) = x.kind {
                        return simple(self.constant(IValue::Int(i.wrapping_neg())));
                    }
                    if let ExprKind::Float(f) = x.kind {
                        return simple(self.constant(IValue::Double(-f)));
                    }
                    let v = self.emit_expr(x, None)?;
                    simple(self.magic_or_builtin(
                        &e.range,
                        "__neg__",
                        Symbol::aten("neg"),
                        vec![NamedValue::pos(v)],
                    )?)
                }
                UnaryOp::Pos => {
                    let v = self.emit_expr(x, None)?;
                    simple(v)
                }
                UnaryOp::Invert => {
                    let v = self.emit_expr(x, None)?;
                    simple(self.magic_or_builtin(
                        &e.range,
                        "__invert__",
                        Symbol::aten("bitwise_not"),
                        vec![NamedValue::pos(v)],
                    )?)
                }
                UnaryOp::Not => {
                    let c = self.emit_cond(e)?;
                    simple(c.value)
                }
            },
            ExprKind::Binary(op, a, b) => {
                let va = self.emit_expr(a, None)?;
                let vb = self.emit_expr(b, None)?;
                let (kind, magic) = binop_kind(*op);
                // Tuple concatenation.
                if *op == BinOp::Add {
                    let (ta, tb) = (self.g.value(va).ty().clone(), self.g.value(vb).ty().clone());
                    if matches!(*ta, Type::Tuple(_)) && matches!(*tb, Type::Tuple(_)) {
                        let mut xs = tuple_elements(&mut self.g, va);
                        xs.extend(tuple_elements(&mut self.g, vb));
                        return simple(self.g.insert_tuple(&xs));
                    }
                }
                // `"%d items" % n`: printf-style formatting of a str.
                if *op == BinOp::Mod && matches!(**self.g.value(va).ty(), Type::Str) {
                    return simple(self.insert1(
                        Symbol::aten("percentFormat"),
                        &[va, vb],
                        Type::string(),
                    ));
                }
                simple(self.magic_or_builtin(
                    &e.range,
                    magic,
                    Symbol::aten(kind),
                    vec![NamedValue::pos(va), NamedValue::pos(vb)],
                )?)
            }
            ExprKind::Compare(first, rest) if rest.len() == 1 => {
                let (op, rhs) = &rest[0];
                simple(self.emit_compare(&e.range, first, *op, rhs)?.value)
            }
            ExprKind::Compare(..) | ExprKind::BoolOp(..) => {
                let c = self.emit_cond(e)?;
                simple(c.value)
            }
            ExprKind::Ternary { cond, then, orelse } => {
                let c = self.emit_cond(cond)?;
                if let Some(taken) = c.static_if {
                    return self.emit_sugared(if taken { then } else { orelse }, hint);
                }
                let hint = hint.cloned();
                simple(self.emit_if_expr(
                    &e.range,
                    &c,
                    |s| s.emit_expr(then, hint.as_ref()),
                    |s| s.emit_expr(orelse, hint.as_ref()),
                )?)
            }
            ExprKind::Call { func, args, kwargs } => self.emit_call(e, func, args, kwargs, hint),
            ExprKind::Attribute(base, name) => {
                let b = self.emit_sugared(base, None)?;
                self.emit_attr(b, &name.name, &e.range)
            }
            ExprKind::Subscript(base, subs) => {
                let b = self.emit_sugared(base, None)?;
                self.emit_subscript(b, subs, &e.range, hint)
            }
            ExprKind::Slice { .. } => {
                self.err(&e.range, "slices are only allowed inside subscripts")
            }
            ExprKind::Starred(_) => self.err(
                &e.range,
                "starred expressions are only allowed in calls and assignment targets",
            ),
            ExprKind::Tuple(items) => {
                let hints: Vec<Option<TypeRef>> = match hint.map(|h| &**h) {
                    Some(Type::Tuple(t)) if t.elements.len() == items.len() => {
                        t.elements.iter().cloned().map(Some).collect()
                    }
                    _ => vec![None; items.len()],
                };
                let mut vals = Vec::new();
                for (it, h) in items.iter().zip(hints) {
                    if let ExprKind::Starred(inner) = &it.kind {
                        let v = self.emit_expr(inner, None)?;
                        if !matches!(**self.g.value(v).ty(), Type::Tuple(_)) {
                            return self.err(
                                &it.range,
                                "Starred expressions can only be used with tuple types",
                            );
                        }
                        vals.extend(tuple_elements(&mut self.g, v));
                        continue;
                    }
                    let sv = self.emit_sugared(it, h.as_ref())?;
                    match sv {
                        Sugared::Simple(v) => vals.push(v),
                        other => {
                            if items.iter().all(|_| true) && vals.is_empty() && items.len() == 1 {
                                return Ok(Sugared::Tuple(vec![other]));
                            }
                            vals.push(self.as_simple(other, &it.range)?)
                        }
                    }
                }
                simple(self.g.insert_tuple(&vals))
            }
            ExprKind::List(items) => simple(self.emit_list_literal(e, items, hint)?),
            ExprKind::Dict(pairs) => simple(self.emit_dict_literal(e, pairs, hint)?),
            ExprKind::ListComp {
                elt,
                target,
                iter,
                cond,
            } => simple(self.emit_list_comp(e, elt, target, iter, cond.as_deref(), hint)?),
            ExprKind::DictComp {
                key,
                value,
                target,
                iter,
                cond,
            } => simple(self.emit_dict_comp(e, key, value, target, iter, cond.as_deref(), hint)?),
        }
    }

    /// Calls `obj.magic(args[1..])` for class instances defining it, else the builtin.
    pub fn magic_or_builtin(
        &mut self,
        range: &SourceRange,
        magic: &str,
        builtin: Symbol,
        args: Vec<NamedValue>,
    ) -> CResult<ValueId> {
        if let Some(first) = args.first() {
            if let Some(class) = self.g.value(first.value).ty().class_type().cloned() {
                if !magic.is_empty()
                    && (class.find_method(magic).is_some() || self.class_has_pending(&class, magic))
                {
                    let this = first.value;
                    return self.call_method_value(
                        this,
                        &class,
                        magic,
                        args[1..].to_vec(),
                        vec![],
                        range,
                    );
                }
            }
        }
        self.emit_builtin_call(range, builtin, args, vec![], None)
    }

    /// Converts a value to `bool` for a condition (lists and strings by length, as Python).
    pub fn emit_to_bool(&mut self, range: &SourceRange, v: ValueId) -> CResult<ValueId> {
        let t = self.g.value(v).ty().clone();
        if t.is_bool() {
            return Ok(v);
        }
        if matches!(*t, Type::List(_) | Type::Str | Type::Dict(..)) {
            let len = self.emit_builtin_call(
                range,
                Symbol::aten("len"),
                vec![NamedValue::pos(v)],
                vec![],
                None,
            )?;
            let zero = self.constant(IValue::Int(0));
            return self.emit_builtin_call(
                range,
                Symbol::aten("gt"),
                vec![NamedValue::pos(len), NamedValue::pos(zero)],
                vec![],
                None,
            );
        }
        if let Some(class) = t.class_type().cloned() {
            if class.find_method("__bool__").is_some() || self.class_has_pending(&class, "__bool__")
            {
                return self.call_method_value(v, &class, "__bool__", vec![], vec![], range);
            }
            if class.find_method("__len__").is_some() || self.class_has_pending(&class, "__len__") {
                let len = self.call_method_value(v, &class, "__len__", vec![], vec![], range)?;
                let zero = self.constant(IValue::Int(0));
                return self.emit_builtin_call(
                    range,
                    Symbol::aten("gt"),
                    vec![NamedValue::pos(len), NamedValue::pos(zero)],
                    vec![],
                    None,
                );
            }
        }
        let out = self
            .emit_builtin_call(
                range,
                Symbol::aten("Bool"),
                vec![NamedValue::pos(v)],
                vec![],
                None,
            )
            .map_err(|_| {
                CompileError::new(
                    format!(
                        "Could not cast value of type {} to bool",
                        t.annotation_str()
                    ),
                    range,
                )
            })?;
        Ok(out)
    }

    /// Emits a condition with refinements and static knowledge.
    pub fn emit_cond(&mut self, e: &Expr) -> CResult<CondValue> {
        match &e.kind {
            ExprKind::Unary(UnaryOp::Not, x) => {
                let c = self.emit_cond(x)?;
                let v = self.emit_builtin_call(
                    &e.range,
                    Symbol::aten("__not__"),
                    vec![NamedValue::pos(c.value)],
                    vec![],
                    None,
                )?;
                Ok(CondValue {
                    value: v,
                    refinements: c.refinements.not(),
                    static_if: c.static_if.map(|b| !b),
                })
            }
            ExprKind::BoolOp(..) => {
                // `a and b or c ...` nests along its left operand: walk the chain, emit the
                // innermost operand, then each short-circuit on the result so far.
                let mut chain = vec![e];
                while let ExprKind::BoolOp(_, a, _) = &chain[chain.len() - 1].kind {
                    chain.push(a);
                }
                let innermost = chain.pop().expect("the chain starts with e");
                let mut acc = self.emit_cond(innermost)?;
                for link in chain.into_iter().rev() {
                    let ExprKind::BoolOp(is_and, _, b) = &link.kind else {
                        continue;
                    };
                    acc =
                        self.emit_short_circuit(&link.range, acc, |s| s.emit_cond(b), !*is_and)?;
                }
                Ok(acc)
            }
            ExprKind::Compare(first, rest) => {
                // `a < b < c` is `(a < b) and (b < c)` (the middle operand is evaluated twice).
                let mut acc: Option<CondValue> = None;
                let mut lhs: &Expr = first;
                for (op, rhs) in rest {
                    let src = &e.range.source;
                    let part = if rest.len() == 1 {
                        e.range.clone()
                    } else {
                        SourceRange::new(src.clone(), lhs.range.start, rhs.range.end)
                    };
                    acc = Some(match acc {
                        None => self.emit_single_compare(&part, lhs, *op, rhs)?,
                        Some(prev) => {
                            let whole =
                                SourceRange::new(src.clone(), first.range.start, rhs.range.end);
                            self.emit_short_circuit(
                                &whole,
                                prev,
                                |s| s.emit_single_compare(&part, lhs, *op, rhs),
                                false,
                            )?
                        }
                    });
                    lhs = rhs;
                }
                match acc {
                    Some(c) => Ok(c),
                    None => self.err(&e.range, "a comparison without operators"),
                }
            }
            ExprKind::Call { func, args, .. }
                if matches!(func.dotted_name().as_deref(), Some("isinstance"))
                    && args.len() == 2 =>
            {
                self.emit_isinstance(&e.range, &args[0], &args[1])
            }
            ExprKind::Call { func, args, .. }
                if matches!(func.dotted_name().as_deref(), Some("hasattr")) && args.len() == 2 =>
            {
                let obj = self.emit_expr(&args[0], None)?;
                let ExprKind::Str(name) = &args[1].kind else {
                    return self.err(
                        &args[1].range,
                        "hasattr's second argument must be a string literal",
                    );
                };
                let t = self.g.value(obj).ty().clone();
                let Some(c) = t.class_type() else {
                    return self.err(
                        &e.range,
                        format!(
                            "hasattr's first argument must be an object or module, got {}",
                            t.annotation_str()
                        ),
                    );
                };
                let has = c.attribute_index(name).is_some()
                    || c.find_method(name).is_some()
                    || self.class_has_pending(c, name);
                let v = self.constant(IValue::Bool(has));
                Ok(CondValue {
                    value: v,
                    refinements: Refinements::default(),
                    static_if: Some(has),
                })
            }
            ExprKind::Call { func, .. }
                if matches!(
                    func.dotted_name().as_deref(),
                    Some("torch.jit.is_scripting") | Some("torch._C._get_tracing_state")
                ) =>
            {
                let b = func.dotted_name().as_deref() == Some("torch.jit.is_scripting");
                let v = self.constant(IValue::Bool(b));
                Ok(CondValue {
                    value: v,
                    refinements: Refinements::default(),
                    static_if: Some(b),
                })
            }
            _ => {
                let v = self.emit_expr(e, None)?;
                let b = self.emit_to_bool(&e.range, v)?;
                // Metacompile on boolean literals and constants (PyTorch's `emitCondExpr`):
                // only the taken branch of `if False:` is emitted and unified.
                let static_if = match self.g.to_ivalue(b) {
                    Some(IValue::Bool(x)) => Some(x),
                    _ => None,
                };
                Ok(CondValue {
                    value: b,
                    refinements: Refinements::default(),
                    static_if,
                })
            }
        }
    }

    /// One comparison as a condition (converted to `bool` when an overload returns another
    /// type).
    fn emit_single_compare(
        &mut self,
        range: &SourceRange,
        a: &Expr,
        op: CmpOp,
        b: &Expr,
    ) -> CResult<CondValue> {
        let mut c = self.emit_compare(range, a, op, b)?;
        if !self.g.value(c.value).ty().is_bool() {
            c.value = self.emit_to_bool(range, c.value)?;
        }
        Ok(c)
    }

    fn emit_compare(
        &mut self,
        range: &SourceRange,
        a: &Expr,
        op: CmpOp,
        b: &Expr,
    ) -> CResult<CondValue> {
        let va = self.emit_expr(a, None)?;
        let vb = self.emit_expr(b, None)?;
        if matches!(op, CmpOp::Is | CmpOp::IsNot) {
            let is = op == CmpOp::Is;
            let (ta, tb) = (self.g.value(va).ty().clone(), self.g.value(vb).ty().clone());
            let (na, nb) = (none_status(&ta), none_status(&tb));
            if na == NoneStatus::Always && nb == NoneStatus::Always {
                let v = self.constant(IValue::Bool(is));
                return Ok(CondValue {
                    value: v,
                    refinements: Refinements::default(),
                    static_if: Some(is),
                });
            }
            if (na == NoneStatus::Always && nb == NoneStatus::Never)
                || (na == NoneStatus::Never && nb == NoneStatus::Always)
            {
                let v = self.constant(IValue::Bool(!is));
                return Ok(CondValue {
                    value: v,
                    refinements: Refinements::default(),
                    static_if: Some(!is),
                });
            }
            let v = self.emit_builtin_call(
                range,
                Symbol::aten(if is { "__is__" } else { "__isnot__" }),
                vec![NamedValue::pos(va), NamedValue::pos(vb)],
                vec![],
                None,
            )?;
            // `x is None` refines an Optional variable.
            let mut refs = Refinements::default();
            let refine =
                |name: &ExprKind, t: &TypeRef, other: &TypeRef| -> Option<(String, TypeRef)> {
                    let ExprKind::Name(n) = name else { return None };
                    if !other.is_none_type() {
                        return None;
                    }
                    match &**t {
                        Type::Optional(inner) => Some((n.clone(), inner.clone())),
                        Type::Union(ms) => {
                            let rest: Vec<TypeRef> =
                                ms.iter().filter(|m| !m.is_none_type()).cloned().collect();
                            Some((n.clone(), Type::union(rest)))
                        }
                        _ => None,
                    }
                };
            if let Some(r) = refine(&a.kind, &ta, &tb).or_else(|| refine(&b.kind, &tb, &ta)) {
                if is {
                    refs.on_false.push(r);
                } else {
                    refs.on_true.push(r);
                }
            }
            return Ok(CondValue {
                value: v,
                refinements: refs,
                static_if: None,
            });
        }
        let (kind, magic) = cmp_kind(op);
        if matches!(op, CmpOp::In | CmpOp::NotIn) && matches!(**self.g.value(vb).ty(), Type::Str) {
            // Substring test: `s.find(sub, 0, len(s)) != -1`.
            let zero = self.constant(IValue::Int(0));
            let len = self.insert1(Symbol::aten("len"), &[vb], Type::int());
            let found = self.insert1(Symbol::aten("find"), &[vb, va, zero, len], Type::int());
            let minus1 = self.constant(IValue::Int(-1));
            let cmp = if op == CmpOp::In { "ne" } else { "eq" };
            let v = self.insert1(Symbol::aten(cmp), &[found, minus1], Type::bool());
            return Ok(CondValue {
                value: v,
                refinements: Refinements::default(),
                static_if: None,
            });
        }
        let args = if matches!(op, CmpOp::In | CmpOp::NotIn) {
            vec![NamedValue::pos(vb), NamedValue::pos(va)]
        } else {
            vec![NamedValue::pos(va), NamedValue::pos(vb)]
        };
        let mut v = self.magic_or_builtin(range, magic, Symbol::aten(kind), args)?;
        if op == CmpOp::NotIn {
            v = self.emit_builtin_call(
                range,
                Symbol::aten("__not__"),
                vec![NamedValue::pos(v)],
                vec![],
                None,
            )?;
        }
        Ok(CondValue {
            value: v,
            refinements: Refinements::default(),
            static_if: None,
        })
    }

    /// `lhs and rhs` / `lhs or rhs` for an emitted left operand; `rhs` emits the right one
    /// inside the branch that evaluates it.
    fn emit_short_circuit(
        &mut self,
        range: &SourceRange,
        lhs: CondValue,
        mut rhs: impl FnMut(&mut FunctionEmitter<'_>) -> CResult<CondValue>,
        is_or: bool,
    ) -> CResult<CondValue> {
        let mut rhs_cond: Option<CondValue> = None;
        let value = {
            let rhs_slot = &mut rhs_cond;
            let mut cont = |s: &mut FunctionEmitter<'_>| -> CResult<ValueId> {
                let c = rhs(s)?;
                let v = c.value;
                *rhs_slot = Some(c);
                Ok(v)
            };
            let konst = |s: &mut FunctionEmitter<'_>| -> CResult<ValueId> {
                Ok(s.constant(IValue::Bool(is_or)))
            };
            if is_or {
                self.emit_if_expr(range, &lhs, konst, &mut cont)?
            } else {
                self.emit_if_expr(range, &lhs, &mut cont, konst)?
            }
        };
        let rhs = rhs_cond.expect("the continuation was emitted");
        let (refinements, static_if) = if is_or {
            let s = match (lhs.static_if, rhs.static_if) {
                (Some(x), Some(y)) => Some(x || y),
                _ => None,
            };
            (lhs.refinements.or(&rhs.refinements), s)
        } else {
            let s = if lhs.static_if == Some(false) || rhs.static_if == Some(false) {
                Some(false)
            } else {
                match (lhs.static_if, rhs.static_if) {
                    (Some(x), Some(y)) => Some(x && y),
                    _ => None,
                }
            };
            (lhs.refinements.and(&rhs.refinements), s)
        };
        Ok(CondValue {
            value,
            refinements,
            static_if,
        })
    }

    /// `prim::If` producing one value from two branch emitters.
    pub fn emit_if_expr(
        &mut self,
        range: &SourceRange,
        c: &CondValue,
        mut then_f: impl FnMut(&mut FunctionEmitter<'_>) -> CResult<ValueId>,
        mut else_f: impl FnMut(&mut FunctionEmitter<'_>) -> CResult<ValueId>,
    ) -> CResult<ValueId> {
        let n = self.insert_node(prim::If, &[c.value], &[]);
        let tb = self.g.add_block(n);
        let fb = self.g.add_block(n);
        let saved = self.g.insert_point();
        let mut outs = Vec::new();
        for (b, refs, which) in [
            (tb, c.refinements.on_true.clone(), 0),
            (fb, c.refinements.on_false.clone(), 1),
        ] {
            self.push_frame(b);
            let r = (|| {
                self.insert_refinements(range, &refs)?;
                if which == 0 {
                    then_f(self)
                } else {
                    else_f(self)
                }
            })();
            self.pop_frame();
            let v = match r {
                Ok(v) => v,
                Err(e) => {
                    self.g.set_insert_point_before(saved);
                    return Err(e);
                }
            };
            self.g.add_block_output(b, v);
            outs.push(self.g.value(v).ty().clone());
        }
        self.g.set_insert_point_before(saved);
        let unified = ts_core::unify_types(&outs[0], &outs[1], false).ok_or_else(|| {
            CompileError::new(
                format!(
                    "if-expression's true branch has type {} but false branch has type {}",
                    outs[0].annotation_str(),
                    outs[1].annotation_str()
                ),
                range,
            )
        })?;
        Ok(self.g.add_output(n, unified))
    }

    // -----------------------------------------------------------------------------------------
    // Literals

    fn emit_list_literal(
        &mut self,
        e: &Expr,
        items: &[Expr],
        hint: Option<&TypeRef>,
    ) -> CResult<ValueId> {
        let hint_elem = hint.and_then(|h| match &**h {
            Type::List(el) => Some(el.clone()),
            Type::Optional(o) => o.list_elem().cloned(),
            _ => None,
        });
        let mut vals = Vec::new();
        for it in items {
            if let ExprKind::Starred(inner) = &it.kind {
                let v = self.emit_expr(inner, None)?;
                vals.extend(tuple_elements(&mut self.g, v));
                continue;
            }
            vals.push(self.emit_expr(it, hint_elem.as_ref())?);
        }
        if vals.is_empty() {
            let elem = hint_elem.unwrap_or_else(Type::tensor);
            return Ok(self.g.insert_list(elem, &[]));
        }
        let types: Vec<TypeRef> = vals.iter().map(|&v| self.g.value(v).ty().clone()).collect();
        let elem = match &hint_elem {
            Some(h) => {
                let unified = ts_core::unify_type_list(&types, true).unwrap_or_else(Type::any);
                if !unified.is_subtype_of(h) && !types.iter().all(|t| t.is_subtype_of(h)) {
                    return self.err(
                        &e.range,
                        format!(
                            "List type annotation `{}` did not match the types of the given list elements, which were {}",
                            Type::list(h.clone()).annotation_str(),
                            unified.annotation_str()
                        ),
                    );
                }
                h.clone()
            }
            None => super::annotations::unshaped(
                &ts_core::unify_type_list(&types, true).unwrap_or_else(Type::any),
            ),
        };
        Ok(self.g.insert_list(elem, &vals))
    }

    fn emit_dict_literal(
        &mut self,
        e: &Expr,
        pairs: &[(Expr, Expr)],
        hint: Option<&TypeRef>,
    ) -> CResult<ValueId> {
        let (hk, hv) = match hint.map(|h| &**h) {
            Some(Type::Dict(k, v)) => (Some(k.clone()), Some(v.clone())),
            _ => (None, None),
        };
        let mut ins = Vec::new();
        let mut kts = Vec::new();
        let mut vts = Vec::new();
        for (k, v) in pairs {
            let kv = self.emit_expr(k, hk.as_ref())?;
            let vv = self.emit_expr(v, hv.as_ref())?;
            kts.push(self.g.value(kv).ty().clone());
            vts.push(self.g.value(vv).ty().clone());
            ins.push(kv);
            ins.push(vv);
        }
        let (kt, vt) = if pairs.is_empty() {
            (
                hk.unwrap_or_else(Type::string),
                hv.unwrap_or_else(Type::tensor),
            )
        } else {
            let kt = hk
                .unwrap_or_else(|| ts_core::unify_type_list(&kts, true).unwrap_or_else(Type::any));
            let vt = hv.unwrap_or_else(|| {
                super::annotations::unshaped(
                    &ts_core::unify_type_list(&vts, true).unwrap_or_else(Type::any),
                )
            });
            (kt, vt)
        };
        if !matches!(
            *kt,
            Type::Str | Type::Int | Type::Float | Type::Bool | Type::Complex | Type::Tensor(_)
        ) {
            return self.err(
                &e.range,
                format!(
                    "Dict keys of type {} are not supported",
                    kt.annotation_str()
                ),
            );
        }
        Ok(self.insert1(prim::DictConstruct, &ins, Type::dict(kt, vt)))
    }

    fn emit_list_comp(
        &mut self,
        e: &Expr,
        elt: &Expr,
        target: &Expr,
        iter: &Expr,
        cond: Option<&Expr>,
        hint: Option<&TypeRef>,
    ) -> CResult<ValueId> {
        let list = self.insert1(prim::ListConstruct, &[], Type::tensor_list());
        let mut typed = false;
        if let Some(h) = hint {
            if !matches!(**h, Type::List(_)) {
                return self.err(
                    &e.range,
                    format!(
                        "Expected list type annotation for list comprehension, found {}",
                        h.annotation_str()
                    ),
                );
            }
            self.g.set_type(list, h.clone());
            typed = true;
        }
        let scope = self.insert_node(prim::ComprehensionScope, &[], &[]);
        let b = self.g.add_block(scope);
        let saved = self.g.insert_point();
        self.push_frame(b);
        let r =
            self.emit_comprehension_loop(e, target, iter, cond, &mut |s: &mut FunctionEmitter<
                '_,
            >| {
                let out = s.emit_expr(elt, None)?;
                if !typed {
                    let t = super::annotations::unshaped(s.g.value(out).ty());
                    s.g.set_type(list, Type::list(t));
                    typed = true;
                }
                s.emit_builtin_call(
                    &e.range,
                    Symbol::aten("append"),
                    vec![NamedValue::pos(out)],
                    vec![],
                    Some(list),
                )?;
                Ok(())
            });
        self.pop_frame();
        self.g.set_insert_point_before(saved);
        r?;
        Ok(list)
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_dict_comp(
        &mut self,
        e: &Expr,
        key: &Expr,
        value: &Expr,
        target: &Expr,
        iter: &Expr,
        cond: Option<&Expr>,
        hint: Option<&TypeRef>,
    ) -> CResult<ValueId> {
        let d = self.insert1(
            prim::DictConstruct,
            &[],
            Type::dict(Type::string(), Type::tensor()),
        );
        let mut typed = false;
        if let Some(h) = hint {
            self.g.set_type(d, h.clone());
            typed = true;
        }
        let scope = self.insert_node(prim::ComprehensionScope, &[], &[]);
        let b = self.g.add_block(scope);
        let saved = self.g.insert_point();
        self.push_frame(b);
        let r =
            self.emit_comprehension_loop(e, target, iter, cond, &mut |s: &mut FunctionEmitter<
                '_,
            >| {
                let k = s.emit_expr(key, None)?;
                let v = s.emit_expr(value, None)?;
                if !typed {
                    let kt = s.g.value(k).ty().clone();
                    let vt = super::annotations::unshaped(s.g.value(v).ty());
                    s.g.set_type(d, Type::dict(kt, vt));
                    typed = true;
                }
                s.emit_builtin_call(
                    &e.range,
                    Symbol::aten("_set_item"),
                    vec![NamedValue::pos(d), NamedValue::pos(k), NamedValue::pos(v)],
                    vec![],
                    None,
                )?;
                Ok(())
            });
        self.pop_frame();
        self.g.set_insert_point_before(saved);
        r?;
        Ok(d)
    }
}

/// Whether a type can be None.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum NoneStatus {
    Always,
    Maybe,
    Never,
}

/// PyTorch's `canBeNone`.
pub fn none_status(t: &Type) -> NoneStatus {
    match t {
        Type::NoneType => NoneStatus::Always,
        Type::Optional(_) | Type::Any => NoneStatus::Maybe,
        Type::Union(ms) if ms.iter().any(|m| m.is_none_type()) => NoneStatus::Maybe,
        _ => NoneStatus::Never,
    }
}

/// Shorthand used by callers building sugared tuples.
pub fn sugared_tuple(items: Vec<Sugared>) -> Sugared {
    Sugared::Tuple(items)
}

/// Keeps `Arc` and `Special` in scope for sibling modules.
pub fn _unused(_: Arc<()>, _: Special) {}
