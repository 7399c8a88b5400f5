//! `ts-serialize`: PyTorch's serialized formats without Python (the counterpart of
//! `torch/csrc/jit/serialization`).
//!
//! Reading is two stages, so that nothing in a file can run code:
//!
//! 1. [`unpickle`] runs the pickle machine (protocols 0–5) over a stream and returns a generic
//!    [`PickleTree`]; globals stay names and REDUCE/NEWOBJ/BUILD are recorded, not executed.
//! 2. [`ValueLoader`] interprets a tree as [`IValue`](ts_core::IValue)s, accepting only the
//!    allow-listed globals of [`globals`] (tensor rebuild functions, storage classes, dtypes,
//!    `OrderedDict`, `torch.device`, `complex`, the `torch.jit._pickle` helpers and `__torch__`
//!    user types). [`LoadHooks`] supplies storage records and user types.
//!
//! Formats:
//!
//! * `torch.save` files: [`load_torch_save`] / [`load_torch_save_bytes`] read them;
//!   [`save_torch_save`] / [`save_torch_save_bytes`] write what real `torch.load` reads.
//! * `torch.jit.save` archives: [`ScriptArchive`] validates the container and gives access to
//!   `code/`, `extra/`, the constants table and `data.pkl` (as a generic tree, or loaded with
//!   classes from an [`ArchiveTypes`] resolver such as the module importer).
//! * Legacy (PyTorch 1.0–1.2) archives: `model.json` + `tensors/` + `attributes.pkl` +
//!   `code/`, loaded by [`legacy_import`] behind the same [`load_script_module`].
//! * Writing `torch.jit.save` code: [`PythonPrinter`] turns graphs and types into the
//!   `code/` files and the `constants.pkl` table, byte-identical to PyTorch 2.15's printer.
//! * The zip container itself: [`Archive`] (reading) and [`ArchiveWriter`] (64-byte aligned
//!   stored records, as PyTorch writes them); [`pickler::Pickler`] writes protocol-2 pickles.
//!
//! Every failure is a [`SerializeError`] naming the record and the problem.

pub mod archive;
pub mod archive_writer;
pub mod error;
pub mod file_replace;
pub mod globals;
pub mod legacy_import;
pub mod module_export;
pub mod module_import;
pub mod op_upgrade;
pub mod opcodes;
pub mod pickle_value;
pub mod pickler;
pub mod python_printer;
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
pub use module_export::{module_from_function, save_script_module, save_script_module_bytes};
pub use module_import::{
    compile_code, load_archive, load_archive_with, load_script_module, load_script_module_bytes,
    load_script_module_with, LoadedModule,
};
pub use pickle_value::{
    Construction, DictId, GlobalName, ListId, ObjectId, PersistentId, PickleObject, PickleTree,
    PickleValue, TupleId,
};
pub use python_printer::{PrintError, PythonPrinter};
pub use script_archive::{ArchiveTypes, InferredClasses, ScriptArchive};
pub use torch_save::{load_from_archive, load_torch_save, load_torch_save_bytes};
pub use torch_save_writer::{save_torch_save, save_torch_save_bytes};
pub use unpickler::unpickle;
pub use value_loader::{build_object_from_dict, load_pickle, LoadHooks, Loaded, ValueLoader};
