//! Names, attributes and calls: global builtins (`print`, `len`, `range`, casts, ...), the
//! `torch`/`math`/`torch.nn.functional`/`torch.jit` modules, attributes and methods of
//! values, builtin-operator calls with overload resolution, user functions and methods,
//! subscripts, and loop iterables.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use ts_core::{attr, prim, FunctionSchema, IValue, SourceRange, Symbol, Type, TypeRef};
use ts_ir::{AttributeValue, Function, ValueId};
use ts_tensor::DType;

use super::annotations::type_from_expr;
use super::call::{try_convert, try_match_schema, tuple_elements, Matched, NamedValue};
use super::function::FunctionEmitter;
use super::statements::{CondValue, Refinements};
use super::sugared::{Iterable, Special, Sugared};
use crate::ast::{Expr, ExprKind, Ident};
use crate::error::{CResult, CompileError};

/// Parsed PyTorch schemas per operator name, in PyTorch's registration order.
fn schemas_for(name: &str) -> Vec<Arc<FunctionSchema>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Vec<Arc<FunctionSchema>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().get(name) {
        return v.clone();
    }
    let v: Vec<Arc<FunctionSchema>> = ts_ops::schema_table::overload_lines(name)
        .iter()
        .filter_map(|l| FunctionSchema::parse(l).ok().map(Arc::new))
        .collect();
    if v.is_empty() {
        // Custom operators registered at run time (`ops.my_ns.my_op(...)`), as PyTorch's
        // `getAllOperatorsFor` includes them; not cached, since more may be registered later.
        return ts_ops::registry()
            .lookup(Symbol::new(name))
            .iter()
            .map(|o| o.schema.clone())
            .collect();
    }
    cache.lock().insert(name.to_string(), v.clone());
    v
}

fn dtype_constant(name: &str) -> Option<DType> {
    Some(match name {
        "float32" | "float" => DType::Float32,
        "float64" | "double" => DType::Float64,
        "float16" | "half" => DType::Float16,
        "bfloat16" => DType::BFloat16,
        "int64" | "long" => DType::Int64,
        "int32" | "int" => DType::Int32,
        "int16" | "short" => DType::Int16,
        "int8" => DType::Int8,
        "uint8" => DType::UInt8,
        "bool" => DType::Bool,
        "complex64" | "cfloat" => DType::Complex64,
        "complex128" | "cdouble" => DType::Complex128,
        "uint16" => DType::UInt16,
        "uint32" => DType::UInt32,
        "uint64" => DType::UInt64,
        _ => return None,
    })
}

/// The special forms and builtin functions available as global names.
fn global_builtin(name: &str) -> Option<Sugared> {
    let sp = |s| Some(Sugared::Special(s));
    let b = |n: &str| {
        Some(Sugared::Builtin {
            name: Symbol::new(n),
            self_val: None,
        })
    };
    match name {
        "print" => sp(Special::Print),
        "len" => sp(Special::Len),
        "range" => sp(Special::Range),
        "enumerate" => sp(Special::Enumerate),
        "zip" => sp(Special::Zip),
        "reversed" => sp(Special::Reversed),
        "isinstance" => sp(Special::IsInstance),
        "getattr" => sp(Special::GetAttr),
        "hasattr" => sp(Special::HasAttr),
        "tuple" => sp(Special::Tuple),
        "list" => sp(Special::List),
        "dict" => sp(Special::Dict),
        "slice" => sp(Special::Slice),
        "int" => sp(Special::Int),
        "float" => sp(Special::Float),
        "bool" => sp(Special::Bool),
        "str" => sp(Special::Str),
        "complex" => sp(Special::Complex),
        "min" => b("prim::min"),
        "max" => b("prim::max"),
        "abs" => b("prim::abs"),
        "sorted" => b("aten::sorted"),
        "sum" => b("aten::sum"),
        "all" => b("aten::all"),
        "any" => b("aten::any"),
        "round" => b("aten::round"),
        "divmod" => b("aten::divmod"),
        "hash" => b("aten::hash"),
        "id" => b("prim::id"),
        "ord" => b("aten::ord"),
        "chr" => b("aten::chr"),
        "hex" => b("aten::hex"),
        "oct" => b("aten::oct"),
        "bin" => b("aten::bin"),
        "pow" => b("aten::pow"),
        "Tensor" => Some(Sugared::TypeName(Type::tensor())),
        "List" => Some(Sugared::TypeName(Type::list(Type::any()))),
        "Dict" => Some(Sugared::TypeName(Type::dict(Type::any(), Type::any()))),
        "Optional" | "Tuple" | "Union" | "Any" | "Future" | "NamedTuple" | "Enum" => {
            Some(Sugared::Module(format!("typing.{name}")))
        }
        "torch" | "math" | "typing" | "warnings" | "ops" | "__torch__" | "CONSTANTS" => {
            Some(Sugared::Module(name.to_string()))
        }
        "annotate" => sp(Special::Annotate),
        "fork" => sp(Special::Fork),
        "wait" => sp(Special::Wait),
        "unchecked_cast" => sp(Special::UncheckedCast),
        "uninitialized" => sp(Special::Uninitialized),
        "inf" => None,
        _ => None,
    }
}

