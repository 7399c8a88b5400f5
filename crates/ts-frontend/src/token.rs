//! Tokens of TorchScript source.

use std::fmt;

/// A token kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    /// An integer literal (value) with its text.
    Int(i64),
    Float(f64),
    /// An imaginary literal (`2j`).
    Imag(f64),
    /// A string literal (value after escapes; adjacent literals are concatenated by the parser).
    Str(String),
    /// An f-string: its literal pieces and the source text of its `{}` expressions with their
    /// byte offsets.
    FStr(Vec<FPart>),
    Keyword(&'static str),
    Op(&'static str),
    /// A `# type: ...` comment's text after `type:`.
    TypeComment(String),
    Newline,
    Indent,
    Dedent,
    Eof,
}

/// A piece of an f-string.
#[derive(Clone, Debug, PartialEq)]
pub enum FPart {
    Lit(String),
    /// Expression source and its absolute byte offset.
    Expr(String, usize),
}

/// A token with its byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Python/TorchScript keywords.
pub const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while",
    "with", "yield",
];

/// Operators and punctuation, longest first so the lexer can match greedily.
pub const OPERATORS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=",
    "-=", "*=", "/=", "%=", "@=", "&=", "|=", "^=", ":=", "+", "-", "*", "/", "%", "@", "&", "|",
    "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=",
];

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "identifier '{s}'"),
            Tok::Int(i) => write!(f, "number {i}"),
            Tok::Float(x) => write!(f, "number {x}"),
            Tok::Imag(x) => write!(f, "number {x}j"),
            Tok::Str(_) | Tok::FStr(_) => f.write_str("string literal"),
            Tok::Keyword(k) => write!(f, "'{k}'"),
            Tok::Op(o) => write!(f, "'{o}'"),
            Tok::TypeComment(_) => f.write_str("type comment"),
            Tok::Newline => f.write_str("newline"),
            Tok::Indent => f.write_str("indent"),
            Tok::Dedent => f.write_str("dedent"),
            Tok::Eof => f.write_str("eof"),
        }
    }
}
