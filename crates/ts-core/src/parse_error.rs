//! Errors of the text parsers in this crate (types and schemas), with position information.

use std::fmt;

/// A parse failure: what went wrong and where (1-based line and column), with the line's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub line: usize,
    pub column: usize,
    pub line_text: String,
}

impl ParseError {
    /// An error at byte offset `pos` of `text`.
    pub fn at(text: &str, pos: usize, message: impl Into<String>) -> ParseError {
        let pos = pos.min(text.len());
        let before = &text[..pos];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line_end = text[line_start..]
            .find('\n')
            .map(|i| line_start + i)
            .unwrap_or(text.len());
        ParseError {
            message: message.into(),
            line,
            column: before[line_start..].chars().count() + 1,
            line_text: text[line_start..line_end].to_string(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} at {}:{}", self.message, self.line, self.column)?;
        writeln!(f, "{}", self.line_text)?;
        write!(f, "{}^", " ".repeat(self.column.saturating_sub(1)))
    }
}

impl std::error::Error for ParseError {}