impl FunctionEmitter<'_> {
    /// Resolves a global name: functions and classes of the unit, top-level assignments, and
    /// builtins.
    pub fn resolve_global(&mut self, range: &SourceRange, name: &str) -> CResult<Option<Sugared>> {
        let qualified = format!("{}.{name}", self.ctx.prefix);
        if let Some(f) = self.ctx.get_function(&qualified, range)? {
            return Ok(Some(Sugared::Function(f)));
        }
        if let Some(f) = self.ctx.get_function(name, range)? {
            return Ok(Some(Sugared::Function(f)));
        }
        if let Some(t) = super::annotations::TypeNames::lookup_type(&*self.ctx, name) {
            let _ = self
                .ctx
                .ensure_class(&format!("{}.{name}", self.ctx.prefix));
            return Ok(Some(match &*t {
                Type::Class(c) => Sugared::Class(c.clone()),
                Type::Enum(e) => Sugared::Enum(e.clone()),
                Type::Tuple(_) => Sugared::NamedTuple(t.clone()),
                _ => Sugared::TypeName(t.clone()),
            }));
        }
        if let Some(e) = self.ctx.globals.get(name).cloned() {
            return self.emit_sugared(&e, None).map(Some);
        }
        if self.ctx.archive {
            // The printer writes non-finite floats as bare `inf` and `nan`.
            match name {
                "inf" => {
                    return Ok(Some(Sugared::Simple(
                        self.constant(IValue::Double(f64::INFINITY)),
                    )))
                }
                "nan" => {
                    return Ok(Some(Sugared::Simple(
                        self.constant(IValue::Double(f64::NAN)),
                    )))
                }
                _ => {}
            }
        }
        Ok(global_builtin(name))
    }

    /// A fully qualified name from archive code (`__torch__.a.b.f`, `__torch__.a.B`): a function
    /// or type of the unit, or a deeper namespace.
    fn qualified_global(&mut self, full: &str, range: &SourceRange) -> CResult<Sugared> {
        if let Some(f) = self.ctx.get_function(full, range)? {
            return Ok(Sugared::Function(f));
        }
        if let Some(t) = self.ctx.cu.find_type(full) {
            self.ctx.ensure_class(full)?;
            return Ok(match &*t {
                Type::Class(c) => Sugared::Class(c.clone()),
                Type::Enum(e) => Sugared::Enum(e.clone()),
                Type::Tuple(_) => Sugared::NamedTuple(t.clone()),
                _ => Sugared::TypeName(t.clone()),
            });
        }
        if full.starts_with("__torch__.torch.classes.") {
            return self.err(
                range,
                format!("{full} is a custom C++ class (torch.classes); torchscript-rs cannot load custom classes"),
            );
        }
        Ok(Sugared::Module(full.to_string()))
    }

    // -----------------------------------------------------------------------------------------
    // Attributes

    /// `base.name`.
    pub fn emit_attr(
        &mut self,
        base: Sugared,
        name: &str,
        range: &SourceRange,
    ) -> CResult<Sugared> {
        match base {
            Sugared::Module(m) => self.module_attr(&m, name, range),
            Sugared::Simple(v) => self.value_attr(v, name, range),
            Sugared::Enum(e) => {
                let m = e.members.iter().find(|(n, _)| n == name).ok_or_else(|| {
                    CompileError::new(format!("'{}' has no member '{name}'", e.name), range)
                })?;
                let v = IValue::Enum(Arc::new(ts_core::EnumValue {
                    enum_type: e.clone(),
                    name: m.0.clone(),
                    value: m.1.clone(),
                }));
                let c = self.g.insert_constant(&v);
                Ok(Sugared::Simple(c))
            }
            Sugared::Class(c) => {
                let q = format!("{}.{name}", c.name);
                if let Some(f) = self.ctx.compile_pending(&q, range)? {
                    return Ok(Sugared::Function(f));
                }
                if let Some(m) = c.find_static_method(name).or_else(|| c.find_method(name)) {
                    if let Some(f) = self
                        .ctx
                        .cu
                        .find_function(&format!("{}.{}", c.name, m.name()))
                    {
                        return Ok(Sugared::Function(f));
                    }
                }
                if let Some(v) = c.find_constant(name) {
                    return Ok(Sugared::Simple(self.constant(v)));
                }
                if name == "__new__" && !c.is_module {
                    return Ok(Sugared::ClassNew(c));
                }
                self.err(range, format!("'{}' has no attribute '{name}'", c.name))
            }
            Sugared::TypeName(t) => self.err(
                range,
                format!("'{}' has no attribute '{name}'", t.annotation_str()),
            ),
            _ => self.err(
                range,
                format!("attribute lookup is not defined on this value: '{name}'"),
            ),
        }
    }

    fn module_attr(&mut self, module: &str, name: &str, range: &SourceRange) -> CResult<Sugared> {
        let full = format!("{module}.{name}");
        if module == "__torch__" || module.starts_with("__torch__.") {
            return self.qualified_global(&full, range);
        }
        if let Some(ns) = module.strip_prefix("ops.") {
            return Ok(Sugared::Builtin {
                name: Symbol::new(&format!("{ns}::{name}")),
                self_val: None,
            });
        }
        match module {
            "ops" => return Ok(Sugared::Module(full)),
            "CONSTANTS" => {
                let v = name
                    .strip_prefix('c')
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|i| self.ctx.constants.get(i).cloned())
                    .ok_or_else(|| {
                        CompileError::new(format!("the archive has no constant {name}"), range)
                    })?;
                return Ok(Sugared::Simple(self.constant(v)));
            }
            _ => {}
        }
        match module {
            "torch" => {
                if let Some(d) = dtype_constant(name) {
                    return Ok(Sugared::Simple(
                        self.constant(IValue::Int(d.scalar_type_index())),
                    ));
                }
                if name == "no_grad" {
                    super::grad_mode::ensure_no_grad(&mut *self.ctx)?;
                    return self.qualified_global(super::grad_mode::NO_GRAD, range);
                }
                Ok(match name {
                    "Tensor" => Sugared::TypeName(Type::tensor()),
                    "nn" | "jit" | "linalg" | "special" | "fft" | "_C" | "_VF" | "autograd"
                    | "testing" | "cuda" => Sugared::Module(full),
                    // `torch.ops.ns.op` is the same operator as saved code's `ops.ns.op`.
                    "ops" => Sugared::Module("ops".to_string()),
                    "device" => Sugared::Special(Special::Device),
                    "tensor" => Sugared::Special(Special::Tensor),
                    "inf" => Sugared::Simple(self.constant(IValue::Double(f64::INFINITY))),
                    "nan" => Sugared::Simple(self.constant(IValue::Double(f64::NAN))),
                    "pi" => Sugared::Simple(self.constant(IValue::Double(std::f64::consts::PI))),
                    "e" => Sugared::Simple(self.constant(IValue::Double(std::f64::consts::E))),
                    "strided" => Sugared::Simple(self.constant(IValue::Int(0))),
                    "contiguous_format" => Sugared::Simple(self.constant(IValue::Int(0))),
                    "preserve_format" => Sugared::Simple(self.constant(IValue::Int(1))),
                    "channels_last" => Sugared::Simple(self.constant(IValue::Int(2))),
                    "warn" => Sugared::Special(Special::Warn),
                    // Python exposes `aten::segment_reduce` as `torch._segment_reduce`.
                    "_segment_reduce" => Sugared::Builtin {
                        name: Symbol::aten("segment_reduce"),
                        self_val: None,
                    },
                    _ => Sugared::Builtin {
                        name: Symbol::aten(name),
                        self_val: None,
                    },
                })
            }
            "math" => Ok(match name {
                "pi" => Sugared::Simple(self.constant(IValue::Double(std::f64::consts::PI))),
                "e" => Sugared::Simple(self.constant(IValue::Double(std::f64::consts::E))),
                "tau" => Sugared::Simple(self.constant(IValue::Double(std::f64::consts::TAU))),
                "inf" => Sugared::Simple(self.constant(IValue::Double(f64::INFINITY))),
                "nan" => Sugared::Simple(self.constant(IValue::Double(f64::NAN))),
                "remainder" => Sugared::Builtin {
                    name: Symbol::aten("mathremainder"),
                    self_val: None,
                },
                _ => Sugared::Builtin {
                    name: Symbol::aten(name),
                    self_val: None,
                },
            }),
            "torch.nn" => match name {
                "functional" => Ok(Sugared::Module(full)),
                "Parameter" => Ok(Sugared::TypeName(Type::tensor())),
                _ => self.err(
                    range,
                    format!("torch.nn.{name} is not supported in TorchScript code"),
                ),
            },
            "torch.nn.functional" => match super::library::functional(name) {
                Some(super::library::Functional::Builtin(sym)) => Ok(Sugared::Builtin {
                    name: Symbol::new(sym),
                    self_val: None,
                }),
                Some(super::library::Functional::Script(f)) => Ok(Sugared::Function(f)),
                Some(super::library::Functional::BoolDispatch(d)) => Ok(Sugared::BoolDispatch(d)),
                Some(super::library::Functional::Overloads(fs)) => Ok(Sugared::Overloads(fs)),
                None => self.err(
                    range,
                    format!("torch.nn.functional.{name} is not supported"),
                ),
            },
            "torch.linalg" => Ok(Sugared::Builtin {
                name: Symbol::aten(&format!("linalg_{name}")),
                self_val: None,
            }),
            "torch.special" => Ok(Sugared::Builtin {
                name: Symbol::aten(&format!("special_{name}")),
                self_val: None,
            }),
            "torch.fft" => Ok(Sugared::Builtin {
                name: Symbol::aten(&format!("fft_{name}")),
                self_val: None,
            }),
            "torch._C" if name == "_nn" => Ok(Sugared::Module(full)),
            "torch._C" | "torch._VF" | "torch._C._nn" => Ok(Sugared::Builtin {
                name: Symbol::aten(name),
                self_val: None,
            }),
            "torch.jit" => Ok(match name {
                "annotate" => Sugared::Special(Special::Annotate),
                "fork" | "_fork" => Sugared::Special(Special::Fork),
                "wait" | "_wait" => Sugared::Special(Special::Wait),
                "is_scripting" => Sugared::Special(Special::IsScripting),
                "isinstance" => Sugared::Special(Special::IsInstance),
                "Future" => Sugared::Module("typing.Future".into()),
                "unused" | "ignore" | "export" => Sugared::Special(Special::Unused),
                _ => {
                    return self.err(
                        range,
                        format!("torch.jit.{name} is not supported in TorchScript code"),
                    )
                }
            }),
            "torch.autograd" | "torch.autograd.grad_mode" if name == "no_grad" => {
                super::grad_mode::ensure_no_grad(&mut *self.ctx)?;
                self.qualified_global(super::grad_mode::NO_GRAD, range)
            }
            "torch.autograd" if name == "grad_mode" => Ok(Sugared::Module(full)),
            "torch.autograd" => Ok(Sugared::Builtin {
                name: Symbol::aten(name),
                self_val: None,
            }),
            "typing" => Ok(Sugared::Module(format!("typing.{name}"))),
            "warnings" if name == "warn" => Ok(Sugared::Special(Special::Warn)),
            _ => self.err(
                range,
                format!("module '{module}' has no attribute '{name}'"),
            ),
        }
    }

    fn value_attr(&mut self, v: ValueId, name: &str, range: &SourceRange) -> CResult<Sugared> {
        let t = self.g.value(v).ty().clone();
        let simple = |x| Ok(Sugared::Simple(x));
        match &*t {
            Type::Tensor(_) => match name {
                "shape" => simple(self.emit_builtin_call(
                    range,
                    Symbol::aten("size"),
                    vec![NamedValue::pos(v)],
                    vec![],
                    None,
                )?),
                "dtype" => simple(self.insert1(prim::dtype, &[v], Type::int())),
                "device" => simple(self.insert1(prim::device, &[v], Type::device())),
                "is_cuda" => simple(self.insert1(prim::is_cuda, &[v], Type::bool())),
                "is_cpu" => simple(self.insert1(Symbol::prim("is_cpu"), &[v], Type::bool())),
                "requires_grad" => simple(self.insert1(prim::requires_grad, &[v], Type::bool())),
                "data" => simple(self.insert1(prim::data, &[v], Type::tensor())),
                "layout" => simple(self.insert1(prim::layout, &[v], Type::layout())),
                "ndim" => simple(self.emit_builtin_call(
                    range,
                    Symbol::aten("dim"),
                    vec![NamedValue::pos(v)],
                    vec![],
                    None,
                )?),
                "T" => simple(self.emit_builtin_call(
                    range,
                    Symbol::aten("numpy_T"),
                    vec![NamedValue::pos(v)],
                    vec![],
                    None,
                )?),
                "mT" => simple(self.emit_builtin_call(
                    range,
                    Symbol::aten("mT"),
                    vec![NamedValue::pos(v)],
                    vec![],
                    None,
                )?),
                "grad" => {
                    simple(self.insert1(Symbol::prim("grad"), &[v], Type::optional(Type::tensor())))
                }
                // Autograd properties are operators in TorchScript (`aten::is_leaf(%x)`).
                "is_leaf" | "retains_grad" | "output_nr" | "_version" => {
                    simple(self.emit_builtin_call(
                        range,
                        Symbol::aten(name),
                        vec![NamedValue::pos(v)],
                        vec![],
                        None,
                    )?)
                }
                "is_quantized" | "is_sparse" | "is_mkldnn" | "is_meta" | "is_nested" => {
                    simple(self.insert1(Symbol::prim(name), &[v], Type::bool()))
                }
                "tolist" => Ok(Sugared::TensorToList(v)),
                "float" | "double" | "half" | "bfloat16" | "long" | "int" | "short" | "char"
                | "byte" | "bool" | "cfloat" | "cdouble" => {
                    let dtype = match name {
                        "float" => DType::Float32,
                        "double" => DType::Float64,
                        "half" => DType::Float16,
                        "bfloat16" => DType::BFloat16,
                        "long" => DType::Int64,
                        "int" => DType::Int32,
                        "short" => DType::Int16,
                        "char" => DType::Int8,
                        "byte" => DType::UInt8,
                        "cfloat" => DType::Complex64,
                        "cdouble" => DType::Complex128,
                        _ => DType::Bool,
                    };
                    Ok(Sugared::TensorCast { self_val: v, dtype })
                }
                _ => Ok(Sugared::Builtin {
                    name: Symbol::aten(name),
                    self_val: Some(v),
                }),
            },
            Type::Class(c) => {
                if let Some(ty) = c.attribute_type(name) {
                    let n = self.insert_node(prim::GetAttr, &[v], &[ty]);
                    // PyTorch's attribute reads carry no source location.
                    self.g.set_source_range(n, None);
                    self.g
                        .set_attr(n, attr::name, AttributeValue::String(name.to_string()));
                    return simple(self.g.node(n).output(0));
                }
                if let Some(k) = c.find_constant(name) {
                    return simple(self.constant(k));
                }
                let props = c.members.read().properties.clone();
                if let Some((_, getter, _)) = props.iter().find(|(p, _, _)| p == name) {
                    let getter = getter.clone();
                    let c2 = c.clone();
                    return simple(self.call_method_value(
                        v,
                        &c2,
                        &getter,
                        vec![],
                        vec![],
                        range,
                    )?);
                }
                if c.find_method(name).is_some() || self.class_has_pending(c, name) {
                    return Ok(Sugared::Method {
                        self_val: v,
                        class: c.clone(),
                        name: name.to_string(),
                    });
                }
                if let Some(op) = custom_class_method(&c.name, name) {
                    return Ok(Sugared::Builtin {
                        name: Symbol::new(op),
                        self_val: Some(v),
                    });
                }
                self.err(
                    range,
                    format!("'{}' object has no attribute or method '{name}'", c.name),
                )
            }
            Type::Tuple(tt) if tt.names.is_some() => {
                let names = tt.names.as_ref().expect("named");
                let Some(i) = names.fields.iter().position(|f| f == name) else {
                    return self.err(
                        range,
                        format!(
                            "'{}' object has no attribute '{name}'",
                            names.qualified_name
                        ),
                    );
                };
                let ty = tt.elements[i].clone();
                let idx = self.constant(IValue::Int(i as i64));
                simple(self.insert1(prim::TupleIndex, &[v, idx], ty))
            }
            Type::Enum(_) => match name {
                "name" => simple(self.insert1(prim::EnumName, &[v], Type::string())),
                "value" => {
                    let vt = match &*t {
                        Type::Enum(e) => e.value_type.clone(),
                        _ => Type::any(),
                    };
                    simple(self.insert1(prim::EnumValue, &[v], vt))
                }
                _ => self.err(range, format!("enum has no attribute '{name}'")),
            },
            Type::Device => match name {
                "type" => simple(self.insert1(Symbol::prim("type"), &[v], Type::string())),
                "index" => {
                    simple(self.insert1(Symbol::prim("index"), &[v], Type::optional(Type::int())))
                }
                _ => self.err(range, format!("'Device' object has no attribute '{name}'")),
            },
            Type::Future(_) if name == "wait" => Ok(Sugared::Special(Special::Wait)),
            _ => Ok(Sugared::Builtin {
                name: Symbol::aten(name),
                self_val: Some(v),
            }),
        }
    }

    /// `obj.name = v`.
    pub fn emit_set_attr(
        &mut self,
        obj: &Expr,
        name: &str,
        v: ValueId,
        range: &SourceRange,
    ) -> CResult<()> {
        let o = self.emit_expr(obj, None)?;
        let t = self.g.value(o).ty().clone();
        let Some(c) = t.class_type().cloned() else {
            return self.err(
                range,
                format!(
                    "cannot set attribute '{name}' on a value of type {}",
                    t.annotation_str()
                ),
            );
        };
        let vt = self.g.value(v).ty().clone();
        match c.attribute_type(name) {
            Some(at) => {
                let v2 = try_convert(&mut self.g, &at, v, false);
                if !self.g.value(v2).ty().is_subtype_of(&at) {
                    return self.err(
                        range,
                        format!(
                            "Wrong type for attribute assignment. Expected {} but got {}",
                            at.annotation_str(),
                            vt.annotation_str()
                        ),
                    );
                }
                let n = self.insert_node(prim::SetAttr, &[o, v2], &[]);
                self.g
                    .set_attr(n, attr::name, AttributeValue::String(name.to_string()));
            }
            None => {
                // Attributes are defined by assignment in __init__.
                if !self.name.ends_with(".__init__") {
                    return self.err(range, format!("Tried to set nonexistent attribute: {name}. Did you forget to initialize it in __init__()?"));
                }
                c.add_attribute(name, super::annotations::unshaped(&vt), false, false);
                let n = self.insert_node(prim::SetAttr, &[o, v], &[]);
                self.g
                    .set_attr(n, attr::name, AttributeValue::String(name.to_string()));
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Calls

    /// Emits the arguments of a call (starred tuples expand into positional arguments).
    fn emit_args(
        &mut self,
        args: &[Expr],
        kwargs: &[(Ident, Expr)],
    ) -> CResult<(Vec<NamedValue>, Vec<NamedValue>)> {
        let mut pos = Vec::new();
        for a in args {
            if let ExprKind::Starred(inner) = &a.kind {
                let v = self.emit_expr(inner, None)?;
                if !matches!(**self.g.value(v).ty(), Type::Tuple(_)) {
                    return self.err(
                        &a.range,
                        "Starred expressions can only be used with tuple types",
                    );
                }
                pos.extend(
                    tuple_elements(&mut self.g, v)
                        .into_iter()
                        .map(NamedValue::pos),
                );
                continue;
            }
            pos.push(NamedValue::pos(self.emit_expr(a, None)?));
        }
        let mut kw = Vec::new();
        for (k, v) in kwargs {
            kw.push(NamedValue::kw(&k.name, self.emit_expr(v, None)?));
        }
        Ok((pos, kw))
    }

    /// A call expression.
    pub fn emit_call(
        &mut self,
        e: &Expr,
        func: &Expr,
        args: &[Expr],
        kwargs: &[(Ident, Expr)],
        hint: Option<&TypeRef>,
    ) -> CResult<Sugared> {
        let callee = self.emit_sugared(func, None)?;
        // Like PyTorch (`emitApplyExpr` calls with the callee's range), the nodes of a call
        // are located at the callee (`torch.add`, `x.add`, `g`), which is what a traceback
        // marks; argument expressions keep their own ranges.
        let at_callee = matches!(
            callee,
            Sugared::Builtin { .. }
                | Sugared::Function(_)
                | Sugared::Method { .. }
                | Sugared::TensorCast { .. }
        );
        let saved = at_callee.then(|| self.cur_range.replace(func.range.clone()));
        let r = self.emit_call_of(e, callee, args, kwargs, hint);
        if let Some(saved) = saved {
            self.cur_range = saved;
        }
        r
    }

    fn emit_call_of(
        &mut self,
        e: &Expr,
        callee: Sugared,
        args: &[Expr],
        kwargs: &[(Ident, Expr)],
        hint: Option<&TypeRef>,
    ) -> CResult<Sugared> {
        let range = &e.range;
        match callee {
            Sugared::Builtin {
                name,
                self_val: Some(v),
            } if name == Symbol::aten("__getitem__")
                && args.len() == 1
                && kwargs.is_empty()
                && self.g.value(v).ty().is_tensor() =>
            {
                // `x.__getitem__(i)` on a tensor is the subscript `x[i]`, as in PyTorch.
                Ok(Sugared::Simple(self.emit_subscript_value(v, args, range)?))
            }
            Sugared::Builtin {
                name,
                self_val: None,
            } if name == Symbol::aten("lu") => {
                Ok(Sugared::Simple(self.emit_lu_call(range, args, kwargs)?))
            }
            Sugared::Builtin {
                name,
                self_val: None,
            } if name == Symbol::aten("unique") || name == Symbol::aten("unique_consecutive") => {
                let consecutive = name == Symbol::aten("unique_consecutive");
                Ok(Sugared::Simple(self.emit_unique_call(
                    range,
                    consecutive,
                    args,
                    kwargs,
                )?))
            }
            Sugared::Builtin { name, self_val } => {
                let (mut pos, kw) = self.emit_args(args, kwargs)?;
                // Custom-class methods bound to operators pass the object as the operator's
                // first argument, which is not named `self` in those schemas.
                let self_val = match self_val {
                    Some(v) if self.is_custom_class_value(v) => {
                        pos.insert(0, NamedValue::pos(v));
                        None
                    }
                    other => other,
                };
                Ok(Sugared::Simple(
                    self.emit_builtin_call(range, name, pos, kw, self_val)?,
                ))
            }
            Sugared::Function(f) => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                Ok(Sugared::Simple(self.call_function(&f, pos, kw, range)?))
            }
            Sugared::BoolDispatch(d) => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                let flag = if d.index < pos.len() {
                    Some((
                        pos[d.index].value,
                        format!(
                            "Argument for boolean dispatch at position {} was not constant",
                            d.index
                        ),
                    ))
                } else {
                    kw.iter()
                        .find(|k| k.name.as_deref() == Some(d.arg))
                        .map(|k| {
                            (
                                k.value,
                                format!(
                                    "Keyword argument '{}' for boolean dispatch at position was not constant",
                                    d.arg
                                ),
                            )
                        })
                };
                let choice = match flag {
                    None => d.default,
                    Some((v, msg)) => match self.g.to_ivalue(v) {
                        Some(IValue::Bool(b)) => b,
                        _ => return self.err(range, msg),
                    },
                };
                let f = if choice { &d.if_true } else { &d.if_false };
                Ok(Sugared::Simple(self.call_function(f, pos, kw, range)?))
            }
            Sugared::Overloads(fs) => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                let f = self.pick_overload(&fs, &pos, &kw, range)?;
                Ok(Sugared::Simple(self.call_function(&f, pos, kw, range)?))
            }
            Sugared::TensorToList(x) => {
                if !args.is_empty() || !kwargs.is_empty() {
                    return self.err(range, "tolist() takes no arguments");
                }
                let Some(ty) = hint.cloned() else {
                    return self.err(range, "Expected type hint for result of tolist()");
                };
                let mut dims = 0i64;
                let mut elem = ty.clone();
                while let Type::List(e) = &*elem.clone() {
                    dims += 1;
                    elem = e.clone();
                }
                let code = match &*elem {
                    Type::Int => 0,
                    Type::Float => 1,
                    Type::Bool => 2,
                    _ => -1,
                };
                if dims == 0 || code < 0 {
                    return self.err(
                        range,
                        format!(
                            "Output annotation element type and runtime tensor element type must match for tolist(): {} is not a list of int, float or bool",
                            ty.annotation_str()
                        ),
                    );
                }
                let d = self.constant(IValue::Int(dims));
                let c = self.constant(IValue::Int(code));
                Ok(Sugared::Simple(self.insert1(
                    Symbol::prim("tolist"),
                    &[x, d, c],
                    ty,
                )))
            }
            Sugared::TensorCast { self_val, dtype } => {
                let (mut pos, kw) = self.emit_args(args, kwargs)?;
                let d = self.constant(IValue::Int(dtype.scalar_type_index()));
                pos.insert(0, NamedValue::pos(d));
                Ok(Sugared::Simple(self.emit_builtin_call(
                    range,
                    Symbol::aten("to"),
                    pos,
                    kw,
                    Some(self_val),
                )?))
            }
            Sugared::Method {
                self_val,
                class,
                name,
            } => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                Ok(Sugared::Simple(self.call_method_value(
                    self_val, &class, &name, pos, kw, range,
                )?))
            }
            Sugared::Class(c) => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                Ok(Sugared::Simple(self.construct_object(&c, pos, kw, range)?))
            }
            Sugared::ClassNew(c) => {
                // `Cls.__new__(Cls)`: the one argument must name the class itself.
                let same = args.len() == 1
                    && kwargs.is_empty()
                    && matches!(self.emit_sugared(&args[0], None)?, Sugared::Class(a) if a.name == c.name);
                if !same {
                    return self.err(
                        range,
                        format!(
                            "{}.__new__ takes the class itself as its only argument",
                            c.name
                        ),
                    );
                }
                self.ctx.ensure_class(&c.name)?;
                Ok(Sugared::Simple(self.insert1(
                    prim::CreateObject,
                    &[],
                    Type::class(c.clone()),
                )))
            }
            Sugared::NamedTuple(t) => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                Ok(Sugared::Simple(
                    self.construct_named_tuple(&t, pos, kw, range)?,
                ))
            }
            Sugared::Enum(en) => {
                // Enum(value) lookup is not supported; members are accessed as attributes.
                self.err(
                    range,
                    format!("calling the enum class '{}' is not supported", en.name),
                )
            }
            Sugared::Special(s) => self.emit_special(s, e, args, kwargs, hint),
            Sugared::TypeName(t) => {
                if t.is_tensor() {
                    return self.err(
                        range,
                        "torch.Tensor(...) is not supported; use torch.tensor",
                    );
                }
                self.err(
                    range,
                    format!("cannot call the type '{}'", t.annotation_str()),
                )
            }
            Sugared::Simple(v) => {
                let t = self.g.value(v).ty().clone();
                if let Some(c) = t.class_type().cloned() {
                    if c.find_method("__call__").is_some() || self.class_has_pending(&c, "__call__")
                    {
                        let (pos, kw) = self.emit_args(args, kwargs)?;
                        return Ok(Sugared::Simple(
                            self.call_method_value(v, &c, "__call__", pos, kw, range)?,
                        ));
                    }
                }
                self.err(
                    range,
                    format!("'{}' object is not callable", t.annotation_str()),
                )
            }
            Sugared::Module(m) => self.err(range, format!("Module '{m}' is not callable")),
            _ => self.err(range, "this value is not callable"),
        }
    }

    /// `torch.lu(A, pivot=True, get_infos=False)`: a Python function that TorchScript compiles
    /// by boolean dispatch on the constant `get_infos`; both forms call `aten::_lu_with_info`
    /// (errors checked unless infos are asked for) and return `(LU, pivots[, infos])`.
    fn emit_lu_call(
        &mut self,
        range: &SourceRange,
        args: &[Expr],
        kwargs: &[(Ident, Expr)],
    ) -> CResult<ValueId> {
        const PARAMS: [&str; 3] = ["A", "pivot", "get_infos"];
        let bound = self.bind_python_args(range, "lu", &PARAMS, args, kwargs)?;
        let Some(a) = bound[0] else {
            return self.err(range, "lu() missing required argument 'A'");
        };
        let get_infos = self.constant_flag(range, "lu", "get_infos", bound[2])?;
        let mut pos = vec![NamedValue::pos(self.emit_expr(a, None)?)];
        if let Some(p) = bound[1] {
            pos.push(NamedValue::pos(self.emit_expr(p, None)?));
        }
        let kw = vec![NamedValue::kw(
            "check_errors",
            self.constant(IValue::Bool(!get_infos)),
        )];
        let out = self.emit_builtin_call(range, Symbol::aten("_lu_with_info"), pos, kw, None)?;
        let elems = tuple_elements(&mut self.g, out);
        let n = if get_infos { 3 } else { 2 };
        Ok(self.g.insert_tuple(&elems[..n]))
    }

    /// Binds the positional and keyword arguments of a call to the Python function `fname`,
    /// whose parameters are `params`, the way Python does: one slot per parameter, `None` where
    /// the caller gave nothing; too many, unknown or repeated arguments are Python's errors.
    fn bind_python_args<'e>(
        &self,
        range: &SourceRange,
        fname: &str,
        params: &[&str],
        args: &'e [Expr],
        kwargs: &'e [(Ident, Expr)],
    ) -> CResult<Vec<Option<&'e Expr>>> {
        if args.len() > params.len() {
            return self.err(
                range,
                format!("{fname}() takes at most {} arguments", params.len()),
            );
        }
        let mut bound: Vec<Option<&Expr>> = vec![None; params.len()];
        for (slot, a) in bound.iter_mut().zip(args) {
            *slot = Some(a);
        }
        for (k, v) in kwargs {
            let Some(i) = params.iter().position(|p| *p == k.name) else {
                return self.err(
                    range,
                    format!("{fname}() got an unexpected keyword argument '{}'", k.name),
                );
            };
            if bound[i].is_some() {
                return self.err(
                    range,
                    format!("{fname}() got multiple values for argument '{}'", k.name),
                );
            }
            bound[i] = Some(v);
        }
        Ok(bound)
    }

    /// A flag that selects the result's shape at compile time (boolean dispatch): absent or the
    /// literal `False` is false, `True` is true, anything else is an error.
    fn constant_flag(
        &self,
        range: &SourceRange,
        fname: &str,
        param: &str,
        arg: Option<&Expr>,
    ) -> CResult<bool> {
        match arg.map(|e| &e.kind) {
            None | Some(ExprKind::False) => Ok(false),
            Some(ExprKind::True) => Ok(true),
            Some(_) => self.err(
                range,
                format!("{fname}(): '{param}' must be a constant True or False in TorchScript"),
            ),
        }
    }

    /// `torch.unique(input, sorted, return_inverse, return_counts, dim)` and
    /// `torch.unique_consecutive(input, return_inverse, return_counts, dim)`: Python functions
    /// that TorchScript compiles by boolean dispatch on the constant flags, so the result is the
    /// values alone or a tuple with the inverse and/or counts; they call `aten::_unique2`,
    /// `aten::unique_dim` or `aten::unique_consecutive`, which always return three tensors.
    fn emit_unique_call(
        &mut self,
        range: &SourceRange,
        consecutive: bool,
        args: &[Expr],
        kwargs: &[(Ident, Expr)],
    ) -> CResult<ValueId> {
        let params: &[&str] = if consecutive {
            &["input", "return_inverse", "return_counts", "dim"]
        } else {
            &["input", "sorted", "return_inverse", "return_counts", "dim"]
        };
        let fname = if consecutive {
            "unique_consecutive"
        } else {
            "unique"
        };
        let bound = self.bind_python_args(range, fname, params, args, kwargs)?;
        let Some(input) = bound[0] else {
            return self.err(
                range,
                format!("{fname}() missing required argument 'input'"),
            );
        };
        let at = |p: &str| params.iter().position(|q| *q == p).and_then(|i| bound[i]);
        let inverse = self.constant_flag(range, fname, "return_inverse", at("return_inverse"))?;
        let counts = self.constant_flag(range, fname, "return_counts", at("return_counts"))?;
        let dim = at("dim").filter(|e| !matches!(e.kind, ExprKind::None));
        let input = self.emit_expr(input, None)?;
        let mut kw = Vec::new();
        if !consecutive {
            if let Some(s) = at("sorted") {
                kw.push(NamedValue::kw("sorted", self.emit_expr(s, None)?));
            }
        }
        kw.push(NamedValue::kw(
            "return_inverse",
            self.constant(IValue::Bool(inverse)),
        ));
        kw.push(NamedValue::kw(
            "return_counts",
            self.constant(IValue::Bool(counts)),
        ));
        let mut pos = vec![NamedValue::pos(input)];
        let op = match (consecutive, dim) {
            (true, d) => {
                if let Some(d) = d {
                    kw.push(NamedValue::kw("dim", self.emit_expr(d, None)?));
                }
                "unique_consecutive"
            }
            (false, None) => "_unique2",
            (false, Some(d)) => {
                pos.push(NamedValue::pos(self.emit_expr(d, None)?));
                "unique_dim"
            }
        };
        let out = self.emit_builtin_call(range, Symbol::aten(op), pos, kw, None)?;
        let elems = tuple_elements(&mut self.g, out);
        let mut picked = vec![elems[0]];
        if inverse {
            picked.push(elems[1]);
        }
        if counts {
            picked.push(elems[2]);
        }
        Ok(if picked.len() == 1 {
            picked[0]
        } else {
            self.g.insert_tuple(&picked)
        })
    }

    /// A builtin operator call with PyTorch's overload resolution.
    /// True when `v` is an object of a C++ custom class (`__torch__.torch.classes.*`).
    fn is_custom_class_value(&self, v: ValueId) -> bool {
        matches!(&**self.g.value(v).ty(), Type::Class(c) if c.name.starts_with("__torch__.torch.classes."))
    }

    pub fn emit_builtin_call(
        &mut self,
        range: &SourceRange,
        name: Symbol,
        args: Vec<NamedValue>,
        kwargs: Vec<NamedValue>,
        self_val: Option<ValueId>,
    ) -> CResult<ValueId> {
        let mut schemas = schemas_for(name.qualified());
        if name.qualified() == "aten::stft" && self_val.is_none() {
            // `torch.stft` is Python in PyTorch (torch/functional.py): it centre-pads the signal
            // before calling the operator, which is the `.center` overload's behaviour. Calls
            // with the operator's full positional form (archive code) cannot match it; the
            // method `Tensor.stft` is the plain builtin, as in PyTorch.
            schemas.sort_by_key(|s| s.overload_name != "center");
        }
        let lib = super::library::builtin_overloads(name.qualified());
        let total = schemas.len() + lib.len();
        if total == 0 {
            if let Some(self_v) = self_val {
                let t = self.g.value(self_v).ty().clone();
                return self.err(
                    range,
                    format!(
                        "'{}' object has no attribute or method '{}'",
                        describe_type(&t),
                        name.name()
                    ),
                );
            }
            return self.err(range, format!("Unknown builtin op: {name}.\nCould not find any similar ops to {name}. This op may not exist or may not be currently supported in TorchScript."));
        }
        let lib_schemas: Vec<FunctionSchema> = lib
            .iter()
            .map(|f| {
                f.try_schema()
                    .unwrap_or_else(|| ts_core::types::ClassMethod::schema(&**f))
            })
            .collect();
        let passes: &[bool] = if total == 1 { &[true] } else { &[false, true] };
        let mut failures = String::new();
        for &conv in passes {
            failures.clear();
            for i in 0..total {
                let schema: &FunctionSchema = if i < schemas.len() {
                    &schemas[i]
                } else {
                    &lib_schemas[i - schemas.len()]
                };
                let checkpoint = self.g.node_slots();
                let mut why = String::new();
                match try_match_schema(
                    &mut self.g,
                    schema,
                    &args,
                    &kwargs,
                    self_val,
                    conv,
                    &mut why,
                ) {
                    Some(m) => {
                        if i < schemas.len() {
                            return Ok(self.emit_operator_node(name, m));
                        }
                        let f = lib[i - schemas.len()].clone();
                        let g = f.graph().ok_or_else(|| {
                            CompileError::new("library function without a body", range)
                        })?;
                        let outs = self
                            .g
                            .insert_graph(&g, &m.inputs)
                            .map_err(|e| CompileError::new(e.to_string(), range))?;
                        return Ok(outs[0]);
                    }
                    None => {
                        self.g.rollback_to(checkpoint);
                        failures.push_str(&format!("{schema}:\n{why}\n"));
                    }
                }
            }
        }
        if let Some(self_v) = self_val {
            let t = self.g.value(self_v).ty().clone();
            if schemas
                .iter()
                .all(|s| s.arguments.first().is_none_or(|a| a.name != "self"))
            {
                return self.err(
                    range,
                    format!(
                        "'{}' object has no attribute or method '{}'",
                        describe_type(&t),
                        name.name()
                    ),
                );
            }
        }
        let indented: String = failures.lines().map(|l| format!("  {l}\n")).collect();
        self.err(
            range,
            format!("Arguments for call are not valid.\nThe following variants are available:\n{indented}\nThe original call is"),
        )
    }

    fn emit_operator_node(&mut self, name: Symbol, m: Matched) -> ValueId {
        let n = self.insert_node(name, &m.inputs, &m.returns);
        let outs = self.g.node(n).outputs().to_vec();
        if outs.len() == 1 {
            return outs[0];
        }
        match &m.return_names {
            Some(names) => {
                let ty = Type::named_tuple(
                    format!("torch.return_types.{}", name.name()),
                    names.clone(),
                    m.returns.clone(),
                );
                let tn = self.insert_node(prim::TupleConstruct, &outs, &[ty]);
                self.g.node(tn).output(0)
            }
            None => self.g.insert_tuple(&outs),
        }
    }

    /// Calls a TorchScript function (`prim::CallFunction`).
    pub fn call_function(
        &mut self,
        f: &Arc<Function>,
        args: Vec<NamedValue>,
        kwargs: Vec<NamedValue>,
        range: &SourceRange,
    ) -> CResult<ValueId> {
        if !f.is_defined() {
            self.ctx.get_function(f.qualified_name(), range)?;
        }
        let schema = f.try_schema().ok_or_else(|| {
            CompileError::new(
                format!(
                    "function '{}' is called recursively. Recursive calls are not supported",
                    f.qualified_name()
                ),
                range,
            )
        })?;
        let m = self.match_user_schema(&schema, args, kwargs, None, range)?;
        let fv = self.as_simple(Sugared::Function(f.clone()), range)?;
        let mut inputs = vec![fv];
        inputs.extend(m.inputs);
        let ret = m.returns.first().cloned().unwrap_or_else(Type::none);
        Ok(self.insert1(prim::CallFunction, &inputs, ret))
    }

    /// The first of `fs` whose schema accepts the arguments (exact types first, then with
    /// conversions), as PyTorch resolves overloaded functions.
    fn pick_overload(
        &mut self,
        fs: &[Arc<Function>],
        args: &[NamedValue],
        kwargs: &[NamedValue],
        range: &SourceRange,
    ) -> CResult<Arc<Function>> {
        let mut failures = String::new();
        for conv in [false, true] {
            failures.clear();
            for f in fs {
                if !f.is_defined() {
                    self.ctx.get_function(f.qualified_name(), range)?;
                }
                let Some(schema) = f.try_schema() else {
                    continue;
                };
                let checkpoint = self.g.node_slots();
                let mut why = String::new();
                let m = try_match_schema(&mut self.g, &schema, args, kwargs, None, conv, &mut why);
                self.g.rollback_to(checkpoint);
                if m.is_some() {
                    return Ok(f.clone());
                }
                failures.push_str(&format!("{schema}:\n{why}\n"));
            }
        }
        let indented: String = failures.lines().map(|l| format!("  {l}\n")).collect();
        self.err(
            range,
            format!("Arguments for call are not valid.\nThe following variants are available:\n{indented}\nThe original call is"),
        )
    }

    fn match_user_schema(
        &mut self,
        schema: &FunctionSchema,
        args: Vec<NamedValue>,
        kwargs: Vec<NamedValue>,
        self_val: Option<ValueId>,
        range: &SourceRange,
    ) -> CResult<Matched> {
        for conv in [false, true] {
            let checkpoint = self.g.node_slots();
            let mut why = String::new();
            if let Some(m) = try_match_schema(
                &mut self.g,
                schema,
                &args,
                &kwargs,
                self_val,
                conv,
                &mut why,
            ) {
                return Ok(m);
            }
            self.g.rollback_to(checkpoint);
            if conv {
                return self.err(range, format!("{schema}:\n{why}"));
            }
        }
        unreachable_match()
    }

    /// True when `class` has a method `name` still waiting to be compiled.
    pub fn class_has_pending(&self, class: &Arc<ts_core::ClassType>, name: &str) -> bool {
        self.ctx
            .cu
            .find_function(&format!("{}.{name}", class.name))
            .is_some()
    }

    /// The return type of a method (compiling it if needed).
    pub fn method_return_type(
        &mut self,
        class: &Arc<ts_core::ClassType>,
        name: &str,
        range: &SourceRange,
    ) -> CResult<TypeRef> {
        let f = self.method_function(class, name, range)?;
        Ok(f.try_schema()
            .and_then(|s| s.returns.first().map(|r| r.ty.clone()))
            .unwrap_or_else(Type::none))
    }

    fn method_function(
        &mut self,
        class: &Arc<ts_core::ClassType>,
        name: &str,
        range: &SourceRange,
    ) -> CResult<Arc<Function>> {
        let q = format!("{}.{name}", class.name);
        if let Some(f) = self.ctx.compile_pending(&q, range)? {
            if f.is_defined() || f.try_schema().is_some() {
                return Ok(f);
            }
        }
        if let Some(m) = class.find_method(name) {
            if let Some(f) = self
                .ctx
                .cu
                .find_function(&format!("{}.{}", class.name, m.name()))
            {
                return Ok(f);
            }
        }
        self.err(
            range,
            format!(
                "'{}' object has no attribute or method '{name}'",
                class.name
            ),
        )
    }

    /// Calls a method of an object value (`prim::CallMethod`).
    pub fn call_method_value(
        &mut self,
        obj: ValueId,
        class: &Arc<ts_core::ClassType>,
        name: &str,
        args: Vec<NamedValue>,
        kwargs: Vec<NamedValue>,
        range: &SourceRange,
    ) -> CResult<ValueId> {
        let f = self.method_function(class, name, range)?;
        let schema = f.try_schema().ok_or_else(|| {
            CompileError::new(
                format!("method '{name}' is called recursively. Recursive calls are not supported"),
                range,
            )
        })?;
        // Match without the `self` argument.
        let mut rest = schema.clone();
        rest.arguments.remove(0);
        let m = self.match_user_schema(&rest, args, kwargs, None, range)?;
        let mut inputs = vec![obj];
        inputs.extend(m.inputs);
        let ret = m.returns.first().cloned().unwrap_or_else(Type::none);
        let n = self.insert_node(prim::CallMethod, &inputs, &[ret]);
        self.g
            .set_attr(n, attr::name, AttributeValue::String(name.to_string()));
        Ok(self.g.node(n).output(0))
    }

    fn construct_object(
        &mut self,
        c: &Arc<ts_core::ClassType>,
        args: Vec<NamedValue>,
        kwargs: Vec<NamedValue>,
        range: &SourceRange,
    ) -> CResult<ValueId> {
        self.ctx.ensure_class(&c.name)?;
        let obj = self.insert1(prim::CreateObject, &[], Type::class(c.clone()));
        if c.find_method("__init__").is_some() || self.class_has_pending(c, "__init__") {
            self.call_method_value(obj, c, "__init__", args, kwargs, range)?;
        } else if !args.is_empty() || !kwargs.is_empty() {
            return self.err(range, format!("class '{}' takes no arguments", c.name));
        }
        Ok(obj)
    }

    fn construct_named_tuple(
        &mut self,
        t: &TypeRef,
        args: Vec<NamedValue>,
        kwargs: Vec<NamedValue>,
        range: &SourceRange,
    ) -> CResult<ValueId> {
        let Type::Tuple(tt) = &**t else {
            return self.err(range, "not a named tuple");
        };
        let info = tt.names.clone().expect("named tuple");
        let schema = FunctionSchema {
            name: info.qualified_name.clone(),
            overload_name: String::new(),
            arguments: info
                .fields
                .iter()
                .zip(&tt.elements)
                .enumerate()
                .map(|(i, (f, ty))| ts_core::Argument {
                    name: f.clone(),
                    ty: ty.clone(),
                    real_ty: None,
                    n: None,
                    default: info
                        .defaults
                        .get(i)
                        .cloned()
                        .flatten()
                        .and_then(|d| parse_default_text(&d)),
                    kwarg_only: false,
                    alias_info: None,
                })
                .collect(),
            returns: vec![],
            is_vararg: false,
            is_varret: false,
        };
        let m = self.match_user_schema(&schema, args, kwargs, None, range)?;
        let n = self.insert_node(prim::TupleConstruct, &m.inputs, std::slice::from_ref(t));
        Ok(self.g.node(n).output(0))
    }

    // -----------------------------------------------------------------------------------------
    // Special forms

    fn emit_special(
        &mut self,
        s: Special,
        e: &Expr,
        args: &[Expr],
        kwargs: &[(Ident, Expr)],
        hint: Option<&TypeRef>,
    ) -> CResult<Sugared> {
        let range = &e.range;
        let simple = |v| Ok(Sugared::Simple(v));
        match s {
            Special::Slice => {
                if !kwargs.is_empty() || args.is_empty() || args.len() > 3 {
                    return self.err(range, "slice expected 1 to 3 positional arguments");
                }
                let mut vals = Vec::new();
                for a in args {
                    vals.push(match a.kind {
                        ExprKind::None => None,
                        _ => Some(self.emit_expr(a, None)?),
                    });
                }
                // `slice(stop)` or `slice(start, stop[, step])`.
                let (start, end, step) = match vals.as_slice() {
                    [stop] => (None, *stop, None),
                    [a, b] => (*a, *b, None),
                    [a, b, c] => (*a, *b, *c),
                    _ => (None, None, None),
                };
                Ok(Sugared::Slice { start, end, step })
            }
            Special::Print => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                if !kw.is_empty() {
                    return self.err(range, "print doesn't accept any keyword arguments");
                }
                let ins: Vec<ValueId> = pos.iter().map(|a| a.value).collect();
                self.insert_node(prim::Print, &ins, &[]);
                simple(self.constant(IValue::None))
            }
            Special::Len => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                simple(self.magic_or_builtin(
                    range,
                    "__len__",
                    Symbol::aten("len"),
                    [pos, kw].concat(),
                )?)
            }
            Special::Range | Special::Enumerate | Special::Zip | Special::Reversed => {
                let it = self.special_iterable(s, args, range)?;
                Ok(Sugared::Iterable(it))
            }
            Special::IsInstance => {
                if args.len() != 2 || !kwargs.is_empty() {
                    return self.err(range, "isinstance expects 2 arguments");
                }
                simple(self.emit_isinstance(range, &args[0], &args[1])?.value)
            }
            Special::Annotate => {
                if args.len() != 2 || !kwargs.is_empty() {
                    return self.err(range, "annotate expects a type and a value");
                }
                let ty = type_from_expr(&args[0], &*self.ctx)?;
                let v = self.emit_expr(&args[1], Some(&ty))?;
                let v = try_convert(&mut self.g, &ty, v, true);
                let vt = self.g.value(v).ty().clone();
                if !vt.is_subtype_of(&ty) {
                    return self.err(
                        range,
                        format!(
                            "expected an expression of type {} but found {}",
                            ty.annotation_str(),
                            vt.annotation_str()
                        ),
                    );
                }
                // Record the annotated type on the value itself.
                self.g.set_type(v, ty);
                simple(v)
            }
            Special::UncheckedCast => {
                if args.len() != 2 || !kwargs.is_empty() {
                    return self.err(range, "unchecked_cast expects a type and a value");
                }
                let ty = type_from_expr(&args[0], &*self.ctx)?;
                let v = self.emit_expr(&args[1], None)?;
                simple(self.insert1(prim::unchecked_cast, &[v], ty))
            }
            Special::Uninitialized => {
                if args.len() != 1 || !kwargs.is_empty() {
                    return self.err(range, "uninitialized expects exactly one type argument");
                }
                let ty = type_from_expr(&args[0], &*self.ctx)?;
                simple(self.insert1(prim::Uninitialized, &[], ty))
            }
            Special::Fork => self.emit_fork(range, args, kwargs),
            Special::Wait => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                simple(self.emit_builtin_call(range, Symbol::aten("wait"), pos, kw, None)?)
            }
            Special::GetAttr => {
                if args.len() != 2 || !kwargs.is_empty() {
                    return self.err(range, "getattr expects 2 arguments");
                }
                let ExprKind::Str(name) = &args[1].kind else {
                    return self.err(
                        &args[1].range,
                        "getattr's second argument must be a string literal",
                    );
                };
                let base = self.emit_sugared(&args[0], None)?;
                self.emit_attr(base, name, range)
            }
            Special::HasAttr => {
                // `emit_cond` handles the two-argument form; any other would come back here.
                if args.len() != 2 || !kwargs.is_empty() {
                    return self.err(range, "hasattr expects 2 arguments: an object and a name");
                }
                simple(self.emit_cond(e)?.value)
            }
            Special::Tuple => {
                if args.len() != 1 {
                    return self.err(range, "tuple() expects exactly one argument");
                }
                let v = self.emit_expr(&args[0], None)?;
                if matches!(**self.g.value(v).ty(), Type::Tuple(_)) {
                    return simple(v);
                }
                self.err(
                    range,
                    "tuple() can only be applied to tuples in TorchScript",
                )
            }
            Special::List => {
                if args.is_empty() {
                    let elem = hint
                        .and_then(|h| h.list_elem().cloned())
                        .unwrap_or_else(Type::tensor);
                    return simple(self.g.insert_list(elem, &[]));
                }
                let v = match self.emit_sugared(&args[0], None)? {
                    Sugared::Simple(v) => v,
                    // `list(iter)` desugars to `[_elem for _elem in iter]` (PyTorch's
                    // `emitApplySpecialForm` for `prim::list`).
                    other => return simple(self.emit_comprehension_of(range, other, false, hint)?),
                };
                let t = self.g.value(v).ty().clone();
                match &*t {
                    Type::Str => simple(self.emit_builtin_call(
                        range,
                        Symbol::aten("list"),
                        vec![NamedValue::pos(v)],
                        vec![],
                        None,
                    )?),
                    Type::Tuple(_) => {
                        let elems = tuple_elements(&mut self.g, v);
                        let tys: Vec<TypeRef> = elems
                            .iter()
                            .map(|&x| self.g.value(x).ty().clone())
                            .collect();
                        let elem = ts_core::unify_type_list(&tys, false).ok_or_else(|| {
                            CompileError::new("list() of a heterogeneous tuple", range)
                        })?;
                        simple(self.g.insert_list(elem, &elems))
                    }
                    Type::Dict(..) => simple(self.emit_builtin_call(
                        range,
                        Symbol::aten("keys"),
                        vec![NamedValue::pos(v)],
                        vec![],
                        None,
                    )?),
                    _ => simple(self.emit_builtin_call(
                        range,
                        Symbol::aten("list"),
                        vec![NamedValue::pos(v)],
                        vec![],
                        None,
                    )?),
                }
            }
            Special::Dict => {
                if args.is_empty() && kwargs.is_empty() {
                    let (k, v) = match hint.map(|h| &**h) {
                        Some(Type::Dict(k, v)) => (k.clone(), v.clone()),
                        _ => (Type::string(), Type::tensor()),
                    };
                    return simple(self.insert1(prim::DictConstruct, &[], Type::dict(k, v)));
                }
                if args.len() > 1 {
                    return self.err(
                        range,
                        format!("dict expected at most 1 argument, got {}", args.len()),
                    );
                }
                let Some(first) = args.first() else {
                    // `dict(a=1, b=2)` is `{k: v for k, v in [("a", 1), ("b", 2)]}`, as PyTorch
                    // emits it.
                    let pairs = Expr {
                        kind: ExprKind::List(
                            kwargs
                                .iter()
                                .map(|(k, v)| {
                                    let key = Expr {
                                        kind: ExprKind::Str(k.name.clone()),
                                        range: k.range.clone(),
                                    };
                                    Expr {
                                        kind: ExprKind::Tuple(vec![key, v.clone()]),
                                        range: k.range.clone(),
                                    }
                                })
                                .collect(),
                        ),
                        range: range.clone(),
                    };
                    let list = Sugared::Simple(self.emit_expr(&pairs, None)?);
                    return simple(self.emit_comprehension_of(range, list, true, hint)?);
                };
                let d = match self.emit_sugared(first, None)? {
                    Sugared::Simple(v) if matches!(**self.g.value(v).ty(), Type::Dict(..)) => self
                        .emit_builtin_call(
                            range,
                            Symbol::aten("dict"),
                            vec![NamedValue::pos(v)],
                            vec![],
                            None,
                        )?,
                    // Other iterables of pairs: `{k: v for k, v in iter}`.
                    other => self.emit_comprehension_of(range, other, true, hint)?,
                };
                // Keyword arguments are added after the positional contents.
                for (k, e) in kwargs {
                    let key = self.constant(IValue::str(k.name.clone()));
                    let v = self.emit_expr(e, None)?;
                    self.emit_builtin_call(
                        range,
                        Symbol::aten("_set_item"),
                        vec![NamedValue::pos(d), NamedValue::pos(key), NamedValue::pos(v)],
                        vec![],
                        None,
                    )?;
                }
                simple(d)
            }
            Special::Int | Special::Float | Special::Bool | Special::Str | Special::Complex => {
                let (target, kind, magic) = match s {
                    Special::Int => (Type::int(), "Int", "__int__"),
                    Special::Float => (Type::float(), "Float", "__float__"),
                    Special::Bool => (Type::bool(), "Bool", "__bool__"),
                    Special::Str => (Type::string(), "str", "__str__"),
                    _ => (Type::complex(), "Complex", "__complex__"),
                };
                if args.is_empty() {
                    let d = match s {
                        Special::Int => IValue::Int(0),
                        Special::Float => IValue::Double(0.0),
                        Special::Bool => IValue::Bool(false),
                        Special::Str => IValue::str(""),
                        _ => IValue::complex(0.0, 0.0),
                    };
                    return simple(self.constant(d));
                }
                let (pos, kw) = self.emit_args(args, kwargs)?;
                if pos.len() == 1 && kw.is_empty() {
                    let v = pos[0].value;
                    let vt = self.g.value(v).ty().clone();
                    if let Some(c) = vt.class_type().cloned() {
                        if c.find_method(magic).is_some() || self.class_has_pending(&c, magic) {
                            return simple(self.call_method_value(
                                v,
                                &c,
                                magic,
                                vec![],
                                vec![],
                                range,
                            )?);
                        }
                    }
                    if vt.is_subtype_of(&target) {
                        return simple(v);
                    }
                    if s == Special::Bool
                        && matches!(*vt, Type::List(_) | Type::Str | Type::Dict(..))
                    {
                        return simple(self.emit_to_bool(range, v)?);
                    }
                }
                simple(self.emit_builtin_call(range, Symbol::aten(kind), pos, kw, None)?)
            }
            Special::Tensor => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                simple(self.emit_builtin_call(range, Symbol::aten("tensor"), pos, kw, None)?)
            }
            Special::Device => {
                let (pos, kw) = self.emit_args(args, kwargs)?;
                simple(self.emit_builtin_call(range, Symbol::aten("device"), pos, kw, None)?)
            }
            Special::IsScripting => simple(self.constant(IValue::Bool(true))),
            Special::Warn => {
                let (pos, _) = self.emit_args(args, kwargs)?;
                let msg = pos
                    .first()
                    .map(|a| a.value)
                    .ok_or_else(|| CompileError::new("warn expects a message", range))?;
                let lvl = self.constant(IValue::Int(2));
                self.emit_builtin_call(
                    range,
                    Symbol::aten("warn"),
                    vec![NamedValue::pos(msg), NamedValue::pos(lvl)],
                    vec![],
                    None,
                )?;
                simple(self.constant(IValue::None))
            }
            other => self.err(range, format!("{other:?} cannot be called here")),
        }
    }

    /// `isinstance(x, T)`: static when the type of `x` decides it, else `prim::isinstance`
    /// with a refinement of `x`.
    pub fn emit_isinstance(
        &mut self,
        _range: &SourceRange,
        obj: &Expr,
        types: &Expr,
    ) -> CResult<CondValue> {
        let v = self.emit_expr(obj, None)?;
        let vt = self.g.value(v).ty().clone();
        let mut candidates: Vec<TypeRef> = Vec::new();
        let exprs: Vec<&Expr> = match &types.kind {
            ExprKind::Tuple(v) => v.iter().collect(),
            _ => vec![types],
        };
        for te in exprs {
            let t = match te.dotted_name().as_deref() {
                Some("list") | Some("List") => Type::any_list(),
                Some("tuple") | Some("Tuple") => Type::any_tuple(),
                Some("dict") | Some("Dict") => Type::dict(Type::any(), Type::any()),
                _ => type_from_expr(te, &*self.ctx)?,
            };
            candidates.push(t);
        }
        let matches_static = |t: &TypeRef| -> Option<bool> {
            let dict_any = |x: &TypeRef| matches!(&**x, Type::Dict(k, v) if matches!(**k, Type::Any) && matches!(**v, Type::Any));
            if dict_any(t) {
                return Some(matches!(*vt, Type::Dict(..)));
            }
            if vt.is_subtype_of(t) {
                return Some(true);
            }
            // Optional/Union/Any values are decided at run time.
            if matches!(*vt, Type::Optional(_) | Type::Union(_) | Type::Any) {
                return None;
            }
            Some(false)
        };
        let statuses: Vec<Option<bool>> = candidates.iter().map(matches_static).collect();
        if statuses.contains(&Some(true)) {
            let c = self.constant(IValue::Bool(true));
            let mut refs = Refinements::default();
            if let ExprKind::Name(n) = &obj.kind {
                if candidates.len() == 1 && !vt.is_subtype_of(&candidates[0]) {
                    refs.on_true.push((n.clone(), candidates[0].clone()));
                }
            }
            return Ok(CondValue {
                value: c,
                refinements: refs,
                static_if: Some(true),
            });
        }
        if statuses.iter().all(|s| *s == Some(false)) {
            let c = self.constant(IValue::Bool(false));
            return Ok(CondValue {
                value: c,
                refinements: Refinements::default(),
                static_if: Some(false),
            });
        }
        let out = self.insert1(prim::isinstance, &[v], Type::bool());
        let n = self.g.value(out).node();
        self.g.set_attr(
            n,
            Symbol::attr("types"),
            AttributeValue::Types(candidates.clone()),
        );
        let mut refs = Refinements::default();
        if let ExprKind::Name(name) = &obj.kind {
            let refined = if candidates.len() == 1 {
                candidates[0].clone()
            } else {
                Type::union(candidates.clone())
            };
            // On the false branch the members that cannot match remain (Union[int, str]
            // minus int is str).
            let members: Vec<TypeRef> = match &*vt {
                Type::Union(ms) => ms.clone(),
                Type::Optional(e) => vec![e.clone(), Type::none()],
                _ => Vec::new(),
            };
            let rest: Vec<TypeRef> = members
                .into_iter()
                .filter(|m| !candidates.iter().any(|c| m.is_subtype_of(c)))
                .collect();
            if !rest.is_empty() {
                let t = if rest.len() == 1 {
                    rest[0].clone()
                } else {
                    Type::union(rest)
                };
                refs.on_false.push((name.clone(), t));
            }
            refs.on_true.push((name.clone(), refined));
        }
        Ok(CondValue {
            value: out,
            refinements: refs,
            static_if: None,
        })
    }

    /// `torch.jit.fork(fn, *args)`: a `prim::fork` whose subgraph calls `fn`.
    fn emit_fork(
        &mut self,
        range: &SourceRange,
        args: &[Expr],
        kwargs: &[(Ident, Expr)],
    ) -> CResult<Sugared> {
        if args.is_empty() {
            return self.err(range, "fork expects a function to call");
        }
        let callee = self.emit_sugared(&args[0], None)?;
        let (pos, kw) = self.emit_args(&args[1..], kwargs)?;
        let inputs: Vec<ValueId> = pos.iter().chain(kw.iter()).map(|a| a.value).collect();
        // The subgraph takes the call's inputs and performs the call.
        let mut sub = ts_ir::Graph::new();
        let sub_inputs: Vec<ValueId> = inputs
            .iter()
            .map(|&v| {
                let t = self.g.value(v).ty().clone();
                let si = sub.add_graph_input(t);
                if let Some(name) = self.g.value(v).debug_name() {
                    let _ = sub.set_debug_name(si, name);
                }
                si
            })
            .collect();
        let npos = pos.len();
        let sub_pos: Vec<NamedValue> = sub_inputs[..npos]
            .iter()
            .map(|&v| NamedValue::pos(v))
            .collect();
        let sub_kw: Vec<NamedValue> = kw
            .iter()
            .zip(&sub_inputs[npos..])
            .map(|(k, &v)| NamedValue {
                name: k.name.clone(),
                value: v,
            })
            .collect();
        // Emit the call inside the subgraph by temporarily swapping graphs.
        let outer = std::mem::replace(&mut self.g, sub);
        let saved_frames = std::mem::take(&mut self.env.frames);
        let top = self.g.block();
        self.env.frames.push(super::environment::Frame::new(top));
        let r = match &callee {
            Sugared::Function(f) => self.call_function(f, sub_pos, sub_kw, range),
            Sugared::Builtin {
                name,
                self_val: None,
            } => self.emit_builtin_call(range, *name, sub_pos, sub_kw, None),
            _ => self.err(range, "fork expects a function"),
        };
        self.env.frames = saved_frames;
        let mut sub = std::mem::replace(&mut self.g, outer);
        let out = r?;
        sub.register_output(out);
        let ret_ty = sub.value(out).ty().clone();
        let n = self.insert_node(prim::fork, &inputs, &[Type::future(ret_ty)]);
        self.g.set_attr(
            n,
            Symbol::attr("Subgraph"),
            AttributeValue::Graph(Arc::new(sub)),
        );
        Ok(Sugared::Simple(self.g.node(n).output(0)))
    }

    /// `[_elem for _elem in it]` (or `{k: v for k, v in it}` when `dict`) over an already
    /// emitted sugared iterable, bound to a temporary name as PyTorch's emitter does.
    fn emit_comprehension_of(
        &mut self,
        range: &SourceRange,
        it: Sugared,
        dict: bool,
        hint: Option<&TypeRef>,
    ) -> CResult<ValueId> {
        let at = range.start;
        let iter_name = format!("$_iter_{at}");
        self.set_sugared(range, &iter_name, it)?;
        let name = |n: String| Expr {
            kind: ExprKind::Name(n),
            range: range.clone(),
        };
        let iter = Box::new(name(iter_name));
        let kind = if dict {
            let (k, v) = (format!("$_key_{at}"), format!("$_value_{at}"));
            ExprKind::DictComp {
                key: Box::new(name(k.clone())),
                value: Box::new(name(v.clone())),
                target: Box::new(Expr {
                    kind: ExprKind::Tuple(vec![name(k), name(v)]),
                    range: range.clone(),
                }),
                iter,
                cond: None,
            }
        } else {
            let elem = format!("$_elem_{at}");
            ExprKind::ListComp {
                elt: Box::new(name(elem.clone())),
                target: Box::new(name(elem)),
                iter,
                cond: None,
            }
        };
        self.emit_expr(
            &Expr {
                kind,
                range: range.clone(),
            },
            hint,
        )
    }

    // -----------------------------------------------------------------------------------------
    // Subscripts

    /// `base[subs]` for a sugared base.
    pub fn emit_subscript(
        &mut self,
        base: Sugared,
        subs: &[Expr],
        range: &SourceRange,
        _hint: Option<&TypeRef>,
    ) -> CResult<Sugared> {
        match base {
            Sugared::Simple(v) => Ok(Sugared::Simple(self.emit_subscript_value(v, subs, range)?)),
            Sugared::Tuple(items) => {
                if subs.len() != 1 {
                    return self.err(range, "tuple index must be a single integer");
                }
                match &subs[0].kind {
                    ExprKind::Int(i) => {
                        let n = items.len() as i64;
                        let k = if *i < 0 { i + n } else { *i };
                        items
                            .get(k as usize)
                            .cloned()
                            .ok_or_else(|| CompileError::new("tuple index out of range", range))
                    }
                    _ => self.err(range, "tuple index must be an integer literal"),
                }
            }
            Sugared::Module(m) if m.starts_with("typing.") => {
                self.err(range, "type annotations cannot be used as values")
            }
            _ => self.err(range, "this value is not subscriptable"),
        }
    }

    /// `value[subs]`.
    pub fn emit_subscript_value(
        &mut self,
        v: ValueId,
        subs: &[Expr],
        range: &SourceRange,
    ) -> CResult<ValueId> {
        let t = self.g.value(v).ty().clone();
        if t.is_tensor() {
            return self.emit_multidim_slicing(v, subs, range);
        }
        if subs.len() != 1 {
            return self.err(range, "Unsupported operation: attempted to use multidimensional indexing on a non-tensor type");
        }
        let sub = &subs[0];
        if let ExprKind::Slice { start, end, step } = &sub.kind {
            if let Type::Tuple(tt) = &*t {
                let n = tt.elements.len() as i64;
                let bound = |e: &Option<Box<Expr>>| -> CResult<Option<i64>> {
                    match e.as_deref().map(super::function::const_expr) {
                        None | Some(Some(IValue::None)) => Ok(None),
                        Some(Some(IValue::Int(i))) => Ok(Some(i)),
                        _ => Err(CompileError::new(
                            "tuple slice indices must be integer constants",
                            range,
                        )),
                    }
                };
                let step = bound(step)?.unwrap_or(1);
                if step == 0 {
                    return self.err(range, "slice step cannot be zero");
                }
                let picked = tuple_slice_indices(n, bound(start)?, bound(end)?, step);
                return Ok(self.emit_tuple_slice(v, &tt.elements, &picked));
            }
            let mut args = vec![NamedValue::pos(v)];
            for x in [start, end] {
                args.push(NamedValue::pos(match x {
                    Some(e) => self.emit_expr(e, None)?,
                    None => self.constant(IValue::None),
                }));
            }
            args.push(NamedValue::pos(match step {
                Some(e) => self.emit_expr(e, None)?,
                None => self.constant(IValue::Int(1)),
            }));
            return self.emit_builtin_call(range, Symbol::aten("slice"), args, vec![], None);
        }
        let idx = match self.emit_sugared(sub, None)? {
            Sugared::Slice { start, end, step } => {
                return self.emit_slice_object(v, start, end, step, range)
            }
            other => self.as_simple(other, &sub.range)?,
        };
        match &*t {
            Type::Tuple(tt) => {
                if let Some(i) = self.g.to_ivalue(idx).and_then(|c| c.as_int()) {
                    let n = tt.elements.len() as i64;
                    let k = if i < 0 { i + n } else { i };
                    if k < 0 || k >= n {
                        return self.err(
                            range,
                            format!(
                                "Tuple index out of range. Tuple is length {n} and index is {i}"
                            ),
                        );
                    }
                    // PyTorch keeps the index as written (`b[-2]`), only the type uses `k`.
                    let ty = tt.elements[k as usize].clone();
                    return Ok(self.insert1(prim::TupleIndex, &[v, idx], ty));
                }
                let unified = ts_core::unify_type_list(&tt.elements, false).ok_or_else(|| {
                    CompileError::new(
                        "tuple indices must be constants unless all elements have one type",
                        range,
                    )
                })?;
                Ok(self.insert1(prim::TupleIndex, &[v, idx], unified))
            }
            Type::Class(c) => {
                let c = c.clone();
                self.call_method_value(
                    v,
                    &c,
                    "__getitem__",
                    vec![NamedValue::pos(idx)],
                    vec![],
                    range,
                )
            }
            Type::List(_) | Type::Str | Type::Dict(..) => self.emit_builtin_call(
                range,
                Symbol::aten("__getitem__"),
                vec![NamedValue::pos(v), NamedValue::pos(idx)],
                vec![],
                None,
            ),
            _ => self.err(
                range,
                format!("'{}' object is not subscriptable", t.annotation_str()),
            ),
        }
    }

    /// PyTorch's `createTupleSlice`: a `prim::TupleIndex` per picked element, then a tuple.
    fn emit_tuple_slice(&mut self, v: ValueId, elements: &[TypeRef], picked: &[usize]) -> ValueId {
        let items: Vec<ValueId> = picked
            .iter()
            .map(|&i| {
                let k = self.constant(IValue::Int(i as i64));
                self.insert1(prim::TupleIndex, &[v, k], elements[i].clone())
            })
            .collect();
        self.g.insert_tuple(&items)
    }

    /// `value[slice(start, stop, step)]` on a list, str or tuple (bounds already emitted).
    fn emit_slice_object(
        &mut self,
        v: ValueId,
        start: Option<ValueId>,
        end: Option<ValueId>,
        step: Option<ValueId>,
        range: &SourceRange,
    ) -> CResult<ValueId> {
        if let Type::Tuple(tt) = &**self.g.value(v).ty() {
            let n = tt.elements.len() as i64;
            let bound = |x: Option<ValueId>| -> CResult<Option<i64>> {
                match x.map(|x| self.g.to_ivalue(x)) {
                    None | Some(Some(IValue::None)) => Ok(None),
                    Some(Some(IValue::Int(i))) => Ok(Some(i)),
                    _ => Err(CompileError::new(
                        "tuple slice indices must be integer constants",
                        range,
                    )),
                }
            };
            let (s, e, st) = (bound(start)?, bound(end)?, bound(step)?.unwrap_or(1));
            if st == 0 {
                return self.err(range, "slice step cannot be zero");
            }
            let elements = tt.elements.clone();
            let picked = tuple_slice_indices(n, s, e, st);
            return Ok(self.emit_tuple_slice(v, &elements, &picked));
        }
        // A slice object's missing bounds are 0 and INT64_MAX (what PyTorch's graphs show).
        let start = match start {
            Some(x) => x,
            None => self.constant(IValue::Int(0)),
        };
        let end = match end {
            Some(x) => x,
            None => self.constant(IValue::Int(i64::MAX)),
        };
        let step = match step {
            Some(x) => x,
            None => self.constant(IValue::Int(1)),
        };
        let args = [v, start, end, step].map(NamedValue::pos).to_vec();
        self.emit_builtin_call(range, Symbol::aten("slice"), args, vec![], None)
    }

    /// PyTorch's `emitIntAndSliceIndexing` + `emitIndex` for tensors.
    fn emit_multidim_slicing(
        &mut self,
        v: ValueId,
        subs: &[Expr],
        range: &SourceRange,
    ) -> CResult<ValueId> {
        let n = subs.len();
        let mut dims = vec![0i64; n];
        let mut exprs: Vec<Option<ValueId>> = vec![None; n];
        let mut handle = |s: &mut FunctionEmitter<'_>,
                          i: usize,
                          dim: i64,
                          reverse: bool|
         -> CResult<i64> {
            dims[i] = dim;
            let e = &subs[i];
            if let ExprKind::Slice { .. } = e.kind {
                return Ok(if reverse { dim - 1 } else { dim + 1 });
            }
            let hint = if matches!(e.kind, ExprKind::None) {
                Some(Type::none())
            } else {
                None
            };
            let mut idx = s.emit_expr(e, hint.as_ref())?;
            if matches!(**s.g.value(idx).ty(), Type::List(_)) {
                let long = s.constant(IValue::Int(DType::Int64.scalar_type_index()));
                idx = s.emit_builtin_call(
                    range,
                    Symbol::aten("tensor"),
                    vec![NamedValue::pos(idx)],
                    vec![NamedValue::kw("dtype", long)],
                    None,
                )?;
            }
            exprs[i] = Some(idx);
            let it = s.g.value(idx).ty().clone();
            if it.is_none_type() {
                Ok(if reverse { dim } else { dim + 1 })
            } else if it.is_int() {
                Ok(if reverse { dim - 1 } else { dim })
            } else if it.is_subtype_of(&Type::optional(Type::tensor())) {
                if reverse {
                    return Err(CompileError::new(
                        "Ellipses followed by tensor indexing is currently not supported",
                        range,
                    ));
                }
                Ok(dim + 1)
            } else {
                Err(CompileError::new(
                    format!(
                        "Unsupported operation: indexing tensor with unsupported index type '{}'. Only ints, slices, lists and tensors are supported",
                        it.annotation_str()
                    ),
                    range,
                ))
            }
        };
        let mut idx = 0;
        let mut dim = 0i64;
        while idx < n {
            if matches!(subs[idx].kind, ExprKind::Ellipsis) {
                break;
            }
            dim = handle(self, idx, dim, false)?;
            idx += 1;
        }
        let mut rdim = -1i64;
        let mut r = n;
        while r > idx + 1 {
            r -= 1;
            if matches!(subs[r].kind, ExprKind::Ellipsis) {
                return self.err(range, "An index can only have a single ellipsis ('...')");
            }
            rdim = handle(self, r, rdim, true)?;
        }
        let mut sliceable = v;
        let mut tensor_indices: Vec<Option<ValueId>> = Vec::new();
        for i in 0..n {
            match exprs[i] {
                None => {
                    if let ExprKind::Slice { start, end, step } = &subs[i].kind {
                        let d = self.constant(IValue::Int(dims[i]));
                        let mut args = vec![NamedValue::pos(sliceable), NamedValue::pos(d)];
                        for x in [start, end] {
                            args.push(NamedValue::pos(match x {
                                Some(e) => self.emit_expr(e, None)?,
                                None => self.constant(IValue::None),
                            }));
                        }
                        args.push(NamedValue::pos(match step {
                            Some(e) => self.emit_expr(e, None)?,
                            None => self.constant(IValue::Int(1)),
                        }));
                        sliceable = self.emit_builtin_call(
                            range,
                            Symbol::aten("slice"),
                            args,
                            vec![],
                            None,
                        )?;
                    }
                }
                Some(e) => {
                    let et = self.g.value(e).ty().clone();
                    if et.is_none_type() {
                        let d = self.constant(IValue::Int(dims[i]));
                        sliceable = self.emit_builtin_call(
                            range,
                            Symbol::aten("unsqueeze"),
                            vec![NamedValue::pos(sliceable), NamedValue::pos(d)],
                            vec![],
                            None,
                        )?;
                    } else if et.is_int() {
                        let d = self.constant(IValue::Int(dims[i]));
                        sliceable = self.emit_builtin_call(
                            range,
                            Symbol::aten("select"),
                            vec![
                                NamedValue::pos(sliceable),
                                NamedValue::pos(d),
                                NamedValue::pos(e),
                            ],
                            vec![],
                            None,
                        )?;
                    } else {
                        let d = dims[i] as usize;
                        if tensor_indices.len() <= d {
                            tensor_indices.resize(d + 1, None);
                        }
                        tensor_indices[d] = Some(e);
                    }
                }
            }
        }
        if tensor_indices.is_empty() {
            return Ok(sliceable);
        }
        let idx_vals: Vec<ValueId> = tensor_indices
            .into_iter()
            .map(|x| match x {
                Some(v) => v,
                None => {
                    let c = self.g.create(prim::Constant, &[], 0);
                    let o = self.g.add_output(c, Type::none());
                    self.g.insert_node(c);
                    o
                }
            })
            .collect();
        let list = self
            .g
            .insert_list(Type::optional(Type::tensor()), &idx_vals);
        self.emit_builtin_call(
            range,
            Symbol::aten("index"),
            vec![NamedValue::pos(sliceable), NamedValue::pos(list)],
            vec![],
            None,
        )
    }

    /// `base[subs] = value` with `base` an expression.
    pub fn emit_subscript_assign(
        &mut self,
        base: &Expr,
        subs: &[Expr],
        value: ValueId,
        range: &SourceRange,
    ) -> CResult<()> {
        let b = self.emit_expr(base, None)?;
        self.emit_subscript_assign_value(b, subs, value, range)
    }

    /// The right side of a tensor subscript assignment as a tensor: a number becomes
    /// `aten::tensor(v, dtype=prim::dtype(dest), device=prim::device(dest))`, as PyTorch emits.
    fn scalar_to_tensor_like(
        &mut self,
        value: ValueId,
        dest: ValueId,
        range: &SourceRange,
    ) -> CResult<ValueId> {
        if self.g.value(value).ty().is_tensor() {
            return Ok(value);
        }
        let dtype = self.insert1(prim::dtype, &[dest], Type::int());
        let device = self.insert1(prim::device, &[dest], Type::device());
        self.emit_builtin_call(
            range,
            Symbol::aten("tensor"),
            vec![NamedValue::pos(value)],
            vec![
                NamedValue::kw("dtype", dtype),
                NamedValue::kw("device", device),
            ],
            None,
        )
    }

    /// `base[subs] = value` with `base` a value.
    pub fn emit_subscript_assign_value(
        &mut self,
        b: ValueId,
        subs: &[Expr],
        value: ValueId,
        range: &SourceRange,
    ) -> CResult<()> {
        let t = self.g.value(b).ty().clone();
        if t.is_tensor() {
            // Slice/select to a view, then copy_ or index_put_.
            let has_tensor_index = subs.iter().any(|s| {
                !matches!(
                    s.kind,
                    ExprKind::Slice { .. }
                        | ExprKind::Int(_)
                        | ExprKind::None
                        | ExprKind::Ellipsis
                        | ExprKind::Unary(..)
                )
            });
            if !has_tensor_index {
                let view = self.emit_multidim_slicing(b, subs, range)?;
                let val = self.scalar_to_tensor_like(value, view, range)?;
                self.emit_builtin_call(
                    range,
                    Symbol::aten("copy_"),
                    vec![NamedValue::pos(view), NamedValue::pos(val)],
                    vec![],
                    None,
                )?;
                return Ok(());
            }
            // Advanced indexing assignment: x[idx] = v  →  index_put_(sliced, [indices], v).
            let (sliced, indices) = self.split_tensor_indexing(b, subs, range)?;
            let val = self.scalar_to_tensor_like(value, sliced, range)?;
            let list = self.g.insert_list(Type::optional(Type::tensor()), &indices);
            self.emit_builtin_call(
                range,
                Symbol::aten("index_put_"),
                vec![
                    NamedValue::pos(sliced),
                    NamedValue::pos(list),
                    NamedValue::pos(val),
                ],
                vec![],
                None,
            )?;
            return Ok(());
        }
        if subs.len() != 1 {
            return self.err(
                range,
                "multidimensional assignment is only supported on tensors",
            );
        }
        let idx = self.emit_expr(&subs[0], None)?;
        match &*t {
            Type::List(_) | Type::Dict(..) => {
                self.emit_builtin_call(
                    range,
                    Symbol::aten("_set_item"),
                    vec![
                        NamedValue::pos(b),
                        NamedValue::pos(idx),
                        NamedValue::pos(value),
                    ],
                    vec![],
                    None,
                )?;
                Ok(())
            }
            Type::Class(c) => {
                let c = c.clone();
                self.call_method_value(
                    b,
                    &c,
                    "__setitem__",
                    vec![NamedValue::pos(idx), NamedValue::pos(value)],
                    vec![],
                    range,
                )?;
                Ok(())
            }
            _ => self.err(
                range,
                format!(
                    "'{}' object does not support item assignment",
                    t.annotation_str()
                ),
            ),
        }
    }

    fn split_tensor_indexing(
        &mut self,
        b: ValueId,
        subs: &[Expr],
        range: &SourceRange,
    ) -> CResult<(ValueId, Vec<ValueId>)> {
        // Reuse the read path to compute the sliced tensor and the index list.
        let before = self.g.node_slots();
        let out = self.emit_multidim_slicing(b, subs, range)?;
        let n = self.g.value(out).node();
        if self.g.node(n).kind() != Symbol::aten("index") {
            let _ = before;
            return Ok((out, vec![]));
        }
        let sliced = self.g.node(n).input(0);
        let list = self.g.node(n).input(1);
        let idx = self.g.node(self.g.value(list).node()).inputs().to_vec();
        let _ = self.g.destroy_node(n);
        let ln = self.g.value(list).node();
        if !self.g.value(list).has_uses() {
            let _ = self.g.destroy_node(ln);
        }
        Ok((sliced, idx))
    }

    // -----------------------------------------------------------------------------------------
    // Iterables

    fn special_iterable(
        &mut self,
        s: Special,
        args: &[Expr],
        range: &SourceRange,
    ) -> CResult<Arc<Iterable>> {
        match s {
            Special::Range => {
                let vals = args
                    .iter()
                    .map(|a| self.emit_expr(a, None))
                    .collect::<CResult<Vec<_>>>()?;
                for (a, &v) in args.iter().zip(&vals) {
                    if !self.g.value(v).ty().is_int() {
                        return self.err(
                            &a.range,
                            format!(
                                "range(): expected int arguments, got {}",
                                self.g.value(v).ty().annotation_str()
                            ),
                        );
                    }
                }
                Ok(Arc::new(match vals.len() {
                    1 => Iterable::Range {
                        start: None,
                        end: vals[0],
                        step: None,
                    },
                    2 => Iterable::Range {
                        start: Some(vals[0]),
                        end: vals[1],
                        step: None,
                    },
                    3 => Iterable::Range {
                        start: Some(vals[0]),
                        end: vals[1],
                        step: Some(vals[2]),
                    },
                    _ => {
                        return self.err(
                            range,
                            format!("range expected at most 3 arguments, got {}", vals.len()),
                        )
                    }
                }))
            }
            Special::Enumerate => {
                if args.is_empty() || args.len() > 2 {
                    return self.err(range, "enumerate expected 1 or 2 arguments");
                }
                let sv = self.emit_sugared(&args[0], None)?;
                let it = self.to_iterable(sv, &args[0].range)?;
                let start = match args.get(1) {
                    Some(a) => Some(self.emit_expr(a, None)?),
                    None => None,
                };
                Ok(Arc::new(Iterable::Enumerate(it, start)))
            }
            Special::Zip => {
                let mut its = Vec::new();
                for a in args {
                    let sv = self.emit_sugared(a, None)?;
                    its.push(self.to_iterable(sv, &a.range)?);
                }
                Ok(Arc::new(Iterable::Zip(its)))
            }
            _ => self.err(range, "reversed() is not supported in TorchScript loops"),
        }
    }

    /// What a `for` loop iterates.
    pub fn to_iterable(&mut self, sv: Sugared, range: &SourceRange) -> CResult<Arc<Iterable>> {
        match sv {
            Sugared::Iterable(it) => Ok(it),
            Sugared::Tuple(items) => Ok(Arc::new(Iterable::Unrolled(items))),
            Sugared::Simple(v) => {
                let t = self.g.value(v).ty().clone();
                match &*t {
                    Type::List(_) | Type::Str | Type::Tensor(_) => Ok(Arc::new(Iterable::Value(v))),
                    Type::Dict(..) => {
                        let keys = self.emit_builtin_call(
                            range,
                            Symbol::aten("keys"),
                            vec![NamedValue::pos(v)],
                            vec![],
                            None,
                        )?;
                        Ok(Arc::new(Iterable::Value(keys)))
                    }
                    Type::Tuple(_) => {
                        let elems = tuple_elements(&mut self.g, v);
                        Ok(Arc::new(Iterable::Unrolled(
                            elems.into_iter().map(Sugared::Simple).collect(),
                        )))
                    }
                    _ => self.err(
                        range,
                        format!("'{}' object is not iterable", t.annotation_str()),
                    ),
                }
            }
            _ => self.err(range, "this value is not iterable"),
        }
    }

    /// The trip count of an iterable.
    pub fn iterable_len(&mut self, it: &Iterable, range: &SourceRange) -> CResult<ValueId> {
        match it {
            Iterable::Range {
                start: None,
                end,
                step: None,
            } => Ok(*end),
            Iterable::Range { start, end, step } => {
                let s = match start {
                    Some(s) => *s,
                    None => self.constant(IValue::Int(0)),
                };
                let st = match step {
                    Some(s) => *s,
                    None => self.constant(IValue::Int(1)),
                };
                self.emit_builtin_call(
                    range,
                    Symbol::aten("__range_length"),
                    vec![
                        NamedValue::pos(s),
                        NamedValue::pos(*end),
                        NamedValue::pos(st),
                    ],
                    vec![],
                    None,
                )
            }
            Iterable::Value(v) => self.emit_builtin_call(
                range,
                Symbol::aten("len"),
                vec![NamedValue::pos(*v)],
                vec![],
                None,
            ),
            Iterable::Enumerate(..) | Iterable::Zip(_) => {
                let mut bases = Vec::new();
                base_iterables(it, &mut bases);
                let mut lens = Vec::new();
                for b in bases {
                    lens.push(match b {
                        BaseIter::InfiniteRange => self.constant(IValue::Int(i64::MAX)),
                        BaseIter::It(x) => self.iterable_len(x, range)?,
                    });
                }
                let list = self.g.insert_list(Type::int(), &lens);
                self.emit_builtin_call(
                    range,
                    Symbol::prim("min"),
                    vec![NamedValue::pos(list)],
                    vec![],
                    None,
                )
            }
            Iterable::Unrolled(items) => Ok(self.constant(IValue::Int(items.len() as i64))),
        }
    }

    /// The element of an iterable at loop counter `i`.
    pub fn iterable_getitem(
        &mut self,
        it: &Iterable,
        i: ValueId,
        range: &SourceRange,
    ) -> CResult<Sugared> {
        match it {
            Iterable::Range {
                start: None,
                step: None,
                ..
            } => Ok(Sugared::Simple(i)),
            Iterable::Range { start, step, .. } => {
                let s = match start {
                    Some(s) => *s,
                    None => self.constant(IValue::Int(0)),
                };
                let st = match step {
                    Some(s) => *s,
                    None => self.constant(IValue::Int(1)),
                };
                Ok(Sugared::Simple(self.emit_builtin_call(
                    range,
                    Symbol::aten("__derive_index"),
                    vec![NamedValue::pos(i), NamedValue::pos(s), NamedValue::pos(st)],
                    vec![],
                    None,
                )?))
            }
            Iterable::Value(v) => {
                let t = self.g.value(*v).ty().clone();
                if t.is_tensor() {
                    let zero = self.constant(IValue::Int(0));
                    return Ok(Sugared::Simple(self.emit_builtin_call(
                        range,
                        Symbol::aten("select"),
                        vec![
                            NamedValue::pos(*v),
                            NamedValue::pos(zero),
                            NamedValue::pos(i),
                        ],
                        vec![],
                        None,
                    )?));
                }
                Ok(Sugared::Simple(self.emit_builtin_call(
                    range,
                    Symbol::aten("__getitem__"),
                    vec![NamedValue::pos(*v), NamedValue::pos(i)],
                    vec![],
                    None,
                )?))
            }
            Iterable::Enumerate(inner, start) => {
                let idx = match start {
                    None => i,
                    Some(s) => {
                        let one = self.constant(IValue::Int(1));
                        self.emit_builtin_call(
                            range,
                            Symbol::aten("__derive_index"),
                            vec![
                                NamedValue::pos(i),
                                NamedValue::pos(*s),
                                NamedValue::pos(one),
                            ],
                            vec![],
                            None,
                        )?
                    }
                };
                let item = self.iterable_getitem(inner, i, range)?;
                Ok(Sugared::Tuple(vec![Sugared::Simple(idx), item]))
            }
            Iterable::Zip(its) => {
                let mut items = Vec::new();
                for x in its {
                    items.push(self.iterable_getitem(x, i, range)?);
                }
                Ok(Sugared::Tuple(items))
            }
            Iterable::Unrolled(_) => {
                self.err(range, "internal error: unrolled iterables are not indexed")
            }
        }
    }

    /// The loop of a comprehension, with its optional filter.
    pub fn emit_comprehension_loop(
        &mut self,
        e: &Expr,
        target: &Expr,
        iter: &Expr,
        cond: Option<&Expr>,
        body: &mut dyn FnMut(&mut FunctionEmitter<'_>) -> CResult<()>,
    ) -> CResult<()> {
        let range = &e.range;
        let sv = self.emit_sugared(iter, None)?;
        let it = self.to_iterable(sv, &iter.range)?;
        if let Iterable::Unrolled(_) = &*it {
            return self.err(range, "comprehensions over tuples are not supported");
        }
        let max_trip = self.iterable_len(&it, range)?;
        let n = self.insert_node(prim::Loop, &[], &[]);
        let body_block = self.g.add_block(n);
        let cond_block = self.g.add_block(n);
        let t = self
            .g
            .with_insert_point(n, |g| g.insert_constant(&IValue::Bool(true)));
        self.g.add_block_output(cond_block, t);
        self.g.add_input(n, max_trip);
        let trip = self.g.add_block_input(body_block, Type::int());
        let saved = self.g.insert_point();
        self.push_frame(body_block);
        self.loop_depth += 1;
        let r = (|| {
            let elem = self.iterable_getitem(&it, trip, range)?;
            self.assign_value(target, elem, None, range)?;
            match cond {
                Some(c) => {
                    let cv = self.emit_cond(c)?;
                    let ifn = self.insert_node(prim::If, &[cv.value], &[]);
                    let tb = self.g.add_block(ifn);
                    let _fb = self.g.add_block(ifn);
                    let inner_saved = self.g.insert_point();
                    self.push_frame(tb);
                    let r = body(self);
                    self.pop_frame();
                    self.g.set_insert_point_before(inner_saved);
                    r
                }
                None => body(self),
            }
        })();
        self.loop_depth -= 1;
        self.pop_frame();
        self.g.set_insert_point_before(saved);
        r
    }
}

