//! Compile errors, printed as PyTorch prints them: the message, then the source excerpt with the
//! offending range underlined and `<--- HERE`.

use std::fmt;

use ts_core::SourceRange;

/// A compile error with its location.
#[derive(Clone, Debug)]
pub struct CompileError {
    pub message: String,
    pub range: Option<SourceRange>,
    /// Extra context frames ("'f' is being compiled since it was called from 'g'").
    pub context: Vec<(String, SourceRange)>,
}

impl CompileError {
    /// An error at `range`.
    pub fn new(message: impl Into<String>, range: &SourceRange) -> CompileError {
        CompileError {
            message: message.into(),
            range: Some(range.clone()),
            context: Vec::new(),
        }
    }

    /// An error without a location.
    pub fn plain(message: impl Into<String>) -> CompileError {
        CompileError {
            message: message.into(),
            range: None,
            context: Vec::new(),
        }
    }

    /// Adds a "called from" frame.
    pub fn with_context(mut self, what: impl Into<String>, range: &SourceRange) -> CompileError {
        self.context.push((what.into(), range.clone()));
        self
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.range {
            Some(r) => {
                writeln!(f, "{}:", self.message.trim_end_matches(':'))?;
                f.write_str(&r.highlighted())?;
            }
            None => f.write_str(&self.message)?,
        }
        for (what, r) in &self.context {
            writeln!(f, "{what}")?;
            f.write_str(&r.highlighted())?;
        }
        Ok(())
    }
}

impl std::error::Error for CompileError {}

/// Result of compilation steps.
pub type CResult<T> = Result<T, CompileError>;
