//! `ts-serialize`: reading and writing PyTorch's serialized data without Python.
//!
//! * [`unpickle`] runs the pickle machine over a stream and returns a generic [`PickleTree`];
//!   nothing is executed and globals stay names.
//! * [`ValueLoader`] interprets a tree as [`IValue`](ts_core::IValue)s, accepting only the
//!   allow-listed globals of [`globals`]; [`LoadHooks`] supplies storages and user types.

pub mod archive;
pub mod archive_writer;
pub mod error;
pub mod globals;
pub mod opcodes;
pub mod pickle_value;
pub mod pickler;
pub mod script_archive;
pub mod storage_kind;
pub mod torch_save;
pub mod torch_save_writer;
pub mod type_table;
pub mod type_tag;
pub mod unpickler;
pub mod value_loader;

pub use archive::Archive;
pub use archive_writer::ArchiveWriter;
pub use error::{Result, SerializeError};
pub use pickle_value::{
    Construction, DictId, GlobalName, ListId, ObjectId, PersistentId, PickleObject, PickleTree,
    PickleValue, TupleId,
};
pub use script_archive::{ArchiveTypes, InferredClasses, ScriptArchive};
pub use torch_save::{load_torch_save, load_torch_save_bytes};
pub use torch_save_writer::{save_torch_save, save_torch_save_bytes};
pub use unpickler::unpickle;
pub use value_loader::{build_object_from_dict, load_pickle, LoadHooks, Loaded, ValueLoader};