enum BaseIter<'a> {
    InfiniteRange,
    It(&'a Iterable),
}

fn base_iterables<'a>(it: &'a Iterable, out: &mut Vec<BaseIter<'a>>) {
    match it {
        Iterable::Enumerate(inner, _) => {
            out.push(BaseIter::InfiniteRange);
            base_iterables(inner, out);
        }
        Iterable::Zip(its) => {
            for x in its {
                base_iterables(x, out);
            }
        }
        other => out.push(BaseIter::It(other)),
    }
}

/// How PyTorch names a value's type in "has no attribute" errors (`Tensor (inferred)` for an
/// unannotated tensor parameter).
fn describe_type(t: &TypeRef) -> String {
    t.annotation_str()
}

fn parse_default_text(text: &str) -> Option<IValue> {
    let src = ts_core::Source::new(text.to_string(), None, 1);
    let e = crate::parser::parse_expression(&src).ok()?;
    super::function::const_expr(&e)
}

fn unreachable_match() -> CResult<Matched> {
    Err(CompileError::plain(
        "internal error: schema matching fell through",
    ))
}

/// The element indices of `tuple[start:end:step]` for a tuple of length `n`, with Python's
/// `PySlice_AdjustIndices` rules (negative steps walk backwards; bounds are clamped).
pub fn tuple_slice_indices(n: i64, start: Option<i64>, end: Option<i64>, step: i64) -> Vec<usize> {
    let adjust = |x: i64| {
        if x < 0 {
            let x = x + n;
            if x < 0 {
                if step < 0 {
                    -1
                } else {
                    0
                }
            } else {
                x
            }
        } else if x >= n {
            if step < 0 {
                n - 1
            } else {
                n
            }
        } else {
            x
        }
    };
    let start = start.map_or(if step < 0 { n - 1 } else { 0 }, adjust);
    let end = end.map_or(if step < 0 { -1 } else { n }, adjust);
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < end) || (step < 0 && i > end) {
        out.push(i as usize);
        match i.checked_add(step) {
            Some(next) => i = next,
            None => break,
        }
    }
    out
}

