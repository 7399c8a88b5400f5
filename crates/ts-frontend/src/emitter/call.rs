//! Overload resolution of builtin operators (PyTorch's `tryMatchSchema`): positional and
//! keyword arguments, defaults, varargs packed into lists, type variables, and the implicit
//! conversions builtins allow (tuple → list, tensor → number, number → `Scalar`, str → device).

use std::sync::Arc;

use ts_core::{prim, FunctionSchema, IValue, Symbol, Type, TypeRef};
use ts_ir::{Graph, ValueId};
use ts_ops::matching::{substitute, type_matches, Bindings};

/// An argument at a call site.
#[derive(Clone, Debug)]
pub struct NamedValue {
    pub name: Option<String>,
    pub value: ValueId,
}

impl NamedValue {
    /// A positional argument.
    pub fn pos(v: ValueId) -> NamedValue {
        NamedValue {
            name: None,
            value: v,
        }
    }

    /// A keyword argument.
    pub fn kw(name: &str, v: ValueId) -> NamedValue {
        NamedValue {
            name: Some(name.to_string()),
            value: v,
        }
    }
}

/// A successful match: the inputs in schema order and the return types.
pub struct Matched {
    pub inputs: Vec<ValueId>,
    pub returns: Vec<TypeRef>,
    pub return_names: Option<Vec<String>>,
}

fn unwrap_optional(t: &TypeRef) -> TypeRef {
    t.optional_elem().cloned().unwrap_or_else(|| t.clone())
}

/// True for a tuple whose elements all fit the list element type.
fn convertible_to_list(t: &Type, list: &Type) -> bool {
    let Type::List(elem) = list else { return false };
    match t {
        Type::Tuple(tt) => tt
            .elements
            .iter()
            .all(|e| type_matches(e, elem, &mut Bindings::new())),
        _ => false,
    }
}

/// The elements of a tuple value: the construct's inputs, or a new `TupleUnpack`.
pub fn tuple_elements(g: &mut Graph, v: ValueId) -> Vec<ValueId> {
    let n = g.value(v).node();
    if g.node(n).kind() == prim::TupleConstruct {
        return g.node(n).inputs().to_vec();
    }
    g.insert_tuple_unpack(v)
}

/// The type TorchScript programs see for a schema type (`Argument::type()` in PyTorch, not
/// `real_type()`): `SymInt`, `SymFloat` and `SymBool` read as `int`, `float` and `bool`.
pub fn fake_type(t: &TypeRef) -> TypeRef {
    match &**t {
        Type::SymInt => Type::int(),
        Type::SymFloat => Type::float(),
        Type::SymBool => Type::bool(),
        Type::List(e) => {
            let f = fake_type(e);
            if Arc::ptr_eq(&f, e) {
                t.clone()
            } else {
                Type::list(f)
            }
        }
        Type::Optional(e) => {
            let f = fake_type(e);
            if Arc::ptr_eq(&f, e) {
                t.clone()
            } else {
                Type::optional(f)
            }
        }
        _ => t.clone(),
    }
}

/// Inserts `kind(inputs)` with one output of type `ty`.
fn insert1(g: &mut Graph, kind: Symbol, inputs: &[ValueId], ty: TypeRef) -> ValueId {
    let n = g.insert(kind, inputs, 0);
    g.add_output(n, ty)
}

