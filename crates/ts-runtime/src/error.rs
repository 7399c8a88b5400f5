//! Execution errors with TorchScript tracebacks.

use std::fmt;

use ts_core::SourceRange;
use ts_tensor::{Error, ErrorKind};

/// One frame of a traceback: the function and the source range of the failing node.
#[derive(Clone, Debug)]
pub struct TraceFrame {
    pub function: String,
    pub range: Option<SourceRange>,
}

/// A failure while running TorchScript: the exception and where it happened.
#[derive(Clone, Debug)]
pub struct ExecutionError {
    pub error: Error,
    pub traceback: Vec<TraceFrame>,
}

impl ExecutionError {
    /// An error without location.
    pub fn plain(error: Error) -> ExecutionError {
        ExecutionError {
            error,
            traceback: vec![],
        }
    }

    /// An error raised with the frames active at the time (outermost first).
    pub fn with_trace(error: Error, traceback: Vec<TraceFrame>) -> ExecutionError {
        ExecutionError { error, traceback }
    }

    /// The exception class.
    pub fn kind(&self) -> ErrorKind {
        self.error.kind
    }

    /// Folds the traceback into the message (for futures, which carry plain errors).
    pub fn into_error(self) -> Error {
        let kind = self.error.kind;
        if self.traceback.iter().all(|f| f.range.is_none()) {
            return self.error;
        }
        Error::new(kind, self.to_string())
    }
}

impl fmt::Display for ExecutionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let located: Vec<&TraceFrame> = self
            .traceback
            .iter()
            .filter(|t| t.range.is_some())
            .collect();
        if located.is_empty()
            || self
                .error
                .message
                .starts_with("The following operation failed")
        {
            return write!(f, "{}: {}", self.error.kind.name(), self.error.message);
        }
        writeln!(
            f,
            "The following operation failed in the TorchScript interpreter."
        )?;
        writeln!(f, "Traceback of TorchScript (most recent call last):")?;
        for t in located {
            if let Some(r) = &t.range {
                let text = r.highlighted();
                // Name the function on the `File` line, as PyTorch does.
                let mut lines = text.lines();
                if let Some(first) = lines.next() {
                    writeln!(
                        f,
                        "{first}, in {}",
                        t.function.rsplit('.').next().unwrap_or(&t.function)
                    )?;
                }
                for l in lines {
                    writeln!(f, "{l}")?;
                }
            }
        }
        write!(f, "{}: {}", self.error.kind.name(), self.error.message)
    }
}

impl std::error::Error for ExecutionError {}

impl From<Error> for ExecutionError {
    fn from(e: Error) -> Self {
        ExecutionError::plain(e)
    }
}
