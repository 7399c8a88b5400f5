//! A small tokenizer shared by the type and schema parsers (PyTorch's schema lexer subset):
//! identifiers, numbers, string literals, punctuation, `->` and `...`.

use crate::parse_error::ParseError;

/// A token kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    /// A number's text (int, float or complex literal, without sign).
    Number(String),
    Str(String),
    Arrow,
    Ellipsis,
    Punct(char),
    Eof,
}

/// A token with its byte span.
#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// A cursor over a token stream with one-token lookahead.
pub struct Scanner<'a> {
    pub text: &'a str,
    pos: usize,
    cur: Token,
    peeked: Option<Token>,
    /// How many nested constructs enclose the position (see [`Scanner::enter`]).
    depth: usize,
}

/// How deeply types may nest (`List[List[...]]`); deeper text is an error, not a stack overflow.
pub const MAX_TYPE_NESTING: usize = 100;

impl<'a> Scanner<'a> {
    /// Enters one nesting level, refusing text nested past [`MAX_TYPE_NESTING`]; pair it with
    /// [`Scanner::leave`].
    pub fn enter(&mut self) -> Result<(), ParseError> {
        if self.depth >= MAX_TYPE_NESTING {
            return Err(self.error(format!(
                "types are nested too deeply (more than {MAX_TYPE_NESTING} levels)"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves a level entered with [`Scanner::enter`].
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Starts scanning `text` at byte `pos`.
    pub fn new(text: &'a str, pos: usize) -> Result<Scanner<'a>, ParseError> {
        let mut s = Scanner {
            text,
            pos,
            cur: Token {
                tok: Tok::Eof,
                start: pos,
                end: pos,
            },
            peeked: None,
            depth: 0,
        };
        s.cur = s.lex()?;
        Ok(s)
    }

    /// The current token.
    pub fn cur(&self) -> &Token {
        &self.cur
    }

    /// The token after the current one.
    pub fn lookahead(&mut self) -> Result<&Token, ParseError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lex()?);
        }
        Ok(self.peeked.as_ref().expect("just set"))
    }

    /// Advances and returns the previous current token.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Token, ParseError> {
        let next = match self.peeked.take() {
            Some(t) => t,
            None => self.lex()?,
        };
        Ok(std::mem::replace(&mut self.cur, next))
    }

    /// An error at the current token.
    pub fn error(&self, msg: impl Into<String>) -> ParseError {
        ParseError::at(self.text, self.cur.start, msg)
    }

    /// Describes the current token for messages.
    pub fn describe_cur(&self) -> String {
        match &self.cur.tok {
            Tok::Eof => "end of input".to_string(),
            _ => format!("'{}'", &self.text[self.cur.start..self.cur.end]),
        }
    }

    /// Consumes punctuation `c` if present.
    pub fn next_if(&mut self, c: char) -> Result<bool, ParseError> {
        if self.cur.tok == Tok::Punct(c) {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes `->` if present.
    pub fn next_if_arrow(&mut self) -> Result<bool, ParseError> {
        if self.cur.tok == Tok::Arrow {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Requires punctuation `c`.
    pub fn expect(&mut self, c: char) -> Result<Token, ParseError> {
        if self.cur.tok == Tok::Punct(c) {
            self.next()
        } else {
            Err(self.error(format!("expected '{c}' but found {}", self.describe_cur())))
        }
    }

    /// Requires an identifier and returns its text.
    pub fn expect_ident(&mut self) -> Result<String, ParseError> {
        match &self.cur.tok {
            Tok::Ident(s) => {
                let s = s.clone();
                self.next()?;
                Ok(s)
            }
            _ => Err(self.error(format!(
                "expected an identifier but found {}",
                self.describe_cur()
            ))),
        }
    }

    /// True when the current token is identifier `s`.
    pub fn is_ident(&self, s: &str) -> bool {
        matches!(&self.cur.tok, Tok::Ident(x) if x == s)
    }

    /// True when the current token is punctuation `c`.
    pub fn is_punct(&self, c: char) -> bool {
        self.cur.tok == Tok::Punct(c)
    }

    fn lex(&mut self) -> Result<Token, ParseError> {
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && (bytes[self.pos] as char).is_ascii_whitespace() {
            self.pos += 1;
        }
        let start = self.pos;
        if start >= bytes.len() {
            return Ok(Token {
                tok: Tok::Eof,
                start,
                end: start,
            });
        }
        let c = bytes[start] as char;
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            let mut e = start;
            while e < bytes.len()
                && ((bytes[e] as char).is_ascii_alphanumeric() || bytes[e] == b'_')
            {
                e += 1;
            }
            self.pos = e;
            Tok::Ident(self.text[start..e].to_string())
        } else if c.is_ascii_digit()
            || (c == '.' && bytes.get(start + 1).is_some_and(|b| b.is_ascii_digit()))
        {
            let mut e = start;
            while e < bytes.len() {
                let b = bytes[e] as char;
                let prev = if e > start { bytes[e - 1] as char } else { ' ' };
                if b.is_ascii_alphanumeric()
                    || b == '.'
                    || ((b == '-' || b == '+') && (prev == 'e' || prev == 'E'))
                {
                    e += 1;
                } else {
                    break;
                }
            }
            self.pos = e;
            Tok::Number(self.text[start..e].to_string())
        } else if c == '"' || c == '\'' {
            let (s, e) = lex_string(self.text, start)?;
            self.pos = e;
            Tok::Str(s)
        } else if self.text[start..].starts_with("->") {
            self.pos = start + 2;
            Tok::Arrow
        } else if self.text[start..].starts_with("...") {
            self.pos = start + 3;
            Tok::Ellipsis
        } else {
            let ch = self.text[start..].chars().next().unwrap_or(' ');
            self.pos = start + ch.len_utf8();
            Tok::Punct(ch)
        };
        Ok(Token {
            tok,
            start,
            end: self.pos,
        })
    }
}

/// Lexes a quoted string literal with C/Python escapes starting at `start`; returns the value
/// and the end offset.
pub fn lex_string(text: &str, start: usize) -> Result<(String, usize), ParseError> {
    let quote = text[start..].chars().next().unwrap_or('"');
    let mut out = String::new();
    let mut chars = text[start + 1..].char_indices();
    while let Some((i, ch)) = chars.next() {
        match ch {
            c if c == quote => return Ok((out, start + 1 + i + 1)),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'f' => out.push('\x0c'),
                    'v' => out.push('\x0b'),
                    '0'..='7' => {
                        let mut v = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            let rest = chars.as_str();
                            match rest.chars().next().and_then(|c| c.to_digit(8)) {
                                Some(d) => {
                                    v = v * 8 + d;
                                    chars.next();
                                }
                                None => break,
                            }
                        }
                        out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                    }
                    other => out.push(other),
                }
            }
            c => out.push(c),
        }
    }
    Err(ParseError::at(text, start, "unterminated string literal"))
}

/// Writes `s` as a double-quoted literal with PyTorch's escapes (`printQuotedString`).
pub fn quote_string(s: &str, out: &mut String) {
    out.push('"');
    for b in s.chars() {
        match b {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\{:03o}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
