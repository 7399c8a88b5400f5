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

/// An expression.
#[derive(Clone, Debug)]
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
        match &self.kind {
            ExprKind::Name(n) => Some(n.clone()),
            ExprKind::Attribute(v, a) => Some(format!("{}.{}", v.dotted_name()?, a.name)),
            _ => None,
        }
    }
}
