//! The lexer: turns source text into tokens, injecting Python's NEWLINE/INDENT/DEDENT (not
//! inside brackets or after a `\` continuation), and keeping `# type:` comments.

use std::sync::Arc;

use ts_core::{Source, SourceRange};

use crate::error::{CResult, CompileError};
use crate::token::{FPart, Tok, Token, KEYWORDS, OPERATORS};

/// Tokenizes `src` completely.
pub fn tokenize(src: &Arc<Source>) -> CResult<Vec<Token>> {
    Lexer {
        src,
        text: src.text(),
        pos: 0,
        tokens: Vec::new(),
        indents: vec![0],
        depth: 0,
        at_line_start: true,
    }
    .run()
}

struct Lexer<'a> {
    src: &'a Arc<Source>,
    text: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    indents: Vec<usize>,
    depth: usize,
    at_line_start: bool,
}

impl Lexer<'_> {
    fn err<T>(&self, start: usize, end: usize, msg: impl Into<String>) -> CResult<T> {
        Err(CompileError::new(
            msg,
            &SourceRange::new(self.src.clone(), start, end.max(start + 1)),
        ))
    }

    fn push(&mut self, tok: Tok, start: usize, end: usize) {
        self.tokens.push(Token { tok, start, end });
    }

    fn peek(&self, k: usize) -> Option<u8> {
        self.text.as_bytes().get(self.pos + k).copied()
    }

    fn run(mut self) -> CResult<Vec<Token>> {
        while self.pos < self.text.len() {
            if self.at_line_start && self.depth == 0 && self.indentation()? {
                continue;
            }
            let c = self.text.as_bytes()[self.pos];
            match c {
                b' ' | b'\t' | b'\x0c' | b'\r' => self.pos += 1,
                b'\n' => {
                    if self.depth == 0 {
                        self.newline(self.pos);
                        self.at_line_start = true;
                    }
                    self.pos += 1;
                }
                b'\\'
                    if self.peek(1) == Some(b'\n')
                        || (self.peek(1) == Some(b'\r') && self.peek(2) == Some(b'\n')) =>
                {
                    self.pos += if self.peek(1) == Some(b'\n') { 2 } else { 3 };
                }
                b'#' => self.comment(),
                b'0'..=b'9' => self.number()?,
                b'.' if self.peek(1).is_some_and(|d| d.is_ascii_digit()) => self.number()?,
                b'"' | b'\'' => self.string(self.pos, String::new())?,
                c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => self.word()?,
                _ => self.operator()?,
            }
        }
        let end = self.text.len();
        self.newline(end);
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(Tok::Dedent, end, end);
        }
        self.push(Tok::Eof, end, end);
        Ok(self.tokens)
    }

    /// Emits a NEWLINE unless the previous token already ends a line.
    fn newline(&mut self, at: usize) {
        if !matches!(
            self.tokens.last().map(|t| &t.tok),
            None | Some(Tok::Newline) | Some(Tok::Indent) | Some(Tok::Dedent)
        ) {
            self.push(Tok::Newline, at, at);
        }
    }

    /// Handles the indentation of a new logical line; returns true when the line was blank.
    fn indentation(&mut self) -> CResult<bool> {
        let line_start = self.pos;
        let mut width = 0usize;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() {
            match bytes[self.pos] {
                b' ' => width += 1,
                b'\t' => width = (width / 8 + 1) * 8,
                b'\x0c' => width = 0,
                _ => break,
            }
            self.pos += 1;
        }
        // Blank and comment-only lines do not affect indentation (but keep type comments).
        match bytes.get(self.pos) {
            None => return Ok(true),
            Some(b'\n') | Some(b'\r') => {
                self.pos += 1;
                return Ok(true);
            }
            Some(b'#') => {
                self.comment();
                if self.pos < bytes.len() {
                    self.pos += 1;
                }
                return Ok(true);
            }
            _ => {}
        }
        self.at_line_start = false;
        let cur = *self.indents.last().unwrap_or(&0);
        if width > cur {
            self.indents.push(width);
            self.push(Tok::Indent, line_start, self.pos);
        } else if width < cur {
            while width < *self.indents.last().unwrap_or(&0) {
                self.indents.pop();
                self.push(Tok::Dedent, self.pos, self.pos);
            }
            if width != *self.indents.last().unwrap_or(&0) {
                return self.err(
                    line_start,
                    self.pos,
                    "unindent does not match any outer indentation level",
                );
            }
        }
        Ok(false)
    }

    fn comment(&mut self) {
        let start = self.pos;
        let end = self.text[start..]
            .find('\n')
            .map(|i| start + i)
            .unwrap_or(self.text.len());
        let body = self.text[start + 1..end].trim();
        if let Some(t) = body.strip_prefix("type:") {
            let t = t.trim();
            if !t.starts_with("ignore") {
                self.push(Tok::TypeComment(t.to_string()), start, end);
            }
        }
        self.pos = end;
    }

    fn word(&mut self) -> CResult<()> {
        let start = self.pos;
        let rest = &self.text[start..];
        let len = rest
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        if len == 0 {
            // A non-ASCII character that cannot start a name (found by the frontend fuzz
            // target: `·` used to make an empty token forever).
            let c = rest.chars().next().unwrap_or('?');
            return self.err(
                start,
                start + c.len_utf8(),
                format!("invalid character '{c}'"),
            );
        }
        let w = &rest[..len];
        // String prefixes.
        let lower = w.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "r" | "u" | "f" | "b" | "rb" | "br" | "fr" | "rf"
        ) && matches!(rest.as_bytes().get(len), Some(b'"') | Some(b'\''))
        {
            if lower.contains('b') {
                return self.err(
                    start,
                    start + len,
                    "bytes literals are not supported in TorchScript",
                );
            }
            self.pos = start + len;
            return self.string(start, lower);
        }
        self.pos = start + len;
        let tok = match KEYWORDS.iter().find(|k| **k == w) {
            Some(k) => Tok::Keyword(k),
            None => Tok::Ident(w.to_string()),
        };
        self.push(tok, start, self.pos);
        Ok(())
    }

    fn operator(&mut self) -> CResult<()> {
        let start = self.pos;
        let rest = &self.text[start..];
        let Some(op) = OPERATORS.iter().find(|o| rest.starts_with(**o)) else {
            let ch = rest.chars().next().unwrap_or(' ');
            return self.err(
                start,
                start + ch.len_utf8(),
                format!("invalid token '{ch}'"),
            );
        };
        match *op {
            "(" | "[" | "{" => self.depth += 1,
            ")" | "]" | "}" => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        self.pos += op.len();
        self.push(Tok::Op(op), start, self.pos);
        Ok(())
    }

    fn number(&mut self) -> CResult<()> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut end = start;
        let radix = if bytes[start] == b'0'
            && matches!(
                bytes.get(start + 1),
                Some(b'x' | b'X' | b'o' | b'O' | b'b' | b'B')
            ) {
            end = start + 2;
            match bytes[start + 1].to_ascii_lowercase() {
                b'x' => 16,
                b'o' => 8,
                _ => 2,
            }
        } else {
            10
        };
        let mut is_float = false;
        while end < bytes.len() {
            let c = bytes[end];
            let ok = match radix {
                16 => c.is_ascii_hexdigit() || c == b'_',
                8 | 2 => c.is_ascii_digit() || c == b'_',
                _ => {
                    if c == b'.' && !is_float {
                        is_float = true;
                        true
                    } else if (c == b'e' || c == b'E') && end > start {
                        is_float = true;
                        if matches!(bytes.get(end + 1), Some(b'+' | b'-')) {
                            end += 1;
                        }
                        true
                    } else {
                        c.is_ascii_digit() || c == b'_'
                    }
                }
            };
            if !ok {
                break;
            }
            end += 1;
        }
        let text: String = self.text[start..end]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        let imag = radix == 10 && matches!(bytes.get(end), Some(b'j' | b'J'));
        let tok = if imag {
            let v: f64 = text.parse().map_err(|_| self.bad_number(start, end + 1))?;
            end += 1;
            Tok::Imag(v)
        } else if is_float {
            Tok::Float(text.parse().map_err(|_| self.bad_number(start, end))?)
        } else if radix == 10 {
            Tok::Int(text.parse::<i64>().map_err(|_| {
                CompileError::new(
                    "integer literal is too large for an int64",
                    &SourceRange::new(self.src.clone(), start, end),
                )
            })?)
        } else {
            Tok::Int(
                i64::from_str_radix(&text[2..], radix).map_err(|_| self.bad_number(start, end))?,
            )
        };
        self.pos = end;
        self.push(tok, start, end);
        Ok(())
    }

    fn bad_number(&self, start: usize, end: usize) -> CompileError {
        CompileError::new(
            format!(
                "invalid number literal '{}'",
                &self.text[start..end.min(self.text.len())]
            ),
            &SourceRange::new(self.src.clone(), start, end),
        )
    }

    /// Lexes a string literal whose quote starts at `self.pos` (`tok_start` includes the prefix).
    fn string(&mut self, tok_start: usize, prefix: String) -> CResult<()> {
        let raw = prefix.contains('r');
        let fstr = prefix.contains('f');
        let bytes = self.text.as_bytes();
        let q = bytes[self.pos];
        let triple = bytes.get(self.pos + 1) == Some(&q) && bytes.get(self.pos + 2) == Some(&q);
        let qlen = if triple { 3 } else { 1 };
        let body_start = self.pos + qlen;
        let mut i = body_start;
        let mut out = String::new();
        loop {
            if i >= bytes.len() {
                return self.err(tok_start, i, "unterminated string literal");
            }
            let c = bytes[i];
            if c == q && (!triple || (bytes.get(i + 1) == Some(&q) && bytes.get(i + 2) == Some(&q)))
            {
                break;
            }
            if c == b'\n' && !triple {
                return self.err(tok_start, i, "unterminated string literal");
            }
            if c == b'\\' && !raw {
                let Some(&e) = bytes.get(i + 1) else {
                    return self.err(tok_start, i, "unterminated string literal");
                };
                i += 2;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'\\' => out.push('\\'),
                    b'\'' => out.push('\''),
                    b'"' => out.push('"'),
                    b'a' => out.push('\x07'),
                    b'b' => out.push('\x08'),
                    b'f' => out.push('\x0c'),
                    b'v' => out.push('\x0b'),
                    b'\n' => {}
                    b'0'..=b'7' => {
                        let mut v = (e - b'0') as u32;
                        for _ in 0..2 {
                            match bytes.get(i) {
                                Some(d @ b'0'..=b'7') => {
                                    v = v * 8 + (d - b'0') as u32;
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                    }
                    b'x' | b'u' | b'U' => {
                        let n = match e {
                            b'x' => 2,
                            b'u' => 4,
                            _ => 8,
                        };
                        let hex = self.text.get(i..i + n).unwrap_or("");
                        let v = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                        match v {
                            Some(ch) if hex.len() == n => out.push(ch),
                            _ => {
                                return self.err(
                                    i - 2,
                                    i + n,
                                    "invalid escape sequence in string literal",
                                )
                            }
                        }
                        i += n;
                    }
                    other => {
                        out.push('\\');
                        out.push(other as char);
                    }
                }
                continue;
            }
            let ch = self.text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
        let end = i + qlen;
        self.pos = end;
        let tok = if fstr {
            Tok::FStr(self.fstring_parts(&out, body_start, tok_start, end)?)
        } else {
            Tok::Str(out)
        };
        self.push(tok, tok_start, end);
        Ok(())
    }

    /// Splits an f-string body into literal pieces and `{expr}` sources.
    fn fstring_parts(
        &self,
        body: &str,
        body_start: usize,
        s: usize,
        e: usize,
    ) -> CResult<Vec<FPart>> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let cs: Vec<(usize, char)> = body.char_indices().collect();
        let mut k = 0;
        while k < cs.len() {
            let (off, c) = cs[k];
            if c == '{' && cs.get(k + 1).map(|x| x.1) == Some('{') {
                lit.push('{');
                k += 2;
                continue;
            }
            if c == '}' && cs.get(k + 1).map(|x| x.1) == Some('}') {
                lit.push('}');
                k += 2;
                continue;
            }
            if c == '{' {
                let close = cs[k..].iter().position(|x| x.1 == '}').map(|p| p + k);
                let Some(close) = close else {
                    return self.err(s, e, "f-string: expecting '}'");
                };
                let expr: String = cs[k + 1..close].iter().map(|x| x.1).collect();
                if expr.contains('!') || expr.contains(':') {
                    return self.err(s, e, "f-string conversions and format specifiers are not supported in TorchScript");
                }
                if !lit.is_empty() {
                    parts.push(FPart::Lit(std::mem::take(&mut lit)));
                }
                parts.push(FPart::Expr(expr, body_start + off + 1));
                k = close + 1;
                continue;
            }
            lit.push(c);
            k += 1;
        }
        if !lit.is_empty() {
            parts.push(FPart::Lit(lit));
        }
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<String> {
        let src = Source::new(text, None, 1);
        tokenize(&src)
            .unwrap()
            .into_iter()
            .map(|t| match t.tok {
                Tok::Ident(s) => s,
                Tok::Int(i) => i.to_string(),
                Tok::Float(f) => format!("{f:?}"),
                Tok::Str(s) => format!("{s:?}"),
                Tok::Keyword(k) => k.to_string(),
                Tok::Op(o) => o.to_string(),
                Tok::Newline => "NL".into(),
                Tok::Indent => "IN".into(),
                Tok::Dedent => "DE".into(),
                Tok::Eof => "EOF".into(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn spec_example() {
        // The spec's lexer example: indentation becomes INDENT/DEDENT tokens.
        let k = kinds("def foo(a):\n    if a:\n        return a\n    return 1\n");
        assert_eq!(
            k.join(" "),
            "def foo ( a ) : NL IN if a : NL IN return a NL DE return 1 NL DE EOF"
        );
    }

    #[test]
    fn characters_that_cannot_start_a_name_are_errors() {
        // Found by the frontend fuzz target: `·` made empty word tokens without advancing.
        let src = Source::new("def f(x):\n    return \u{b7}.sum()\n", None, 1);
        let e = tokenize(&src).unwrap_err();
        assert!(e.to_string().contains("invalid character '\u{b7}'"), "{e}");
        // Non-ASCII letters still make names.
        assert!(tokenize(&Source::new("\u{e9}t\u{e9} = 1\n", None, 1)).is_ok());
    }

    #[test]
    fn brackets_and_continuations_suppress_newlines() {
        let k = kinds("x = (1,\n     2)\ny = 1 + \\\n    2\n");
        assert_eq!(k.join(" "), "x = ( 1 , 2 ) NL y = 1 + 2 NL EOF");
    }

    #[test]
    fn literals() {
        let k = kinds("a = 0x1f + 0o17 + 0b11 + 1_000 + 1.5e-3 + .5 + 2.\n");
        assert_eq!(
            k.join(" "),
            "a = 31 + 15 + 3 + 1000 + 0.0015 + 0.5 + 2.0 NL EOF"
        );
        let k = kinds("s = 'a\\n' \"b\" r'\\d' '''tri\nple'''\n");
        assert_eq!(
            k.join(" "),
            "s = \"a\\n\" \"b\" \"\\\\d\" \"tri\\nple\" NL EOF"
        );
        let k = kinds("x //= 2 ** 3 -> y @ z\n");
        assert_eq!(k.join(" "), "x //= 2 ** 3 -> y @ z NL EOF");
    }

    #[test]
    fn type_comments_and_errors() {
        let src = Source::new(
            "def f(x):\n    # type: (int) -> int\n    return x\n",
            None,
            1,
        );
        let toks = tokenize(&src).unwrap();
        assert!(toks
            .iter()
            .any(|t| t.tok == Tok::TypeComment("(int) -> int".into())));
        for bad in [
            "x = 'abc\n",
            "if x:\n    a\n  b\n",
            "x = 99999999999999999999\n",
            "x = $\n",
            "b'x'\n",
        ] {
            let src = Source::new(bad, None, 1);
            assert!(tokenize(&src).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fstrings() {
        let src = Source::new("s = f'a{x}b{{c}}'\n", None, 1);
        let toks = tokenize(&src).unwrap();
        assert_eq!(
            toks[2].tok,
            Tok::FStr(vec![
                FPart::Lit("a".into()),
                FPart::Expr("x".into(), 8),
                FPart::Lit("b{c}".into())
            ])
        );
    }
}
