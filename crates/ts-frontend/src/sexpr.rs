//! The AST printed as s-expressions (the spec's tree debug form), for tests and debugging:
//! `(def (ident f) (params (param (ident x) (option) (option))) (option) (list (return (ident x))))`.

use crate::ast::*;

fn opt(e: &Option<Expr>) -> String {
    match e {
        Some(e) => format!("(option {})", expr(e)),
        None => "(option)".to_string(),
    }
}

fn optb(e: &Option<Box<Expr>>) -> String {
    match e {
        Some(e) => format!("(option {})", expr(e)),
        None => "(option)".to_string(),
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "(list)".to_string()
    } else {
        format!("(list {})", items.join(" "))
    }
}

/// An expression as an s-expression.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(n) => format!("(variable (ident {n}))"),
        ExprKind::Int(i) => format!("(const {i})"),
        ExprKind::Float(f) => format!("(const {f:?})"),
        ExprKind::Imag(f) => format!("(const {f:?}j)"),
        ExprKind::Str(s) => format!("(string_literal {s:?})"),
        ExprKind::FString(parts) => {
            let ps: Vec<String> = parts
                .iter()
                .map(|p| match p {
                    FStringPart::Lit(s) => format!("{s:?}"),
                    FStringPart::Expr(x) => expr(x),
                })
                .collect();
            format!("(fstring {})", ps.join(" "))
        }
        ExprKind::True => "(True)".into(),
        ExprKind::False => "(False)".into(),
        ExprKind::None => "(None)".into(),
        ExprKind::Ellipsis => "(dots)".into(),
        ExprKind::Unary(op, x) => {
            let o = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Pos => "+",
                UnaryOp::Invert => "~",
                UnaryOp::Not => "not",
            };
            format!("({o} {})", expr(x))
        }
        ExprKind::Binary(op, a, b) => format!("({} {} {})", op.symbol(), expr(a), expr(b)),
        ExprKind::BoolOp(is_and, a, b) => format!(
            "({} {} {})",
            if *is_and { "and" } else { "or" },
            expr(a),
            expr(b)
        ),
        ExprKind::Compare(first, rest) => {
            let mut s = expr(first);
            for (op, r) in rest {
                s = format!("({} {s} {})", op.symbol(), expr(r));
            }
            s
        }
        ExprKind::Ternary { cond, then, orelse } => {
            format!("(if {} {} {})", expr(cond), expr(then), expr(orelse))
        }
        ExprKind::Call { func, args, kwargs } => {
            let a: Vec<String> = args.iter().map(expr).collect();
            let k: Vec<String> = kwargs
                .iter()
                .map(|(n, v)| format!("(attribute (ident {}) {})", n.name, expr(v)))
                .collect();
            format!("(apply {} {} {})", expr(func), list(&a), list(&k))
        }
        ExprKind::Attribute(v, a) => format!("(. {} (ident {}))", expr(v), a.name),
        ExprKind::Subscript(v, subs) => {
            let s: Vec<String> = subs.iter().map(expr).collect();
            format!("(subscript {} {})", expr(v), list(&s))
        }
        ExprKind::Slice { start, end, step } => {
            format!("(slice_expr {} {} {})", optb(start), optb(end), optb(step))
        }
        ExprKind::List(v) => format!(
            "(list_literal {})",
            list(&v.iter().map(expr).collect::<Vec<_>>())
        ),
        ExprKind::Tuple(v) => format!(
            "(tuple_literal {})",
            list(&v.iter().map(expr).collect::<Vec<_>>())
        ),
        ExprKind::Dict(v) => {
            let ks: Vec<String> = v.iter().map(|(k, _)| expr(k)).collect();
            let vs: Vec<String> = v.iter().map(|(_, x)| expr(x)).collect();
            format!("(dict_literal {} {})", list(&ks), list(&vs))
        }
        ExprKind::ListComp {
            elt,
            target,
            iter,
            cond,
        } => {
            format!(
                "(list_comp {} {} {} {})",
                expr(elt),
                expr(target),
                expr(iter),
                optb(cond)
            )
        }
        ExprKind::DictComp {
            key,
            value,
            target,
            iter,
            cond,
        } => format!(
            "(dict_comp {} {} {} {} {})",
            expr(key),
            expr(value),
            expr(target),
            expr(iter),
            optb(cond)
        ),
        ExprKind::Starred(x) => format!("(starred {})", expr(x)),
    }
}

/// A statement as an s-expression.
pub fn stmt(s: &Stmt) -> String {
    let body = |b: &[Stmt]| list(&b.iter().map(stmt).collect::<Vec<_>>());
    match &s.kind {
        StmtKind::Expr(e) => format!("(expression_stmt {})", expr(e)),
        StmtKind::Assign {
            targets,
            value,
            annotation,
        } => {
            let ts: Vec<String> = targets.iter().map(expr).collect();
            format!("(assign {} {} {})", list(&ts), opt(value), opt(annotation))
        }
        StmtKind::AugAssign { target, op, value } => format!(
            "(aug_assign {} {} {})",
            expr(target),
            op.symbol(),
            expr(value)
        ),
        StmtKind::If {
            cond,
            body: b,
            orelse,
        } => format!("(if {} {} {})", expr(cond), body(b), body(orelse)),
        StmtKind::While { cond, body: b } => format!("(while {} {})", expr(cond), body(b)),
        StmtKind::For {
            target,
            iter,
            body: b,
        } => format!("(for {} {} {})", expr(target), expr(iter), body(b)),
        StmtKind::Return(v) => format!("(return {})", opt(v)),
        StmtKind::Raise(v) => format!("(raise {})", opt(v)),
        StmtKind::Assert { test, msg } => format!("(assert {} {})", expr(test), opt(msg)),
        StmtKind::Pass => "(pass)".into(),
        StmtKind::Break => "(break)".into(),
        StmtKind::Continue => "(continue)".into(),
        StmtKind::Delete(ts) => format!(
            "(delete {})",
            list(&ts.iter().map(expr).collect::<Vec<_>>())
        ),
        StmtKind::With { items, body: b } => {
            let is: Vec<String> = items
                .iter()
                .map(|(e, v)| format!("(with_item {} {})", expr(e), opt(v)))
                .collect();
            format!("(with {} {})", list(&is), body(b))
        }
        StmtKind::Def(d) => def(d),
        StmtKind::Class(c) => format!(
            "(class (ident {}) {} {})",
            c.name.name,
            list(&c.bases.iter().map(expr).collect::<Vec<_>>()),
            body(&c.body)
        ),
        StmtKind::Import => "(import)".into(),
    }
}

/// A definition as an s-expression.
pub fn def(d: &Def) -> String {
    let ps: Vec<String> = d
        .params
        .iter()
        .map(|p| {
            format!(
                "(param (ident {}) {} {}{})",
                p.name.name,
                opt(&p.annotation),
                opt(&p.default),
                if p.kwarg_only { " kwarg_only" } else { "" }
            )
        })
        .collect();
    format!(
        "(def (ident {}) (decl {} {}) {})",
        d.name.name,
        list(&ps),
        opt(&d.return_type),
        list(&d.body.iter().map(stmt).collect::<Vec<_>>())
    )
}
