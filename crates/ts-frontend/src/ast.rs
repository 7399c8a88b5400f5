//! The typed AST (PyTorch's tree views). Every node carries its source range.

use ts_core::SourceRange;

/// An identifier with its range.
#[derive(Clone, Debug)]
pub struct Ident {
    pub name: String,
    pub range: SourceRange,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
}

impl BinOp {
    /// The operator's spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::MatMul => "@",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::LShift => "<<",
            BinOp::RShift => ">>",
        }
    }
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Is,
    IsNot,
    In,
    NotIn,
}

impl CmpOp {
    /// The operator's spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Is => "is",
            CmpOp::IsNot => "is not",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Invert,
    Not,
}

/// An expression. Left-associative chains (`x + 1 + 1 ...`, `x.add(1).add(1) ...`, `x[0][0]
/// ...`) nest along their first operand without limit, so cloning and dropping walk that
/// "left spine" iteratively (see [`Expr::spine_child`]) instead of recursing once per term.
#[derive(Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub range: SourceRange,
}

/// Expression forms.
#[derive(Clone, Debug)]
pub enum ExprKind {
    Name(String),
    Int(i64),
    Float(f64),
    Imag(f64),
    Str(String),
    /// An f-string: literal pieces and expressions, in order.
    FString(Vec<FStringPart>),
    True,
    False,
    None,
    /// `...`
    Ellipsis,
    Unary(UnaryOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a and b` / `a or b` (`is_and`).
    BoolOp(bool, Box<Expr>, Box<Expr>),
    /// `a < b <= c` keeps every operator and operand.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        orelse: Box<Expr>,
    },
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        kwargs: Vec<(Ident, Expr)>,
    },
    Attribute(Box<Expr>, Ident),
    /// `value[i, j:k]`: the subscript list.
    Subscript(Box<Expr>, Vec<Expr>),
    /// `start:end:step` inside a subscript.
    Slice {
        start: Option<Box<Expr>>,
        end: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    ListComp {
        elt: Box<Expr>,
        target: Box<Expr>,
        iter: Box<Expr>,
        cond: Option<Box<Expr>>,
    },
    DictComp {
        key: Box<Expr>,
        value: Box<Expr>,
        target: Box<Expr>,
        iter: Box<Expr>,
        cond: Option<Box<Expr>>,
    },
    Starred(Box<Expr>),
}

/// A piece of an f-string.
#[derive(Clone, Debug)]
pub enum FStringPart {
    Lit(String),
    Expr(Expr),
}

/// A statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub range: SourceRange,
}

/// Statement forms.
#[derive(Clone, Debug)]
pub enum StmtKind {
    Expr(Expr),
    /// `a = b = value` (targets in order), or an annotated assignment `a: T = value` /
    /// declaration `a: T` (then `value` is None).
    Assign {
        targets: Vec<Expr>,
        value: Option<Expr>,
        annotation: Option<Expr>,
    },
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    If {
        cond: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
    },
    For {
        target: Expr,
        iter: Expr,
        body: Vec<Stmt>,
    },
    Return(Option<Expr>),
    Raise(Option<Expr>),
    Assert {
        test: Expr,
        msg: Option<Expr>,
    },
    Pass,
    Break,
    Continue,
    Delete(Vec<Expr>),
    With {
        items: Vec<(Expr, Option<Expr>)>,
        body: Vec<Stmt>,
    },
    Def(Def),
    Class(ClassDef),
    /// `import x` / `from x import y` lines (archives may contain them); ignored.
    Import,
}

/// A formal parameter.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub annotation: Option<Expr>,
    pub default: Option<Expr>,
    pub kwarg_only: bool,
}

/// A function definition.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: Ident,
    pub params: Vec<Param>,
    pub return_type: Option<Expr>,
    pub body: Vec<Stmt>,
    pub decorators: Vec<Expr>,
    /// The `# type: (A, B) -> R` signature comment, if any (its text and range).
    pub type_comment: Option<(String, SourceRange)>,
    pub range: SourceRange,
}

/// A class definition.
#[derive(Clone, Debug)]
pub struct ClassDef {
    pub name: Ident,
    pub bases: Vec<Expr>,
    pub body: Vec<Stmt>,
    pub decorators: Vec<Expr>,
    pub range: SourceRange,
}

impl Expr {
    /// The dotted name of a `Name`/`Attribute` chain (`torch.nn.functional.relu`).
    pub fn dotted_name(&self) -> Option<String> {
        let mut parts = Vec::new();
        let mut e = self;
        loop {
            match &e.kind {
                ExprKind::Name(n) => {
                    parts.push(n.as_str());
                    break;
                }
                ExprKind::Attribute(v, a) => {
                    parts.push(a.name.as_str());
                    e = v;
                }
                _ => return None,
            }
        }
        parts.reverse();
        Some(parts.join("."))
    }

