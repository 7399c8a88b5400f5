//! Classes in source: TorchScript classes (attributes from `__init__`, methods, static methods,
//! properties), `NamedTuple` classes and `Enum` classes.

use std::sync::Arc;

use ts_core::types::{EnumType, NamedTupleInfo, TupleType};
use ts_core::{ClassType, IValue, Type};
use ts_ir::Function;

use super::annotations::type_from_expr;
use super::function::const_expr;
use super::CompileCtx;
use crate::ast::{ClassDef, ExprKind, StmtKind};
use crate::error::{CResult, CompileError};

fn base_names(cd: &ClassDef) -> Vec<String> {
    cd.bases.iter().filter_map(|b| b.dotted_name()).collect()
}

/// Creates the type of a class definition (so that annotations can name it), keeping the
/// definition (moved, not copied: archive code is mostly class bodies) to set up later.
pub fn declare_class(ctx: &mut CompileCtx, cd: ClassDef) -> CResult<()> {
    let qualified = format!("{}.{}", ctx.prefix, cd.name.name);
    let bases = base_names(&cd);
    if bases
        .iter()
        .any(|b| b == "NamedTuple" || b == "typing.NamedTuple")
    {
        let mut fields = Vec::new();
        let mut types = Vec::new();
        let mut defaults = Vec::new();
        for s in &cd.body {
            match &s.kind {
                StmtKind::Assign {
                    targets,
                    value,
                    annotation: Some(ann),
                } => {
                    let ExprKind::Name(n) = &targets[0].kind else {
                        return Err(CompileError::new(
                            "NamedTuple fields must be simple names",
                            &s.range,
                        ));
                    };
                    fields.push(n.clone());
                    types.push(type_from_expr(ann, &*ctx)?);
                    defaults.push(value.as_ref().map(|v| v.range.text().to_string()));
                }
                StmtKind::Pass => {}
                StmtKind::Expr(e) if matches!(e.kind, ExprKind::Str(_)) => {}
                _ => {
                    return Err(CompileError::new(
                        "NamedTuple class bodies may only contain field declarations",
                        &s.range,
                    ))
                }
            }
        }
        let t = Arc::new(Type::Tuple(TupleType {
            elements: types,
            names: Some(NamedTupleInfo {
                qualified_name: qualified.clone(),
                fields,
                defaults,
            }),
        }));
        ctx.cu.register_type(&qualified, t);
        return Ok(());
    }
    if bases.iter().any(|b| b == "Enum" || b == "enum.Enum") {
        let mut members = Vec::new();
        for s in &cd.body {
            match &s.kind {
                StmtKind::Assign {
                    targets,
                    value: Some(v),
                    annotation: None,
                } => {
                    let ExprKind::Name(n) = &targets[0].kind else {
                        return Err(CompileError::new(
                            "Enum members must be simple names",
                            &s.range,
                        ));
                    };
                    let val = const_expr(v).ok_or_else(|| {
                        CompileError::new("Enum values must be constants", &v.range)
                    })?;
                    members.push((n.clone(), val));
                }
                StmtKind::Pass => {}
                _ => {
                    return Err(CompileError::new(
                        "Enum class bodies may only contain member assignments",
                        &s.range,
                    ))
                }
            }
        }
        let types: Vec<_> = members
            .iter()
            .map(|(_, v): &(String, IValue)| v.type_of())
            .collect();
        let value_type = ts_core::unify_type_list(&types, false).ok_or_else(|| {
            CompileError::new(
                format!(
                    "Enum class with varying value types are not supported: {}",
                    cd.name.name
                ),
                &cd.range,
            )
        })?;
        let t = Arc::new(Type::Enum(Arc::new(EnumType {
            name: qualified.clone(),
            value_type,
            members,
        })));
        ctx.cu.register_type(&qualified, t);
        return Ok(());
    }
    let is_module = bases
        .iter()
        .any(|b| b == "Module" || b == "torch.nn.Module" || b == "nn.Module");
    let c = ClassType::new(qualified.clone(), is_module);
    ctx.cu.register_type(&qualified, Type::class(c));
    ctx.class_defs_insert(qualified, cd);
    Ok(())
}

