//! The error type of tensor operations, shared by the whole runtime.
//!
//! TorchScript surfaces failures as Python exceptions (`RuntimeError`, `IndexError`, ...). The
//! [`ErrorKind`] keeps that class so that the interpreter can print and catch them as PyTorch does.

use std::fmt;

/// The Python exception class an error corresponds to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ErrorKind {
    RuntimeError,
    IndexError,
    ValueError,
    TypeError,
    KeyError,
    ZeroDivisionError,
    AssertionError,
    NotImplementedError,
    StopIteration,
    /// Any other exception class named by a TorchScript `raise` (the name is kept in the message).
    Exception,
}

impl ErrorKind {
    /// The Python class name (`RuntimeError`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::RuntimeError => "RuntimeError",
            ErrorKind::IndexError => "IndexError",
            ErrorKind::ValueError => "ValueError",
            ErrorKind::TypeError => "TypeError",
            ErrorKind::KeyError => "KeyError",
            ErrorKind::ZeroDivisionError => "ZeroDivisionError",
            ErrorKind::AssertionError => "AssertionError",
            ErrorKind::NotImplementedError => "NotImplementedError",
            ErrorKind::StopIteration => "StopIteration",
            ErrorKind::Exception => "Exception",
        }
    }
}

/// An operation failure: the exception class and a message as precise as PyTorch's.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    /// The class a TorchScript `raise` statement named (`builtins.ValueError`); `None` for
    /// failures of operators, which the interpreter reports as `RuntimeError`s as PyTorch does.
    pub raised: Option<String>,
}

impl Error {
    /// A `RuntimeError` with the given message.
    pub fn runtime(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::RuntimeError,
            message: message.into(),
            raised: None,
        }
    }

    /// An error of the given class.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            raised: None,
        }
    }

    /// The exception a TorchScript `raise` statement throws: of class `class` (qualified, as
    /// `builtins.ValueError`), which maps to `kind`.
    pub fn raised(kind: ErrorKind, class: &str, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            raised: Some(class.to_string()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Result of a tensor operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Returns early with a `RuntimeError` built from a format string.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::runtime(format!($($arg)*)))
    };
}