    /// The operand a left-associative chain continues through: the left operand of a binary
    /// or boolean operator, the callee of a call, the object of an attribute or subscript.
    /// The parser builds these without nesting limits; every other child is bounded by its
    /// nesting depth.
    pub fn spine_child(&self) -> Option<&Expr> {
        match &self.kind {
            ExprKind::Binary(_, a, _)
            | ExprKind::BoolOp(_, a, _)
            | ExprKind::Attribute(a, _)
            | ExprKind::Subscript(a, _)
            | ExprKind::Call { func: a, .. } => Some(a),
            _ => None,
        }
    }

    fn spine_child_mut(&mut self) -> Option<&mut Expr> {
        match &mut self.kind {
            ExprKind::Binary(_, a, _)
            | ExprKind::BoolOp(_, a, _)
            | ExprKind::Attribute(a, _)
            | ExprKind::Subscript(a, _)
            | ExprKind::Call { func: a, .. } => Some(a),
            _ => None,
        }
    }

    /// How many spine links hang below this expression, counting at most `cap`.
    pub fn spine_len(&self, cap: usize) -> usize {
        let mut n = 0;
        let mut e = self;
        while let Some(c) = e.spine_child() {
            n += 1;
            if n >= cap {
                break;
            }
            e = c;
        }
        n
    }

    /// A copy of this node whose spine child is `child` (its other children are cloned).
    fn clone_over(&self, child: Option<Expr>) -> Expr {
        let b = |c: Option<Expr>| Box::new(c.expect("a spine node is rebuilt over its child"));
        let kind = match &self.kind {
            ExprKind::Binary(op, _, r) => ExprKind::Binary(*op, b(child), r.clone()),
            ExprKind::BoolOp(and, _, r) => ExprKind::BoolOp(*and, b(child), r.clone()),
            ExprKind::Attribute(_, name) => ExprKind::Attribute(b(child), name.clone()),
            ExprKind::Subscript(_, subs) => ExprKind::Subscript(b(child), subs.clone()),
            ExprKind::Call { args, kwargs, .. } => ExprKind::Call {
                func: b(child),
                args: args.clone(),
                kwargs: kwargs.clone(),
            },
            other => other.clone(),
        };
        Expr {
            kind,
            range: self.range.clone(),
        }
    }
}

impl Clone for Expr {
    fn clone(&self) -> Expr {
        let mut spine = vec![self];
        while let Some(c) = spine[spine.len() - 1].spine_child() {
            spine.push(c);
        }
        let mut built = None;
        for node in spine.into_iter().rev() {
            built = Some(node.clone_over(built));
        }
        built.expect("the spine holds at least this node")
    }
}

impl Drop for Expr {
    fn drop(&mut self) {
        // Detach the spine one link at a time: each detached node is dropped with an empty
        // spine child, so the drop glue never recurses along the chain.
        let Some(first) = self.spine_child_mut() else {
            return;
        };
        let mut next = std::mem::replace(&mut first.kind, ExprKind::None);
        while let ExprKind::Binary(_, a, _)
        | ExprKind::BoolOp(_, a, _)
        | ExprKind::Attribute(a, _)
        | ExprKind::Subscript(a, _)
        | ExprKind::Call { func: a, .. } = &mut next
        {
            next = std::mem::replace(&mut a.kind, ExprKind::None);
        }
    }
}
