//! Type annotations: expressions such as `List[int]`, `Optional[Tuple[Tensor, int]]`,
//! `torch.Tensor`, string forward references, and `# type:` signature comments, to `Type`s.

use std::sync::Arc;

use ts_core::{Source, Type, TypeRef};

use crate::ast::{Expr, ExprKind};
use crate::error::{CResult, CompileError};
use crate::parser::parse_expression;

/// Resolves user-defined type names (classes, named tuples, enums) of the compilation unit.
pub trait TypeNames {
    /// The type named `name` (possibly dotted), if defined.
    fn lookup_type(&self, name: &str) -> Option<TypeRef>;
}

/// The type an annotation expression denotes.
pub fn type_from_expr(e: &Expr, names: &dyn TypeNames) -> CResult<TypeRef> {
    match &e.kind {
        ExprKind::None => Ok(Type::none()),
        ExprKind::Str(s) => {
            let src = Source::new(s.clone(), None, 1);
            let inner = parse_expression(&src).map_err(|_| {
                CompileError::new(format!("Unknown type annotation: '{s}'"), &e.range)
            })?;
            type_from_expr(&inner, names).map_err(|err| CompileError::new(err.message, &e.range))
        }
        ExprKind::Name(_) | ExprKind::Attribute(..) => {
            let name = e.dotted_name().unwrap_or_default();
            let short = name
                .strip_prefix("typing.")
                .or_else(|| name.strip_prefix("torch.jit."))
                .or_else(|| name.strip_prefix("torch."))
                .unwrap_or(&name);
            Ok(match short {
                "Tensor" | "nn.Parameter" => Type::tensor(),
                "int" => Type::int(),
                "float" => Type::float(),
                "bool" => Type::bool(),
                "str" => Type::string(),
                "complex" => Type::complex(),
                "None" | "NoneType" => Type::none(),
                "Any" => Type::any(),
                "number" => Type::number(),
                "device" | "Device" => Type::device(),
                "dtype" => Type::int(),
                "Generator" => Type::generator(),
                "List" | "list" => Type::list(Type::any()),
                "Dict" | "dict" => Type::dict(Type::any(), Type::any()),
                "Tuple" | "tuple" => Type::any_tuple(),
                _ => match names
                    .lookup_type(&name)
                    .or_else(|| names.lookup_type(short))
                {
                    Some(t) => t,
                    None => {
                        return Err(CompileError::new(
                            format!("Unknown type annotation: '{name}'"),
                            &e.range,
                        ))
                    }
                },
            })
        }
        ExprKind::Subscript(base, args) => {
            let name = base.dotted_name().unwrap_or_default();
            let short = name.strip_prefix("typing.").unwrap_or(&name).to_string();
            let short = short
                .strip_prefix("torch.jit.")
                .unwrap_or(&short)
                .to_string();
            // `Tuple[int, str]` parses as a subscript with two items; `Tuple[(int, str)]` too.
            let items: Vec<&Expr> = if args.len() == 1 {
                match &args[0].kind {
                    ExprKind::Tuple(v) => v.iter().collect(),
                    _ => vec![&args[0]],
                }
            } else {
                args.iter().collect()
            };
            let tys = |p: &[&Expr]| -> CResult<Vec<TypeRef>> {
                p.iter().map(|x| type_from_expr(x, names)).collect()
            };
            let arity = |n: usize| -> CResult<()> {
                if items.len() == n {
                    Ok(())
                } else {
                    Err(CompileError::new(
                        format!("{short} expects {n} type argument(s)"),
                        &e.range,
                    ))
                }
            };
            match short.as_str() {
                "List" | "list" => {
                    arity(1)?;
                    Ok(Type::list(type_from_expr(items[0], names)?))
                }
                "Optional" => {
                    arity(1)?;
                    Ok(Type::optional(type_from_expr(items[0], names)?))
                }
                "Future" => {
                    arity(1)?;
                    Ok(Type::future(type_from_expr(items[0], names)?))
                }
                "Dict" | "dict" => {
                    arity(2)?;
                    let k = type_from_expr(items[0], names)?;
                    if !matches!(
                        &*k,
                        Type::Str
                            | Type::Int
                            | Type::Float
                            | Type::Bool
                            | Type::Complex
                            | Type::Tensor(_)
                    ) {
                        return Err(CompileError::new(
                            format!("Dict with key type {} is not supported: use str, int, float, bool or Tensor", k.annotation_str()),
                            &e.range,
                        ));
                    }
                    Ok(Type::dict(k, type_from_expr(items[1], names)?))
                }
                "Tuple" | "tuple" => {
                    if items.len() == 1
                        && matches!(&items[0].kind, ExprKind::Tuple(v) if v.is_empty())
                    {
                        return Ok(Type::tuple(vec![]));
                    }
                    Ok(Type::tuple(tys(&items)?))
                }
                "Union" => Ok(Type::union(tys(&items)?)),
                "Final" => {
                    arity(1)?;
                    type_from_expr(items[0], names)
                }
                n if n.starts_with("BroadcastingList") => {
                    arity(1)?;
                    Ok(Type::list(type_from_expr(items[0], names)?))
                }
                _ => Err(CompileError::new(
                    format!("Unknown type constructor {name}"),
                    &e.range,
                )),
            }
        }
        _ => Err(CompileError::new(
            "Expression of this kind cannot be used as a type annotation",
            &e.range,
        )),
    }
}