/// PyTorch's `tryConvertToType`.
pub fn try_convert(
    g: &mut Graph,
    concrete: &TypeRef,
    mut v: ValueId,
    allow_conversions: bool,
) -> ValueId {
    if let Type::Optional(inner) = &**concrete {
        let vt = g.value(v).ty().clone();
        if !matches!(&*vt, Type::Optional(_)) && !vt.is_none_type() {
            return try_convert(g, inner, v, allow_conversions);
        }
    }
    let vt = g.value(v).ty().clone();
    if let Type::Tuple(vtt) = &*vt {
        let unopt = unwrap_optional(concrete);
        if convertible_to_list(&vt, &unopt) {
            let elems = tuple_elements(g, v);
            let elem_ty = unopt.list_elem().cloned().unwrap_or_else(Type::any);
            v = g.insert_list(elem_ty, &elems);
        } else if let Type::Tuple(ct) = &**concrete {
            if !vt.is_subtype_of(concrete) && ct.elements.len() == vtt.elements.len() {
                let elems = tuple_elements(g, v);
                let converted: Vec<ValueId> = ct
                    .elements
                    .iter()
                    .zip(elems)
                    .map(|(t, e)| try_convert(g, t, e, allow_conversions))
                    .collect();
                v = g.insert_tuple(&converted);
            }
        }
    }
    if allow_conversions {
        let vt = g.value(v).ty().clone();
        let is_tensor = vt.is_tensor();
        let (c_float, c_int, c_complex, c_number) = (
            concrete.is_float(),
            concrete.is_int(),
            matches!(**concrete, Type::Complex),
            matches!(**concrete, Type::Number),
        );
        if is_tensor {
            if c_float {
                v = insert1(g, Symbol::aten("FloatImplicit"), &[v], Type::float());
            } else if c_complex {
                v = insert1(g, Symbol::aten("ComplexImplicit"), &[v], Type::complex());
            } else if c_int {
                v = insert1(g, Symbol::aten("IntImplicit"), &[v], Type::int());
            } else if c_number {
                v = insert1(g, Symbol::aten("ScalarImplicit"), &[v], Type::number());
            }
        } else if matches!(*vt, Type::Number) {
            if c_float {
                v = insert1(g, Symbol::aten("Float"), &[v], Type::float());
            } else if c_int {
                v = insert1(g, Symbol::aten("Int"), &[v], Type::int());
            }
        } else if vt.is_bool() {
            if c_float {
                v = insert1(g, Symbol::aten("Float"), &[v], Type::float());
            } else if c_int || c_number {
                v = insert1(g, Symbol::aten("Int"), &[v], Type::int());
            }
        }
        let vt = g.value(v).ty().clone();
        if matches!(*vt, Type::Str) && matches!(**concrete, Type::Device) {
            v = insert1(g, Symbol::aten("device"), &[v], Type::device());
        }
    }
    v
}

fn varargs_can_be_list(schema: &FunctionSchema, i: usize) -> bool {
    let arg = &schema.arguments[i];
    let is_last = i + 1 == schema.arguments.len() || schema.arguments[i + 1].kwarg_only;
    let t = &fake_type(&arg.ty);
    let is_list = matches!(&**t, Type::List(_));
    let typevar_list = matches!(&**t, Type::List(e) if matches!(**e, Type::Var(_)));
    is_last && is_list && !typevar_list && arg.n.is_none()
}

fn is_int_or_float_as_list(g: &Graph, v: ValueId, arg: &ts_core::Argument) -> bool {
    let vt = g.value(v).ty();
    if !(matches!(**vt, Type::Int) || matches!(**vt, Type::Float)) {
        return false;
    }
    let at = unwrap_optional(&fake_type(&arg.ty));
    match &*at {
        Type::List(e) => {
            let e = unwrap_optional(e);
            arg.n.is_some() && ((e.is_int() && vt.is_int()) || (e.is_float() && vt.is_float()))
        }
        _ => false,
    }
}

/// Inserts the constant for a schema default.
fn default_constant(g: &mut Graph, v: &IValue, ty: &TypeRef) -> ValueId {
    // Typed empty lists keep the declared element type.
    let v = match (v, &*unwrap_optional(ty)) {
        (IValue::List(l), Type::List(e))
            if l.items.read().is_empty() || !matches!(**e, Type::Var(_)) =>
        {
            IValue::list(e.clone(), l.items.read().clone())
        }
        _ => v.clone(),
    };
    g.insert_constant(&v)
}

