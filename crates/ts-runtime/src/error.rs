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

impl ExecutionError {
    /// The last line PyTorch's interpreter prints: `builtins.ValueError: message` for an
    /// exception a `raise` statement threw (the class it named), `RuntimeError: message` for
    /// everything else — operators' failures included, whatever Python class they map to in
    /// eager mode (a dictionary's missing key reads `RuntimeError: KeyError: key`).
    pub fn summary_line(&self) -> String {
        let e = &self.error;
        match (&e.raised, e.kind) {
            (Some(class), _) => format!("{class}: {}", e.message),
            (None, ErrorKind::KeyError) => format!("RuntimeError: KeyError: {}", e.message),
            (None, _) => format!("RuntimeError: {}", e.message),
        }
    }

    /// The traceback PyTorch prints before the last line (frames with their highlighted
    /// source, outermost first); `None` when no frame has a source location.
    pub fn traceback_text(&self) -> Option<String> {
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
            return None;
        }
        let mut f = String::from(
            "The following operation failed in the TorchScript interpreter.\n\
             Traceback of TorchScript (most recent call last):\n",
        );
        for t in located {
            if let Some(r) = &t.range {
                let text = r.highlighted();
                // Name the function on the `File` line, as PyTorch does.
                let mut lines = text.lines();
                if let Some(first) = lines.next() {
                    let name = t.function.rsplit('.').next().unwrap_or(&t.function);
                    f.push_str(&format!("{first}, in {name}\n"));
                }
                for l in lines {
                    f.push_str(l);
                    f.push('\n');
                }
            }
        }
        Some(f.trim_end_matches('\n').to_string())
    }
}

impl fmt::Display for ExecutionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.traceback_text() {
            Some(tb) => write!(f, "{tb}\n{}", self.summary_line()),
            // An error from outside any TorchScript frame (argument binding, a nested
            // traceback already folded into the message) keeps its own class.
            None => write!(f, "{}: {}", self.error.kind.name(), self.error.message),
        }
    }
}

impl std::error::Error for ExecutionError {}

impl From<Error> for ExecutionError {
    fn from(e: Error) -> Self {
        ExecutionError::plain(e)
    }
}
