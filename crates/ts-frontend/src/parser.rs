//! The parser: a recursive-descent statement parser with a Pratt (precedence-climbing)
//! expression parser, producing the typed AST with source ranges.

use std::sync::Arc;

use ts_core::{Source, SourceRange};

use crate::ast::*;
use crate::error::{CResult, CompileError};
use crate::lexer::tokenize;
use crate::token::{FPart, Tok, Token};

/// Positional and keyword arguments of a call.
type CallArgs = (Vec<Expr>, Vec<(Ident, Expr)>);

/// Parses a whole source file (definitions, classes, and top-level statements).
pub fn parse_program(src: &Arc<Source>) -> CResult<Vec<Stmt>> {
    let mut p = Parser::new(src)?;
    let mut out = Vec::new();
    while p.cur().tok != Tok::Eof {
        if p.next_if_tok(&Tok::Newline) {
            continue;
        }
        out.push(p.statement()?);
    }
    Ok(out)
}

/// Parses a single expression (used for annotations in strings and f-string pieces).
pub fn parse_expression(src: &Arc<Source>) -> CResult<Expr> {
    let mut p = Parser::new(src)?;
    let e = p.expr_list()?;
    while p.next_if_tok(&Tok::Newline) {}
    if p.cur().tok != Tok::Eof {
        return Err(p.error_here(format!(
            "expected end of expression but found {}",
            p.cur().tok
        )));
    }
    Ok(e)
}

/// The token stream with PyTorch's lexer interface (`cur`, `next`, `lookahead`, `next_if`).
pub struct Parser {
    src: Arc<Source>,
    toks: Vec<Token>,
    pos: usize,
    /// How many expressions and blocks enclose the current position.
    depth: usize,
}

/// How deeply expressions and blocks may nest (Python's own parser stops near 200 nested
/// parentheses). Deeper source is an error, not a stack overflow.
const MAX_NESTING: usize = 200;

impl Parser {
    /// Tokenizes `src`.
    pub fn new(src: &Arc<Source>) -> CResult<Parser> {
        Ok(Parser {
            src: src.clone(),
            toks: tokenize(src)?,
            pos: 0,
            depth: 0,
        })
    }

    /// The current token.
    pub fn cur(&self) -> &Token {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    /// The token after the current one.
    pub fn lookahead(&self) -> &Token {
        &self.toks[(self.pos + 1).min(self.toks.len() - 1)]
    }

    /// Consumes and returns the current token.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Token {
        let t = self.cur().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    /// Consumes the current token when it is the operator `op`.
    pub fn next_if(&mut self, op: &str) -> bool {
        if matches!(&self.cur().tok, Tok::Op(o) if *o == op) {
            self.next();
            true
        } else {
            false
        }
    }

    fn next_if_kw(&mut self, kw: &str) -> bool {
        if matches!(&self.cur().tok, Tok::Keyword(k) if *k == kw) {
            self.next();
            true
        } else {
            false
        }
    }

    fn next_if_tok(&mut self, t: &Tok) -> bool {
        if &self.cur().tok == t {
            self.next();
            true
        } else {
            false
        }
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(&self.cur().tok, Tok::Op(o) if *o == op)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.cur().tok, Tok::Keyword(k) if *k == kw)
    }

