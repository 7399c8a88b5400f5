//! TorchScript errors as Python exceptions of the class TorchScript raises, with the
//! TorchScript traceback in the message.

use pyo3::exceptions::{
    PyAssertionError, PyAttributeError, PyIndexError, PyKeyError, PyNotImplementedError, PyOSError,
    PyRuntimeError, PyStopIteration, PyTypeError, PyValueError, PyZeroDivisionError,
};
use pyo3::PyErr;

/// The Python exception for a facade error.
pub fn to_py(e: torchscript::Error) -> PyErr {
    let msg = e.to_string();
    // The message ends with "Class: text" for runtime errors; Python prints the class itself.
    let text = match e.kind() {
        torchscript::ErrorKind::Runtime | torchscript::ErrorKind::Argument
            if e.traceback().is_none() =>
        {
            e.message().to_string()
        }
        _ => msg,
    };
    match e.exception_class() {
        "ValueError" => PyValueError::new_err(text),
        "IndexError" => PyIndexError::new_err(text),
        "TypeError" => PyTypeError::new_err(text),
        "KeyError" => PyKeyError::new_err(text),
        "ZeroDivisionError" => PyZeroDivisionError::new_err(text),
        "AssertionError" => PyAssertionError::new_err(text),
        "NotImplementedError" => PyNotImplementedError::new_err(text),
        "AttributeError" => PyAttributeError::new_err(text),
        "StopIteration" => PyStopIteration::new_err(text),
        "OSError" => PyOSError::new_err(text),
        _ => PyRuntimeError::new_err(text),
    }
}

/// The Python exception for an error of the tensor library / runtime.
pub fn from_tensor(e: ts_tensor::Error) -> PyErr {
    to_py(torchscript::Error::from(e))
}
