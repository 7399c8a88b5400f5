//! The one error type of the crate: what failed, the Python exception class TorchScript would
//! raise, and for failures inside TorchScript code the traceback, printed by `Display`.

use std::fmt;

/// What kind of operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing a file.
    Io,
    /// A file that is not a valid archive, tensor file or input file.
    Format,
    /// TorchScript source that does not compile.
    Compile,
    /// An exception raised while running TorchScript code (or an operator).
    Runtime,
    /// Arguments that do not fit a function's or operator's signature.
    Argument,
    /// A value that is not of the type asked for (`TryFrom` conversions, tensor views).
    Conversion,
    /// A method, function, attribute or submodule that does not exist.
    NotFound,
    /// Something this implementation does not support (yet), named in the message.
    Unsupported,
}

/// An error from any operation of this crate.
///
/// `Display` prints what PyTorch prints: for an exception raised inside TorchScript code, the
/// `Traceback of TorchScript` with the source of each frame, then `RuntimeError: message`.
#[derive(Clone, Debug)]
pub struct Error {
    kind: ErrorKind,
    exception: String,
    message: String,
    traceback: Option<String>,
    /// The last line as PyTorch's interpreter prints it, for errors with a traceback.
    summary: Option<String>,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with a message; the exception class is derived from the kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        let exception = match kind {
            ErrorKind::Io => "OSError",
            ErrorKind::Argument | ErrorKind::Conversion => "TypeError",
            ErrorKind::NotFound => "AttributeError",
            ErrorKind::Unsupported => "NotImplementedError",
            _ => "RuntimeError",
        };
        Error {
            kind,
            exception: exception.to_string(),
            message: message.into(),
            traceback: None,
            summary: None,
        }
    }

    /// What kind of operation failed.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The Python exception class TorchScript raises for this error (`RuntimeError`,
    /// `ValueError`, `IndexError`, ...).
    pub fn exception_class(&self) -> &str {
        &self.exception
    }

    /// The message without the traceback.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The TorchScript traceback (frames and highlighted source), when the error was raised
    /// inside TorchScript code.
    pub fn traceback(&self) -> Option<&str> {
        self.traceback.as_deref()
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::NotFound, message)
    }

    pub(crate) fn conversion(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Conversion, message)
    }

    pub(crate) fn io(path: &std::path::Path, e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, format!("{}: {e}", path.display()))
    }

    pub(crate) fn format(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Format, message)
    }

    /// A runtime exception with the class TorchScript gives it.
    pub(crate) fn from_tensor_error(e: ts_tensor::Error) -> Error {
        Error {
            kind: ErrorKind::Runtime,
            exception: e.kind.name().to_string(),
            message: e.message,
            traceback: None,
            summary: None,
        }
    }

    /// A call's binding failure (wrong number or types of arguments).
    pub(crate) fn argument(e: ts_tensor::Error) -> Error {
        Error {
            kind: ErrorKind::Argument,
            exception: e.kind.name().to_string(),
            message: e.message,
            traceback: None,
            summary: None,
        }
    }
}

impl From<ts_runtime::ExecutionError> for Error {
    fn from(e: ts_runtime::ExecutionError) -> Error {
        // With a traceback, the last line is the interpreter's (`RuntimeError: ...` for
        // operators, `builtins.ValueError: ...` for `raise`); the class stays the Python one.
        let traceback = e.traceback_text();
        let summary = traceback.as_ref().map(|_| e.summary_line());
        Error {
            kind: ErrorKind::Runtime,
            exception: e.error.kind.name().to_string(),
            message: e.error.message,
            traceback,
            summary,
        }
    }
}

impl From<ts_tensor::Error> for Error {
    fn from(e: ts_tensor::Error) -> Error {
        Error::from_tensor_error(e)
    }
}

impl From<ts_serialize::SerializeError> for Error {
    fn from(e: ts_serialize::SerializeError) -> Error {
        Error::format(e.to_string())
    }
}

impl From<ts_frontend::CompileError> for Error {
    fn from(e: ts_frontend::CompileError) -> Error {
        Error::new(ErrorKind::Compile, e.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(tb) = &self.traceback {
            writeln!(f, "{tb}")?;
        }
        if let Some(line) = &self.summary {
            return f.write_str(line);
        }
        match self.kind {
            ErrorKind::Runtime | ErrorKind::Argument => {
                write!(f, "{}: {}", self.exception, self.message)
            }
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_carries_class_and_message() {
        let e = Error::from(ts_tensor::Error::new(
            ts_tensor::ErrorKind::ValueError,
            "bad value",
        ));
        assert_eq!(e.to_string(), "ValueError: bad value");
        assert_eq!(e.exception_class(), "ValueError");
        assert_eq!(e.kind(), ErrorKind::Runtime);
        assert!(e.traceback().is_none());
        let e = Error::not_found("no method 'f'");
        assert_eq!(e.exception_class(), "AttributeError");
        assert_eq!(e.to_string(), "no method 'f'");
    }
}
