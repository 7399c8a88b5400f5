//! `ts-serialize`: reading and writing PyTorch's serialized data without Python.
//!
//! * [`unpickle`] runs the pickle machine over a stream and returns a generic [`PickleTree`];
//!   nothing is executed and globals stay names.
//! * The conversion stage turns a tree into [`IValue`](ts_core::IValue)s, accepting only an
//!   allow-list of globals.

pub mod error;
pub mod opcodes;
pub mod pickle_value;
pub mod unpickler;

pub use error::{Result, SerializeError};
pub use pickle_value::{
    Construction, DictId, GlobalName, ListId, ObjectId, PersistentId, PickleObject, PickleTree,
    PickleValue, TupleId,
};
pub use unpickler::unpickle;