    fn range(&self, start: usize, end: usize) -> SourceRange {
        SourceRange::new(self.src.clone(), start, end)
    }

    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].end
        }
    }

    fn error_here(&self, msg: impl Into<String>) -> CompileError {
        let t = self.cur();
        CompileError::new(msg, &self.range(t.start, t.end.max(t.start + 1)))
    }

    fn expect(&mut self, op: &str) -> CResult<Token> {
        if self.is_op(op) {
            Ok(self.next())
        } else {
            Err(self.error_here(format!("expected '{op}' but found {}", self.cur().tok)))
        }
    }

    fn expect_kw(&mut self, kw: &str) -> CResult<Token> {
        if self.is_kw(kw) {
            Ok(self.next())
        } else {
            Err(self.error_here(format!("expected '{kw}' but found {}", self.cur().tok)))
        }
    }

    fn expect_newline(&mut self) -> CResult<()> {
        if self.next_if_tok(&Tok::Newline) || self.cur().tok == Tok::Eof {
            Ok(())
        } else {
            Err(self.error_here(format!("expected a newline but found {}", self.cur().tok)))
        }
    }

    fn ident(&mut self) -> CResult<Ident> {
        match &self.cur().tok {
            Tok::Ident(n) => {
                let n = n.clone();
                let t = self.next();
                Ok(Ident {
                    name: n,
                    range: self.range(t.start, t.end),
                })
            }
            other => Err(self.error_here(format!("expected an identifier but found {other}"))),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Statements

    fn block(&mut self) -> CResult<Vec<Stmt>> {
        self.nested(Self::block_inner)
    }

    /// Runs `f` one nesting level deeper, refusing source nested past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> CResult<T>) -> CResult<T> {
        if self.depth >= MAX_NESTING {
            return Err(self.error_here(format!(
                "the code is nested too deeply (more than {MAX_NESTING} levels)"
            )));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn block_inner(&mut self) -> CResult<Vec<Stmt>> {
        self.expect(":")?;
        // A one-line body: `if x: return y`.
        if !self.next_if_tok(&Tok::Newline) {
            return self.simple_statements();
        }
        // Type comments may sit between the header and the body.
        while matches!(self.cur().tok, Tok::TypeComment(_)) {
            self.next();
            self.next_if_tok(&Tok::Newline);
        }
        if !self.next_if_tok(&Tok::Indent) {
            return Err(self.error_here("expected an indented block"));
        }
        let mut body = Vec::new();
        while !self.next_if_tok(&Tok::Dedent) {
            if self.cur().tok == Tok::Eof {
                break;
            }
            if self.next_if_tok(&Tok::Newline) {
                continue;
            }
            body.push(self.statement()?);
        }
        Ok(body)
    }

    /// One statement (compound, or a line of `;`-separated simple statements flattened in).
    pub fn statement(&mut self) -> CResult<Stmt> {
        let start = self.cur().start;
        if let Tok::Keyword(k) = self.cur().tok.clone() {
            match k {
                "def" => return self.def(vec![], start),
                "class" => return self.class(vec![], start),
                "if" => return self.if_stmt(),
                "while" => {
                    self.next();
                    let cond = self.expr()?;
                    let body = self.block()?;
                    if self.is_kw("else") {
                        return Err(
                            self.error_here("else branches of while loops aren't supported")
                        );
                    }
                    return Ok(Stmt {
                        kind: StmtKind::While { cond, body },
                        range: self.range(start, self.prev_end()),
                    });
                }
                "for" => {
                    self.next();
                    let target = self.target_list()?;
                    self.expect_kw("in")?;
                    let iter = self.expr_list()?;
                    let body = self.block()?;
                    if self.is_kw("else") {
                        return Err(self.error_here("else branches of for loops aren't supported"));
                    }
                    return Ok(Stmt {
                        kind: StmtKind::For { target, iter, body },
                        range: self.range(start, self.prev_end()),
                    });
                }
                "with" => {
                    self.next();
                    let mut items = Vec::new();
                    loop {
                        let e = self.expr()?;
                        let v = if self.next_if_kw("as") {
                            Some(self.target()?)
                        } else {
                            None
                        };
                        items.push((e, v));
                        if !self.next_if(",") {
                            break;
                        }
                    }
                    let body = self.block()?;
                    return Ok(Stmt {
                        kind: StmtKind::With { items, body },
                        range: self.range(start, self.prev_end()),
                    });
                }
                "try" => return Err(self.error_here("try blocks aren't supported")),
                "async" => return Err(self.error_here("async functions aren't supported")),
                _ => {}
            }
        }
        if self.is_op("@") {
            let mut decorators = Vec::new();
            while self.next_if("@") {
                decorators.push(self.expr()?);
                self.expect_newline()?;
            }
            if self.is_kw("def") {
                return self.def(decorators, start);
            }
            if self.is_kw("class") {
                return self.class(decorators, start);
            }
            return Err(self.error_here("decorators can only be applied to functions and classes"));
        }
        let mut stmts = self.simple_statements()?;
        if stmts.len() == 1 {
            return Ok(stmts.remove(0));
        }
        // Several simple statements on one line: keep them as an `if True:` free sequence by
        // returning the first and pushing back the rest is awkward, so wrap them.
        Ok(Stmt {
            range: self.range(start, self.prev_end()),
            kind: StmtKind::If {
                cond: Expr {
                    kind: ExprKind::True,
                    range: self.range(start, start + 1),
                },
                body: stmts,
                orelse: vec![],
            },
        })
    }

    fn simple_statements(&mut self) -> CResult<Vec<Stmt>> {
        let mut out = vec![self.simple_statement()?];
        while self.next_if(";") {
            if self.cur().tok == Tok::Newline || self.cur().tok == Tok::Eof {
                break;
            }
            out.push(self.simple_statement()?);
        }
        self.expect_newline()?;
        Ok(out)
    }

    fn simple_statement(&mut self) -> CResult<Stmt> {
        let start = self.cur().start;
        let kind = match self.cur().tok.clone() {
            Tok::Keyword("pass") => {
                self.next();
                StmtKind::Pass
            }
            Tok::Keyword("break") => {
                self.next();
                StmtKind::Break
            }
            Tok::Keyword("continue") => {
                self.next();
                StmtKind::Continue
            }
            Tok::Keyword("return") => {
                self.next();
                let v = if matches!(self.cur().tok, Tok::Newline | Tok::Eof) || self.is_op(";") {
                    None
                } else {
                    Some(self.expr_list()?)
                };
                StmtKind::Return(v)
            }
            Tok::Keyword("raise") => {
                self.next();
                let v = if matches!(self.cur().tok, Tok::Newline | Tok::Eof) {
                    None
                } else {
                    Some(self.expr()?)
                };
                if self.is_kw("from") {
                    return Err(self.error_here("raise ... from ... is not supported"));
                }
                StmtKind::Raise(v)
            }
            Tok::Keyword("assert") => {
                self.next();
                let test = self.expr()?;
                let msg = if self.next_if(",") {
                    Some(self.expr()?)
                } else {
                    None
                };
                StmtKind::Assert { test, msg }
            }
            Tok::Keyword("del") => {
                self.next();
                let mut targets = vec![self.expr()?];
                while self.next_if(",") {
                    targets.push(self.expr()?);
                }
                StmtKind::Delete(targets)
            }
            Tok::Keyword("global") | Tok::Keyword("nonlocal") => {
                return Err(self.error_here("global and nonlocal statements aren't supported"));
            }
            Tok::Keyword("import") | Tok::Keyword("from") => {
                while !matches!(self.cur().tok, Tok::Newline | Tok::Eof) {
                    self.next();
                }
                StmtKind::Import
            }
            Tok::Keyword("yield") => {
                return Err(self.error_here("generators (yield) aren't supported"))
            }
            _ => return self.expr_statement(),
        };
        Ok(Stmt {
            kind,
            range: self.range(start, self.prev_end()),
        })
    }

    fn expr_statement(&mut self) -> CResult<Stmt> {
        let start = self.cur().start;
        let first = self.expr_list_with_starred()?;
        // Annotated assignment / declaration.
        if self.next_if(":") {
            let ann = self.expr()?;
            let value = if self.next_if("=") {
                Some(self.expr_list()?)
            } else {
                None
            };
            return Ok(Stmt {
                kind: StmtKind::Assign {
                    targets: vec![first],
                    value,
                    annotation: Some(ann),
                },
                range: self.range(start, self.prev_end()),
            });
        }
        if let Tok::Op(op) = self.cur().tok.clone() {
            if op.len() >= 2 && op.ends_with('=') && !matches!(op, "==" | "!=" | "<=" | ">=") {
                let bin = match &op[..op.len() - 1] {
                    "+" => BinOp::Add,
                    "-" => BinOp::Sub,
                    "*" => BinOp::Mul,
                    "/" => BinOp::Div,
                    "//" => BinOp::FloorDiv,
                    "%" => BinOp::Mod,
                    "**" => BinOp::Pow,
                    "@" => BinOp::MatMul,
                    "&" => BinOp::BitAnd,
                    "|" => BinOp::BitOr,
                    "^" => BinOp::BitXor,
                    "<<" => BinOp::LShift,
                    ">>" => BinOp::RShift,
                    _ => return Err(self.error_here(format!("unsupported operator '{op}'"))),
                };
                self.next();
                let value = self.expr_list()?;
                return Ok(Stmt {
                    kind: StmtKind::AugAssign {
                        target: first,
                        op: bin,
                        value,
                    },
                    range: self.range(start, self.prev_end()),
                });
            }
        }
        if self.is_op("=") {
            let mut targets = vec![first];
            let mut value;
            loop {
                self.expect("=")?;
                value = self.expr_list_with_starred()?;
                if self.is_op("=") {
                    targets.push(value);
                    continue;
                }
                break;
            }
            // A trailing `# type: T` comment annotates the assignment.
            let mut annotation = None;
            if let Tok::TypeComment(t) = self.cur().tok.clone() {
                let tk = self.next();
                annotation = Some(self.parse_sub_expression(&t, tk.start + tk.tok_text_offset())?);
            }
            return Ok(Stmt {
                kind: StmtKind::Assign {
                    targets,
                    value: Some(value),
                    annotation,
                },
                range: self.range(start, self.prev_end()),
            });
        }
        Ok(Stmt {
            range: first.range.clone(),
            kind: StmtKind::Expr(first),
        })
    }

    fn if_stmt(&mut self) -> CResult<Stmt> {
        let start = self.cur().start;
        self.next(); // if / elif
        let cond = self.expr()?;
        let body = self.block()?;
        let orelse = if self.is_kw("elif") {
            // Each `elif` nests one `if` deeper (in the AST and in the graph).
            vec![self.nested(Self::if_stmt)?]
        } else if self.next_if_kw("else") {
            self.block()?
        } else {
            vec![]
        };
        Ok(Stmt {
            kind: StmtKind::If { cond, body, orelse },
            range: self.range(start, self.prev_end()),
        })
    }

    fn def(&mut self, decorators: Vec<Expr>, start: usize) -> CResult<Stmt> {
        self.expect_kw("def")?;
        let name = self.ident()?;
        self.expect("(")?;
        let mut params = Vec::new();
        let mut kwarg_only = false;
        while !self.is_op(")") {
            if self.next_if("*") {
                if matches!(self.cur().tok, Tok::Ident(_)) {
                    return Err(
                        self.error_here("variable number of arguments (*args) aren't supported")
                    );
                }
                kwarg_only = true;
            } else if self.is_op("**") {
                return Err(self.error_here(
                    "variable number of keyword arguments (**kwargs) aren't supported",
                ));
            } else if self.is_op("/") {
                self.next();
            } else {
                let pname = self.ident()?;
                let annotation = if self.next_if(":") {
                    Some(self.expr()?)
                } else {
                    None
                };
                let default = if self.next_if("=") {
                    Some(self.expr()?)
                } else {
                    None
                };
                params.push(Param {
                    name: pname,
                    annotation,
                    default,
                    kwarg_only,
                });
            }
            if !self.next_if(",") {
                break;
            }
        }
        self.expect(")")?;
        let return_type = if self.next_if("->") {
            Some(self.expr()?)
        } else {
            None
        };
        // Look for a `# type:` comment right after the header.
        let colon_at = self.pos;
        let mut type_comment = None;
        let mut k = colon_at + 1;
        while k < self.toks.len() && matches!(self.toks[k].tok, Tok::Newline) {
            k += 1;
        }
        if let Some(Token {
            tok: Tok::TypeComment(t),
            start: s,
            end: e,
        }) = self.toks.get(k)
        {
            type_comment = Some((t.clone(), self.range(*s, *e)));
        } else if let Some(Token {
            tok: Tok::TypeComment(t),
            start: s,
            end: e,
        }) = self.toks.get(colon_at + 1)
        {
            type_comment = Some((t.clone(), self.range(*s, *e)));
        }
        let header_end = self.prev_end();
        let body = self.block()?;
        Ok(Stmt {
            range: self.range(start, self.prev_end()),
            kind: StmtKind::Def(Def {
                name,
                params,
                return_type,
                body,
                decorators,
                type_comment,
                range: self.range(start, header_end),
            }),
        })
    }

    fn class(&mut self, decorators: Vec<Expr>, start: usize) -> CResult<Stmt> {
        self.expect_kw("class")?;
        let name = self.ident()?;
        let mut bases = Vec::new();
        if self.next_if("(") {
            while !self.is_op(")") {
                bases.push(self.expr()?);
                if !self.next_if(",") {
                    break;
                }
            }
            self.expect(")")?;
        }
        let header_end = self.prev_end();
        let body = self.block()?;
        Ok(Stmt {
            range: self.range(start, self.prev_end()),
            kind: StmtKind::Class(ClassDef {
                name,
                bases,
                body,
                decorators,
                range: self.range(start, header_end),
            }),
        })
    }

    /// A for-loop or `as` target: names, attributes, subscripts, tuples of them.
    fn target_list(&mut self) -> CResult<Expr> {
        let start = self.cur().start;
        let first = self.target()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut elems = vec![first];
        while self.next_if(",") {
            if self.is_kw("in") || self.is_op("=") {
                break;
            }
            elems.push(self.target()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(elems),
            range: self.range(start, self.prev_end()),
        })
    }

    fn target(&mut self) -> CResult<Expr> {
        if self.is_op("*") {
            let start = self.next().start;
            let e = self.binary(11)?;
            return Ok(Expr {
                range: self.range(start, e.range.end),
                kind: ExprKind::Starred(Box::new(e)),
            });
        }
        self.binary(11)
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    /// `a, b, c` (a tuple when there is a comma) — used where Python allows bare tuples.
    pub fn expr_list(&mut self) -> CResult<Expr> {
        let start = self.cur().start;
        let first = self.expr()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut elems = vec![first];
        while self.next_if(",") {
            if self.expr_ends_here() {
                break;
            }
            elems.push(self.expr()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(elems),
            range: self.range(start, self.prev_end()),
        })
    }

    fn expr_or_starred(&mut self) -> CResult<Expr> {
        if self.is_op("*") {
            let s = self.next().start;
            let e = self.expr()?;
            return Ok(Expr {
                range: self.range(s, e.range.end),
                kind: ExprKind::Starred(Box::new(e)),
            });
        }
        self.expr()
    }

    fn expr_list_with_starred(&mut self) -> CResult<Expr> {
        let start = self.cur().start;
        let one = |p: &mut Parser| -> CResult<Expr> {
            if p.is_op("*") {
                let s = p.next().start;
                let e = p.expr()?;
                Ok(Expr {
                    range: p.range(s, e.range.end),
                    kind: ExprKind::Starred(Box::new(e)),
                })
            } else {
                p.expr()
            }
        };
        let first = one(self)?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut elems = vec![first];
        while self.next_if(",") {
            if self.expr_ends_here() {
                break;
            }
            elems.push(one(self)?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(elems),
            range: self.range(start, self.prev_end()),
        })
    }

    fn expr_ends_here(&self) -> bool {
        matches!(
            self.cur().tok,
            Tok::Newline | Tok::Eof | Tok::TypeComment(_)
        ) || matches!(&self.cur().tok, Tok::Op(o) if matches!(*o, ")" | "]" | "}" | "=" | ":" | ";"))
            || self.is_kw("in")
    }

    /// One expression, including the conditional form.
    pub fn expr(&mut self) -> CResult<Expr> {
        if self.is_kw("lambda") {
            return Err(self.error_here("lambda expressions aren't supported"));
        }
        let start = self.cur().start;
        let e = self.binary(0)?;
        if self.is_kw("if") {
            self.next();
            let cond = self.binary(0)?;
            self.expect_kw("else")?;
            // A chain of conditional expressions nests to the right.
            let orelse = self.nested(Self::expr)?;
            return Ok(Expr {
                range: self.range(start, orelse.range.end),
                kind: ExprKind::Ternary {
                    cond: Box::new(cond),
                    then: Box::new(e),
                    orelse: Box::new(orelse),
                },
            });
        }
        Ok(e)
    }

    /// Precedence climbing. Levels: 1 or, 2 and, 3 not, 4 comparisons, 5 |, 6 ^, 7 &,
    /// 8 shifts, 9 + -, 10 * / // % @, 11 unary, 12 **, 13 postfix.
    fn binary(&mut self, min: u8) -> CResult<Expr> {
        self.nested(|p| p.binary_inner(min))
    }

    fn binary_inner(&mut self, min: u8) -> CResult<Expr> {
        let start = self.cur().start;
        let mut lhs = if self.is_kw("not") && min <= 3 {
            self.next();
            let e = self.binary(3)?;
            Expr {
                range: self.range(start, e.range.end),
                kind: ExprKind::Unary(UnaryOp::Not, Box::new(e)),
            }
        } else if min <= 11 && (self.is_op("-") || self.is_op("+") || self.is_op("~")) {
            let op = match self.next().tok {
                Tok::Op("-") => UnaryOp::Neg,
                Tok::Op("+") => UnaryOp::Pos,
                _ => UnaryOp::Invert,
            };
            let e = self.binary(11)?;
            Expr {
                range: self.range(start, e.range.end),
                kind: ExprKind::Unary(op, Box::new(e)),
            }
        } else {
            self.postfix()?
        };
        loop {
            let (level, right_assoc) = match &self.cur().tok {
                Tok::Keyword("or") => (1, false),
                Tok::Keyword("and") => (2, false),
                Tok::Keyword("in") | Tok::Keyword("is") => (4, false),
                Tok::Keyword("not") if matches!(self.lookahead().tok, Tok::Keyword("in")) => {
                    (4, false)
                }
                Tok::Op(o) => match *o {
                    "==" | "!=" | "<" | "<=" | ">" | ">=" => (4, false),
                    "|" => (5, false),
                    "^" => (6, false),
                    "&" => (7, false),
                    "<<" | ">>" => (8, false),
                    "+" | "-" => (9, false),
                    "*" | "/" | "//" | "%" | "@" => (10, false),
                    "**" => (12, true),
                    _ => break,
                },
                _ => break,
            };
            if level < min {
                break;
            }
            if level == 4 {
                lhs = self.comparison(lhs, start)?;
                continue;
            }
            let tok = self.next().tok;
            let next_min = if right_assoc { 11 } else { level + 1 };
            let rhs = self.binary(next_min)?;
            let range = self.range(start, rhs.range.end);
            lhs = match tok {
                Tok::Keyword("or") => Expr {
                    kind: ExprKind::BoolOp(false, Box::new(lhs), Box::new(rhs)),
                    range,
                },
                Tok::Keyword("and") => Expr {
                    kind: ExprKind::BoolOp(true, Box::new(lhs), Box::new(rhs)),
                    range,
                },
                Tok::Op(o) => {
                    let op = match o {
                        "|" => BinOp::BitOr,
                        "^" => BinOp::BitXor,
                        "&" => BinOp::BitAnd,
                        "<<" => BinOp::LShift,
                        ">>" => BinOp::RShift,
                        "+" => BinOp::Add,
                        "-" => BinOp::Sub,
                        "*" => BinOp::Mul,
                        "/" => BinOp::Div,
                        "//" => BinOp::FloorDiv,
                        "%" => BinOp::Mod,
                        "@" => BinOp::MatMul,
                        _ => BinOp::Pow,
                    };
                    Expr {
                        kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                        range,
                    }
                }
                _ => return Err(self.error_here("internal parser error")),
            };
        }
        Ok(lhs)
    }

    fn comparison(&mut self, first: Expr, start: usize) -> CResult<Expr> {
        let mut rest = Vec::new();
        loop {
            let op = match self.cur().tok.clone() {
                Tok::Keyword("in") => {
                    self.next();
                    CmpOp::In
                }
                Tok::Keyword("not") if matches!(self.lookahead().tok, Tok::Keyword("in")) => {
                    self.next();
                    self.next();
                    CmpOp::NotIn
                }
                Tok::Keyword("is") => {
                    self.next();
                    if self.next_if_kw("not") {
                        CmpOp::IsNot
                    } else {
                        CmpOp::Is
                    }
                }
                Tok::Op(o) => {
                    let op = match o {
                        "==" => CmpOp::Eq,
                        "!=" => CmpOp::Ne,
                        "<" => CmpOp::Lt,
                        "<=" => CmpOp::Le,
                        ">" => CmpOp::Gt,
                        ">=" => CmpOp::Ge,
                        _ => break,
                    };
                    self.next();
                    op
                }
                _ => break,
            };
            let rhs = self.binary(5)?;
            rest.push((op, rhs));
        }
        let end = rest
            .last()
            .map(|(_, e)| e.range.end)
            .unwrap_or(first.range.end);
        Ok(Expr {
            kind: ExprKind::Compare(Box::new(first), rest),
            range: self.range(start, end),
        })
    }

    fn postfix(&mut self) -> CResult<Expr> {
        self.nested(Self::postfix_inner)
    }

    fn postfix_inner(&mut self) -> CResult<Expr> {
        let start = self.cur().start;
        let mut e = self.atom()?;
        loop {
            if self.next_if("(") {
                let (args, kwargs) = self.call_args()?;
                let end = self.expect(")")?.end;
                e = Expr {
                    range: self.range(start, end),
                    kind: ExprKind::Call {
                        func: Box::new(e),
                        args,
                        kwargs,
                    },
                };
            } else if self.next_if("[") {
                let mut subs = Vec::new();
                loop {
                    if self.is_op("]") {
                        break;
                    }
                    subs.push(self.subscript_item()?);
                    if !self.next_if(",") {
                        break;
                    }
                }
                let end = self.expect("]")?.end;
                e = Expr {
                    range: self.range(start, end),
                    kind: ExprKind::Subscript(Box::new(e), subs),
                };
            } else if self.next_if(".") {
                let attr = self.ident()?;
                e = Expr {
                    range: self.range(start, attr.range.end),
                    kind: ExprKind::Attribute(Box::new(e), attr),
                };
            } else {
                break;
            }
        }
        Ok(e)
    }

    fn subscript_item(&mut self) -> CResult<Expr> {
        let start = self.cur().start;
        let mut parts: [Option<Box<Expr>>; 3] = [None, None, None];
        let mut colons = 0;
        loop {
            if self.is_op(":") {
                self.next();
                colons += 1;
                if colons > 2 {
                    return Err(self.error_here("too many ':' in a slice"));
                }
                continue;
            }
            if self.is_op(",") || self.is_op("]") {
                break;
            }
            if parts[colons].is_some() {
                return Err(
                    self.error_here(format!("expected ',' or ']' but found {}", self.cur().tok))
                );
            }
            parts[colons] = Some(Box::new(self.expr()?));
        }
        let range = self.range(start, self.prev_end().max(start));
        if colons == 0 {
            return parts[0]
                .take()
                .map(|b| *b)
                .ok_or_else(|| self.error_here("expected a subscript"));
        }
        let [a, b, c] = parts;
        Ok(Expr {
            kind: ExprKind::Slice {
                start: a,
                end: b,
                step: c,
            },
            range,
        })
    }

    fn call_args(&mut self) -> CResult<CallArgs> {
        let mut args = Vec::new();
        let mut kwargs: Vec<(Ident, Expr)> = Vec::new();
        while !self.is_op(")") {
            if self.is_op("**") {
                return Err(
                    self.error_here("keyword-argument unpacking (**kwargs) isn't supported")
                );
            }
            if self.is_op("*") {
                let s = self.next().start;
                let e = self.expr()?;
                args.push(Expr {
                    range: self.range(s, e.range.end),
                    kind: ExprKind::Starred(Box::new(e)),
                });
            } else if matches!(self.cur().tok, Tok::Ident(_))
                && matches!(self.lookahead().tok, Tok::Op("="))
            {
                let name = self.ident()?;
                self.next();
                let v = self.expr()?;
                if kwargs.iter().any(|(k, _)| k.name == name.name) {
                    return Err(CompileError::new(
                        format!("keyword argument repeated: {}", name.name),
                        &name.range,
                    ));
                }
                kwargs.push((name, v));
            } else {
                if !kwargs.is_empty() {
                    return Err(self.error_here("positional argument follows keyword argument"));
                }
                let e = self.expr()?;
                if self.is_kw("for") {
                    return Err(CompileError::new(
                        "generator expressions aren't supported",
                        &e.range,
                    ));
                }
                args.push(e);
            }
            if !self.next_if(",") {
                break;
            }
        }
        Ok((args, kwargs))
    }

    fn atom(&mut self) -> CResult<Expr> {
        let t = self.cur().clone();
        let r = self.range(t.start, t.end);
        let simple = |p: &mut Parser, kind: ExprKind| {
            p.next();
            Ok(Expr {
                kind,
                range: r.clone(),
            })
        };
        match t.tok {
            Tok::Ident(n) => simple(self, ExprKind::Name(n)),
            Tok::Int(i) => simple(self, ExprKind::Int(i)),
            Tok::Float(f) => simple(self, ExprKind::Float(f)),
            Tok::Imag(f) => simple(self, ExprKind::Imag(f)),
            Tok::Keyword("True") => simple(self, ExprKind::True),
            Tok::Keyword("False") => simple(self, ExprKind::False),
            Tok::Keyword("None") => simple(self, ExprKind::None),
            Tok::Op("...") => simple(self, ExprKind::Ellipsis),
            Tok::Str(_) | Tok::FStr(_) => self.strings(),
            Tok::Op("(") => {
                self.next();
                if self.is_op(")") {
                    let end = self.next().end;
                    return Ok(Expr {
                        kind: ExprKind::Tuple(vec![]),
                        range: self.range(t.start, end),
                    });
                }
                let first = self.expr_or_starred()?;
                if self.is_kw("for") {
                    return Err(CompileError::new(
                        "generator expressions aren't supported",
                        &first.range,
                    ));
                }
                if self.is_op(")") {
                    self.next();
                    // Parenthesized expression keeps its inner range (as PyTorch does).
                    return Ok(first);
                }
                let mut elems = vec![first];
                while self.next_if(",") {
                    if self.is_op(")") {
                        break;
                    }
                    elems.push(self.expr_or_starred()?);
                }
                let end = self.expect(")")?.end;
                Ok(Expr {
                    kind: ExprKind::Tuple(elems),
                    range: self.range(t.start, end),
                })
            }
            Tok::Op("[") => {
                self.next();
                if self.is_op("]") {
                    let end = self.next().end;
                    return Ok(Expr {
                        kind: ExprKind::List(vec![]),
                        range: self.range(t.start, end),
                    });
                }
                let first = self.expr()?;
                if self.next_if_kw("for") {
                    let target = self.target_list()?;
                    self.expect_kw("in")?;
                    let iter = self.binary(1)?;
                    let cond = if self.next_if_kw("if") {
                        Some(Box::new(self.binary(1)?))
                    } else {
                        None
                    };
                    if self.is_kw("for") {
                        return Err(self.error_here(
                            "comprehensions with more than one for clause aren't supported",
                        ));
                    }
                    let end = self.expect("]")?.end;
                    return Ok(Expr {
                        kind: ExprKind::ListComp {
                            elt: Box::new(first),
                            target: Box::new(target),
                            iter: Box::new(iter),
                            cond,
                        },
                        range: self.range(t.start, end),
                    });
                }
                let mut elems = vec![first];
                while self.next_if(",") {
                    if self.is_op("]") {
                        break;
                    }
                    elems.push(self.expr()?);
                }
                let end = self.expect("]")?.end;
                Ok(Expr {
                    kind: ExprKind::List(elems),
                    range: self.range(t.start, end),
                })
            }
            Tok::Op("{") => {
                self.next();
                if self.is_op("}") {
                    let end = self.next().end;
                    return Ok(Expr {
                        kind: ExprKind::Dict(vec![]),
                        range: self.range(t.start, end),
                    });
                }
                let k = self.expr()?;
                if !self.is_op(":") {
                    return Err(self.error_here("set literals aren't supported"));
                }
                self.next();
                let v = self.expr()?;
                if self.next_if_kw("for") {
                    let target = self.target_list()?;
                    self.expect_kw("in")?;
                    let iter = self.binary(1)?;
                    let cond = if self.next_if_kw("if") {
                        Some(Box::new(self.binary(1)?))
                    } else {
                        None
                    };
                    let end = self.expect("}")?.end;
                    return Ok(Expr {
                        kind: ExprKind::DictComp {
                            key: Box::new(k),
                            value: Box::new(v),
                            target: Box::new(target),
                            iter: Box::new(iter),
                            cond,
                        },
                        range: self.range(t.start, end),
                    });
                }
                let mut pairs = vec![(k, v)];
                while self.next_if(",") {
                    if self.is_op("}") {
                        break;
                    }
                    let k = self.expr()?;
                    self.expect(":")?;
                    let v = self.expr()?;
                    pairs.push((k, v));
                }
                let end = self.expect("}")?.end;
                Ok(Expr {
                    kind: ExprKind::Dict(pairs),
                    range: self.range(t.start, end),
                })
            }
            Tok::Keyword("lambda") => Err(self.error_here("lambda expressions aren't supported")),
            Tok::Keyword("yield") => Err(self.error_here("generators (yield) aren't supported")),
            Tok::Keyword("await") => Err(self.error_here("await isn't supported")),
            other => Err(self.error_here(format!("expected an expression but found {other}"))),
        }
    }

    /// Adjacent string literals concatenate; f-strings become format calls in the emitter.
    fn strings(&mut self) -> CResult<Expr> {
        let start = self.cur().start;
        let mut parts: Vec<FStringPart> = Vec::new();
        let mut any_f = false;
        loop {
            match self.cur().tok.clone() {
                Tok::Str(s) => {
                    self.next();
                    parts.push(FStringPart::Lit(s));
                }
                Tok::FStr(ps) => {
                    self.next();
                    any_f = true;
                    for p in ps {
                        match p {
                            FPart::Lit(s) => parts.push(FStringPart::Lit(s)),
                            FPart::Expr(text, off) => parts
                                .push(FStringPart::Expr(self.parse_sub_expression(&text, off)?)),
                        }
                    }
                }
                _ => break,
            }
        }
        let range = self.range(start, self.prev_end());
        if !any_f {
            let s: String = parts
                .into_iter()
                .map(|p| match p {
                    FStringPart::Lit(s) => s,
                    FStringPart::Expr(_) => String::new(),
                })
                .collect();
            return Ok(Expr {
                kind: ExprKind::Str(s),
                range,
            });
        }
        Ok(Expr {
            kind: ExprKind::FString(parts),
            range,
        })
    }

    /// Parses an expression embedded in the source at byte `offset` (f-string pieces, type
    /// comments), keeping ranges pointing into the original source. The piece is tokenized on
    /// its own and its tokens shifted to `offset` (padding the text to its offset would make
    /// every f-string cost the size of the file before it).
    fn parse_sub_expression(&self, text: &str, offset: usize) -> CResult<Expr> {
        let piece = Source::new(text.to_owned(), self.src.filename().map(String::from), 1);
        let offset = offset.min(self.src.text().len());
        let toks = tokenize(&piece).map_err(|mut e| {
            if let Some(r) = &e.range {
                e.range = Some(self.range(r.start + offset, r.end + offset));
            }
            e
        })?;
        let mut p = Parser {
            src: self.src.clone(),
            toks: toks
                .into_iter()
                .map(|mut t| {
                    t.start += offset;
                    t.end += offset;
                    if let Tok::FStr(parts) = &mut t.tok {
                        for part in parts {
                            if let FPart::Expr(_, at) = part {
                                *at += offset;
                            }
                        }
                    }
                    t
                })
                .collect(),
            pos: 0,
            depth: self.depth,
        };
        let e = p.nested(Self::expr_list)?;
        while p.next_if_tok(&Tok::Newline) {}
        if p.cur().tok != Tok::Eof {
            return Err(p.error_here(format!(
                "expected end of expression but found {}",
                p.cur().tok
            )));
        }
        Ok(e)
    }
}

impl Token {
    /// Offset of a type comment's text within its token (after `# type:` and spaces).
    fn tok_text_offset(&self) -> usize {
        0
    }
}
