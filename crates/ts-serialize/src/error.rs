//! The error type of everything in this crate: reading and writing pickles, zip archives,
//! `torch.save` files and `.pt` archives.
//!
//! Every message names the record (`data.pkl`, `data/3`, `version`, ...) or file it is about, so
//! that a user can tell which part of which file is at fault.

use std::fmt;

/// What went wrong while reading or writing serialized data.
#[derive(Debug, thiserror::Error)]
pub enum SerializeError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The container is not a zip archive that this reader understands.
    #[error("{context}: not a readable zip archive: {message}")]
    Zip { context: String, message: String },
    /// A record the format requires is absent.
    #[error("archive has no record '{0}'")]
    MissingRecord(String),
    /// A pickle stream is malformed (truncated, bad opcode, stack misuse).
    #[error("{record}: malformed pickle at byte {offset}: {message}")]
    Pickle {
        record: String,
        offset: usize,
        message: String,
    },
    /// A pickle names a global that is not on the allow-list.
    #[error(
        "{record}: refusing to load global '{module}.{name}': it is not on the allow-list of \
         types and functions a pickle may use"
    )]
    UnknownGlobal {
        record: String,
        module: String,
        name: String,
    },
    /// The data is well-formed but describes something invalid (a wrong storage size, a tensor
    /// outside its storage, a type tag that does not match its value, ...).
    #[error("{record}: {message}")]
    Invalid { record: String, message: String },
    /// The archive's code does not compile (or a class it names is missing).
    #[error("{record}: {message}")]
    Code { record: String, message: String },
    /// Running archive code while loading (a class's `__setstate__`) failed.
    #[error("{record}: {message}")]
    Runtime { record: String, message: String },
    /// A feature of the format that this implementation does not support.
    #[error("{record}: not supported: {what}")]
    Unsupported { record: String, what: String },
}

impl SerializeError {
    /// An [`SerializeError::Invalid`] about `record`.
    pub fn invalid(record: impl Into<String>, message: impl fmt::Display) -> SerializeError {
        SerializeError::Invalid {
            record: record.into(),
            message: message.to_string(),
        }
    }

    /// An [`SerializeError::Unsupported`] about `record`.
    pub fn unsupported(record: impl Into<String>, what: impl fmt::Display) -> SerializeError {
        SerializeError::Unsupported {
            record: record.into(),
            what: what.to_string(),
        }
    }

    /// An [`SerializeError::Io`] for `path`.
    pub fn io(path: impl fmt::Display, source: std::io::Error) -> SerializeError {
        SerializeError::Io {
            path: path.to_string(),
            source,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = SerializeError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_record() {
        let e = SerializeError::Pickle {
            record: "data.pkl".into(),
            offset: 12,
            message: "truncated".into(),
        };
        assert_eq!(
            e.to_string(),
            "data.pkl: malformed pickle at byte 12: truncated"
        );
        let e = SerializeError::UnknownGlobal {
            record: "data.pkl".into(),
            module: "os".into(),
            name: "system".into(),
        };
        assert!(e.to_string().contains("'os.system'"));
        assert_eq!(
            SerializeError::invalid("data/0", "wrong size").to_string(),
            "data/0: wrong size"
        );
    }
}