/// The operator behind a method of a C++ custom class that quantized models call
/// (`Conv2dPackedParamsBase.unpack()` is `quantized::conv2d_unpack`), as PyTorch binds them.
fn custom_class_method(class: &str, method: &str) -> Option<&'static str> {
    let short = class.strip_prefix("__torch__.torch.classes.")?;
    Some(match (short, method) {
        ("quantized.Conv2dPackedParamsBase", "unpack") => "quantized::conv2d_unpack",
        ("quantized.Conv2dPackedParamsBase", "stride") => "quantized::conv2d_stride",
        ("quantized.Conv2dPackedParamsBase", "padding") => "quantized::conv2d_padding",
        ("quantized.Conv2dPackedParamsBase", "dilation") => "quantized::conv2d_dilation",
        ("quantized.Conv2dPackedParamsBase", "groups") => "quantized::conv2d_groups",
        ("quantized.Conv2dPackedParamsBase", "transpose") => "quantized::conv2d_transpose",
        ("quantized.LinearPackedParamsBase", "unpack") => "quantized::linear_unpack",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::tuple_slice_indices;

    /// Tuple length, start, end, step and the expected indices.
    type Case = (i64, Option<i64>, Option<i64>, i64, &'static [usize]);

    #[test]
    fn tuple_slices_follow_python() {
        // Expected values: `list(range(n))[start:end:step]` in Python.
        let cases: &[Case] = &[
            (7, None, None, -1, &[6, 5, 4, 3, 2, 1, 0]),
            (7, Some(7), Some(5), 2, &[]),
            (7, Some(5), Some(7), -2, &[]),
            (7, None, None, -2, &[6, 4, 2, 0]),
            (7, None, Some(4), -3, &[6]),
            (7, Some(3), None, -2, &[3, 1]),
            (7, Some(-3), Some(3), 2, &[]),
            (7, Some(-100), Some(100), 3, &[0, 3, 6]),
            (7, Some(100), Some(-100), -4, &[6, 2]),
            (0, None, None, -1, &[]),
            (3, Some(1), None, i64::MAX, &[1]),
            (3, None, None, i64::MIN, &[2]),
        ];
        for &(n, s, e, st, want) in cases {
            assert_eq!(
                tuple_slice_indices(n, s, e, st),
                want,
                "{n} {s:?} {e:?} {st}"
            );
        }
    }
}