/// The string elements of a list literal (`__parameters__ = ["weight", "bias", ]`).
fn string_list(e: &crate::ast::Expr) -> Vec<String> {
    match &e.kind {
        ExprKind::List(items) | ExprKind::Tuple(items) => items
            .iter()
            .filter_map(|x| match &x.kind {
                ExprKind::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Declares a TorchScript class's methods and compiles `__init__` (which defines attributes).
/// Classes from an archive declare their attributes in the body instead (`weight : Tensor`,
/// `__parameters__`, `__buffers__`, `name : Final[int] = 3`).
pub fn define_class(ctx: &mut CompileCtx, qualified: &str, cd: ClassDef) -> CResult<()> {
    let Some(t) = ctx.cu.find_type(qualified) else {
        return Ok(());
    };
    let Type::Class(c) = &*t else {
        return Ok(());
    };
    let c = c.clone();
    let mut parameters = Vec::new();
    let mut buffers = Vec::new();
    for s in &cd.body {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            annotation: None,
        } = &s.kind
        {
            match targets[0].dotted_name().as_deref() {
                Some("__parameters__") => parameters = string_list(v),
                Some("__buffers__") => buffers = string_list(v),
                _ => {}
            }
        }
    }
    // The methods' definitions move into the pending list (cloning them was a tenth of
    // loading ResNet-18's code).
    for s in cd.body {
        match s.kind {
            StmtKind::Def(d) => {
                let mname = format!("{qualified}.{}", d.name.name);
                let f = Function::declare(mname.clone());
                ctx.cu.register_function(f);
                let is_property = d
                    .decorators
                    .iter()
                    .any(|x| x.dotted_name().as_deref() == Some("property"));
                if is_property {
                    c.members.write().properties.push((
                        d.name.name.clone(),
                        d.name.name.clone(),
                        None,
                    ));
                }
                ctx.add_pending_method(mname, d, c.clone());
            }
            StmtKind::Assign {
                targets,
                annotation: Some(ann),
                value: None,
            } => {
                if let ExprKind::Name(n) = &targets[0].kind {
                    let t = type_from_expr(&ann, &*ctx)?;
                    let is_param = parameters.iter().any(|p| p == n);
                    let is_buffer = buffers.iter().any(|p| p == n);
                    c.add_attribute(n, t, is_param, is_buffer);
                }
            }
            StmtKind::Assign {
                targets,
                value: Some(v),
                annotation,
            } => {
                let name = targets[0].dotted_name();
                if matches!(name.as_deref(), Some("__parameters__" | "__buffers__")) {
                    continue;
                }
                // `__annotations__["0"] = T`: an attribute whose name is not an identifier.
                if let ExprKind::Subscript(base, _) = &targets[0].kind {
                    if base.dotted_name().as_deref() == Some("__annotations__") {
                        if let Some(key) = subscript_key(&targets[0]) {
                            let t = type_from_expr(&v, &*ctx)?;
                            c.add_attribute(&key, t, false, false);
                        }
                        continue;
                    }
                }
                if let (Some(n), Some(val)) = (name, const_expr(&v)) {
                    let val = match annotation {
                        Some(ann) => constant_of_annotated_type(val, &type_from_expr(&ann, &*ctx)?),
                        None => val,
                    };
                    c.add_constant(&n, val);
                }
            }
            StmtKind::Pass | StmtKind::Import => {}
            StmtKind::Expr(e) if matches!(e.kind, ExprKind::Str(_)) => {}
            _ => {
                return Err(CompileError::new(
                    "unsupported statement in a class body",
                    &s.range,
                ))
            }
        }
    }
    if !ctx.archive {
        let init = format!("{qualified}.__init__");
        ctx.compile_pending(&init, &cd.range)?;
    }
    Ok(())
}

/// The string key of `__annotations__["key"]`.
fn subscript_key(e: &crate::ast::Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Subscript(_, index) => match index.first().map(|x| &x.kind) {
            Some(ExprKind::Str(s)) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A class constant converted to its declared type (`x : Final[float] = 1` is a float).
fn constant_of_annotated_type(v: IValue, ty: &ts_core::TypeRef) -> IValue {
    let inner = match &**ty {
        Type::Optional(t) => t.clone(),
        _ => ty.clone(),
    };
    match (&*inner, &v) {
        (Type::Float, IValue::Int(i)) => IValue::Double(*i as f64),
        _ => v,
    }
}

impl CompileCtx {
    /// Remembers a class definition to set up later.
    pub fn class_defs_insert(&mut self, qualified: String, cd: ClassDef) {
        self.class_defs.insert(qualified, cd);
    }
}