/// Attempts to match a call against `schema`; inserts conversion nodes on success (callers
/// roll back the graph on failure). `failure` receives the reason.
pub fn try_match_schema(
    g: &mut Graph,
    schema: &FunctionSchema,
    args: &[NamedValue],
    kwargs: &[NamedValue],
    self_val: Option<ValueId>,
    allow_conversions: bool,
    failure: &mut String,
) -> Option<Matched> {
    let mut b = Bindings::new();
    let mut inputs = Vec::new();
    let mut used_args = 0;
    let mut used_kw = vec![false; kwargs.len()];
    let mut self_val = self_val;
    for (i, arg) in schema.arguments.iter().enumerate() {
        let arg_ty = fake_type(&arg.ty);
        let actual: ValueId = if arg.name == "self" && self_val.is_some() {
            self_val.take().expect("checked")
        } else if !arg.kwarg_only && used_args < args.len() {
            // Packing trailing numbers into the list argument is not a conversion: PyTorch
            // prints `x.view(-1)` as `view(x, [-1])` even though `view.dtype(self, int)` would
            // match the int as it is.
            if varargs_can_be_list(schema, i) {
                let first = args[used_args].value;
                let ft = g.value(first).ty().clone();
                let formal = unwrap_optional(&arg_ty);
                if !matches!(*ft, Type::List(_)) && !convertible_to_list(&ft, &formal) {
                    let elem = formal.list_elem().cloned().unwrap_or_else(Type::any);
                    let mut elems = Vec::new();
                    for a in &args[used_args..] {
                        let c = try_convert(g, &elem, a.value, allow_conversions);
                        if !type_matches(g.value(c).ty(), &elem, &mut b) {
                            failure.push_str(&format!(
                                "Expected a value of type '{}' for argument '{}' but instead found type '{}'.\n",
                                elem.annotation_str(),
                                arg.name,
                                g.value(a.value).ty().annotation_str()
                            ));
                            return None;
                        }
                        elems.push(c);
                    }
                    used_args = args.len();
                    inputs.push(g.insert_list(elem, &elems));
                    continue;
                }
            }
            used_args += 1;
            args[used_args - 1].value
        } else if let Some(k) = kwargs
            .iter()
            .position(|kw| kw.name.as_deref() == Some(arg.name.as_str()))
        {
            if used_kw[k] {
                failure.push_str(&format!(
                    "Argument {} specified twice in schema.\n",
                    arg.name
                ));
                return None;
            }
            used_kw[k] = true;
            kwargs[k].value
        } else if let Some(d) = &arg.default {
            default_constant(g, d, &arg_ty)
        } else {
            failure.push_str(&format!("Argument {} not provided.\n", arg.name));
            return None;
        };
        let mut v = actual;
        if is_int_or_float_as_list(g, v, arg) {
            let n = arg.n.unwrap_or(1);
            // `int?[2]` builds an `int?[]` list; `int[2]` an `int[]` one.
            let ty = match &*unwrap_optional(&arg_ty) {
                Type::List(e) if e.optional_elem().is_some() => e.clone(),
                _ => g.value(v).ty().clone(),
            };
            v = g.insert_list(ty, &vec![v; n]);
        }
        // Bind type variables, then convert to the concrete type.
        let vt = g.value(v).ty().clone();
        let mut probe = b.clone();
        // A bool is not a `Scalar` in PyTorch: it only matches through the `aten::Int`
        // conversion of the second (converting) round.
        let bool_as_number = vt.is_bool() && matches!(*unwrap_optional(&arg_ty), Type::Number);
        // A tuple bound to a list of a type variable binds the variable to the unified
        // element type (PyTorch's `matchTypeVariables` on a tuple actual).
        if let (Type::Tuple(tt), Type::List(_)) = (&*vt, &*unwrap_optional(&arg_ty)) {
            if let Some(u) = ts_core::unify_type_list(&tt.elements, false) {
                let mut bound = probe.clone();
                if type_matches(&Type::list(u), &unwrap_optional(&arg_ty), &mut bound) {
                    probe = bound;
                }
            }
        }
        if (bool_as_number || !type_matches(&vt, &arg_ty, &mut probe)) && !allow_conversions {
            failure.push_str(&format!(
                "Expected a value of type '{}' for argument '{}' but instead found type '{}'.\n",
                arg_ty.annotation_str(),
                arg.name,
                vt.annotation_str()
            ));
            return None;
        }
        let concrete = substitute(&arg_ty, &probe);
        let converted = try_convert(g, &concrete, v, allow_conversions);
        let ct = g.value(converted).ty().clone();
        if !type_matches(&ct, &arg_ty, &mut b) {
            failure.push_str(&format!(
                "Expected a value of type '{}' for argument '{}' but instead found type '{}'.\n",
                arg_ty.annotation_str(),
                arg.name,
                vt.annotation_str()
            ));
            return None;
        }
        inputs.push(converted);
    }
    if self_val.is_some() {
        failure.push_str("Provided self argument not used in schema.\n");
        return None;
    }
    if schema.is_vararg {
        while used_args < args.len() {
            inputs.push(args[used_args].value);
            used_args += 1;
        }
    }
    if used_args < args.len() {
        failure.push_str(&format!(
            "Expected at most {used_args} arguments but found {} positional arguments.\n",
            args.len()
        ));
        return None;
    }
    for (k, kw) in kwargs.iter().enumerate() {
        if !used_kw[k] {
            let name = kw.name.clone().unwrap_or_default();
            if schema.arguments.iter().any(|a| a.name == name) {
                failure.push_str(&format!("Keyword argument {name} specified twice.\n"));
            } else {
                failure.push_str(&format!("Keyword argument {name} unknown.\n"));
            }
            return None;
        }
    }
    let returns: Vec<TypeRef> = schema
        .returns
        .iter()
        .map(|r| substitute(&fake_type(&r.ty), &b))
        .collect();
    if returns.iter().any(|t| t.has_free_variables()) {
        failure.push_str("Return type variables could not be inferred.\n");
        return None;
    }
    let named = !schema.returns.is_empty() && schema.returns.iter().all(|r| !r.name.is_empty());
    Some(Matched {
        inputs,
        returns,
        return_names: named.then(|| schema.returns.iter().map(|r| r.name.clone()).collect()),
    })
}
