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

/// Creates the type of a class definition (so that annotations can name it).
pub fn declare_class(ctx: &mut CompileCtx, cd: &ClassDef) -> CResult<()> {
    let qualified = format!("{}.{}", ctx.prefix, cd.name.name);
    let bases = base_names(cd);
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
    let c = ClassType::new(qualified.clone(), false);
    ctx.cu.register_type(&qualified, Type::class(c));
    ctx.class_defs_insert(qualified, cd.clone());
    Ok(())
}

/// Declares a TorchScript class's methods and compiles `__init__` (which defines attributes).
pub fn define_class(ctx: &mut CompileCtx, cd: &ClassDef) -> CResult<()> {
    let qualified = format!("{}.{}", ctx.prefix, cd.name.name);
    let Some(t) = ctx.cu.find_type(&qualified) else {
        return Ok(());
    };
    let Type::Class(c) = &*t else {
        return Ok(());
    };
    let c = c.clone();
    for s in &cd.body {
        match &s.kind {
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
                ctx.add_pending_method(mname, d.clone(), c.clone());
            }
            StmtKind::Assign {
                targets,
                annotation: Some(ann),
                value: None,
            } => {
                if let ExprKind::Name(n) = &targets[0].kind {
                    let t = type_from_expr(ann, &*ctx)?;
                    c.add_attribute(n, t, false, false);
                }
            }
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => {
                if let (ExprKind::Name(n), Some(val)) = (&targets[0].kind, const_expr(v)) {
                    c.add_constant(n, val);
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
    let init = format!("{qualified}.__init__");
    ctx.compile_pending(&init, &cd.range)?;
    Ok(())
}

impl CompileCtx {
    /// Remembers a class definition to set up later.
    pub fn class_defs_insert(&mut self, qualified: String, cd: ClassDef) {
        self.class_defs.insert(qualified, cd);
    }
}