/// Parses a `# type: (A, B) -> R` comment into argument types and the return type (`None`
/// when the comment has no `-> R`, as PyTorch's parser allows: the return type is inferred).
pub fn parse_type_comment(
    text: &str,
    range: &ts_core::SourceRange,
    names: &dyn TypeNames,
) -> CResult<(Vec<TypeRef>, Option<TypeRef>)> {
    let err = || {
        CompileError::new(
            "invalid type comment: expected '(arg types) -> return type'",
            range,
        )
    };
    // Split at the top-level `->`.
    let mut depth = 0i32;
    let mut split = None;
    let b = text.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => {
                split = Some(i);
                break;
            }
            _ => {}
        }
    }
    let (args_text, ret_text) = match split {
        Some(split) => (text[..split].trim(), Some(text[split + 2..].trim())),
        None => (text.trim(), None),
    };
    if !args_text.starts_with('(') {
        return Err(err());
    }
    let args_src = Source::new(args_text.to_string(), None, 1);
    let mut args_expr = parse_expression(&args_src).map_err(|_| err())?;
    let arg_exprs: Vec<Expr> = match &mut args_expr.kind {
        ExprKind::Tuple(v) => std::mem::take(v),
        _ => vec![args_expr],
    };
    let args = arg_exprs
        .iter()
        .map(|a| type_from_expr(a, names))
        .collect::<CResult<Vec<_>>>()
        .map_err(|e| CompileError::new(e.message, range))?;
    let Some(ret_text) = ret_text else {
        return Ok((args, None));
    };
    let ret_src = Source::new(ret_text.to_string(), None, 1);
    let ret_expr = parse_expression(&ret_src).map_err(|_| err())?;
    let ret = type_from_expr(&ret_expr, names).map_err(|e| CompileError::new(e.message, range))?;
    Ok((args, Some(ret)))
}

/// A type without tensor shape details (what variables are declared with).
pub fn unshaped(t: &TypeRef) -> TypeRef {
    match &**t {
        Type::Tensor(_) => Type::tensor(),
        Type::List(e) => Type::list(unshaped(e)),
        Type::Optional(e) => Type::optional(unshaped(e)),
        Type::Tuple(tt) if tt.names.is_none() => {
            Type::tuple(tt.elements.iter().map(unshaped).collect())
        }
        Type::Dict(k, v) => Type::dict(unshaped(k), unshaped(v)),
        _ => t.clone(),
    }
}

/// Keeps `Arc` in scope for helpers.
pub fn shared(t: Type) -> TypeRef {
    Arc::new(t)
}
