//! `torch.jit.save` archives (`.pt`): the records a TorchScript module is rebuilt from.
//!
//! | record | content |
//! |---|---|
//! | `data.pkl` + `data/<k>` | the root module object and its tensors |
//! | `constants.pkl` + `constants/<k>` | the tuple of tensor constants (`CONSTANTS.c<N>` in code) |
//! | `code/__torch__/….py` | the Python-printed source of every class and function |
//! | `extra/<name>` | user `_extra_files` |
//! | `version` or `.data/version` | the file format version (1 to 10) |
//!
//! This module opens the container, validates the version and gives access to the records. The
//! module importer (which compiles `code/`) supplies classes through [`ArchiveTypes`] when it
//! loads `data.pkl`; until it exists, [`InferredClasses`] builds classes from the saved state
//! for inspection and tests.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::RwLock;
use ts_core::types::{ClassAttribute, ClassType};
use ts_core::{IValue, Object, Type, TypeRef};
use ts_tensor::Tensor;

use ts_tensor::storage::Storage;

use crate::archive::Archive;
use crate::error::{Result, SerializeError};
use crate::pickle_value::PickleTree;
use crate::torch_save::RecordStorages;
use crate::value_loader::{build_object_from_dict, load_pickle, LoadHooks};

/// The oldest file format version PyTorch still reads.
pub const MIN_SUPPORTED_VERSION: u64 = 1;
/// The newest file format version PyTorch writes and reads (`kMaxSupportedFileFormatVersion`).
pub const MAX_SUPPORTED_VERSION: u64 = 10;

/// What loading `data.pkl` needs from the module importer.
pub trait ArchiveTypes {
    /// The class, named tuple or enum type named `qualified_name` (e.g.
    /// `__torch__.torch.nn.modules.linear.___torch_mangle_3.Linear`), compiled from `code/`.
    fn resolve_type(&mut self, qualified_name: &str) -> Result<TypeRef>;

    /// An instance of `class` from the state its BUILD opcode carries: a dict of attribute
    /// values, or the result of `__getstate__` (which the importer passes to the compiled
    /// `__setstate__`). The default handles the dict form.
    fn build_object(&mut self, class: &Arc<ClassType>, state: IValue) -> Result<IValue> {
        build_object_from_dict(class, state).map_err(|m| SerializeError::invalid(&class.name, m))
    }
}

/// An opened `torch.jit.save` archive.
#[derive(Debug)]
pub struct ScriptArchive {
    archive: Archive,
    version: u64,
}

impl ScriptArchive {
    /// Opens the archive at `path`.
    pub fn open(path: &Path) -> Result<ScriptArchive> {
        ScriptArchive::from_archive(Archive::open(path)?)
    }

    /// Opens an archive held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<ScriptArchive> {
        ScriptArchive::from_archive(Archive::from_bytes(bytes)?)
    }

    /// Checks that `archive` is a TorchScript archive this implementation reads.
    pub fn from_archive(mut archive: Archive) -> Result<ScriptArchive> {
        if archive.has_record("model.json") {
            return Err(SerializeError::unsupported(
                archive.source(),
                "the legacy model.json TorchScript format (saved before PyTorch 1.3)",
            ));
        }
        let version_record = if archive.has_record(".data/version") {
            ".data/version"
        } else {
            "version"
        };
        let text = archive.read_text(version_record)?;
        let version: u64 = text.trim().parse().map_err(|_| {
            SerializeError::invalid(
                version_record,
                format!("'{}' is not a version number", text.trim()),
            )
        })?;
        if !(MIN_SUPPORTED_VERSION..=MAX_SUPPORTED_VERSION).contains(&version) {
            return Err(SerializeError::unsupported(
                version_record,
                format!(
                    "file format version {version} (supported: {MIN_SUPPORTED_VERSION} to \
                     {MAX_SUPPORTED_VERSION})"
                ),
            ));
        }
        if !archive.has_record("data.pkl") {
            return Err(SerializeError::MissingRecord("data.pkl".into()));
        }
        let has_code = archive.records().iter().any(|r| r.starts_with("code/"));
        if !has_code && !archive.has_record("constants.pkl") {
            return Err(SerializeError::unsupported(
                archive.source(),
                "this is a torch.save file, not a torch.jit.save archive (it has no code/); \
                 load it with load_torch_save",
            ));
        }
        Ok(ScriptArchive { archive, version })
    }

    /// The file format version (`version` or `.data/version` record). Versions below 4 keep
    /// integer `torch.div` truncating, below 5 the old `torch.full` dtype inference, and so on;
    /// the importer maps operators accordingly.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The underlying container.
    pub fn archive(&mut self) -> &mut Archive {
        &mut self.archive
    }

    /// The source files under `code/` (`code/__torch__.py`, `code/__torch__/a/b.py`), without
    /// their `.debug_pkl` companions.
    pub fn code_files(&self) -> Vec<&str> {
        self.archive
            .records()
            .iter()
            .filter(|r| r.starts_with("code/") && r.ends_with(".py"))
            .map(String::as_str)
            .collect()
    }

    /// The source of a code record, e.g. `code/__torch__.py`.
    pub fn read_code(&mut self, record: &str) -> Result<String> {
        self.archive.read_text(record)
    }

    /// The source file that defines the members of `qualifier` (`__torch__.a.b` lives in
    /// `code/__torch__/a/b.py`), or `None` when the archive has no such file.
    pub fn read_code_for(&mut self, qualifier: &str) -> Result<Option<String>> {
        let record = format!("code/{}.py", qualifier.replace('.', "/"));
        if self.archive.has_record(&record) {
            self.archive.read_text(&record).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The names of the extra files (`_extra_files`), without the `extra/` folder.
    pub fn extra_files(&self) -> Vec<&str> {
        self.archive
            .records()
            .iter()
            .filter_map(|r| r.strip_prefix("extra/"))
            .collect()
    }

    /// The content of extra file `name`.
    pub fn read_extra(&mut self, name: &str) -> Result<Vec<u8>> {
        self.archive.read_record(&format!("extra/{name}"))
    }

    /// The generic pickle tree of `<name>.pkl` (`data`, `constants`, ...), for an importer that
    /// interprets objects itself.
    pub fn pickle_tree(&mut self, name: &str) -> Result<PickleTree> {
        self.archive.read_pickle(&format!("{name}.pkl"))
    }

    /// Loads `<name>.pkl` with its tensors from `<name>/<key>`, resolving user types through
    /// `types`.
    pub fn load_pickle(&mut self, name: &str, types: &mut dyn ArchiveTypes) -> Result<IValue> {
        let record = format!("{name}.pkl");
        let tree = self.archive.read_pickle(&record)?;
        let big_endian = self.archive.is_big_endian()?;
        let mut hooks = ArchiveHooks {
            storages: RecordStorages {
                archive: &mut self.archive,
                folder: name,
                big_endian,
            },
            types,
        };
        load_pickle(&tree, &record, &mut hooks)
    }

    /// The constants table (`constants.pkl`): the values `CONSTANTS.c<N>` refers to. Archives
    /// without the record have none.
    pub fn load_constants(&mut self) -> Result<Vec<IValue>> {
        if !self.archive.has_record("constants.pkl") {
            return Ok(Vec::new());
        }
        match self.load_pickle("constants", &mut NoUserTypes)? {
            IValue::Tuple(t) => Ok(t.elements.clone()),
            other => Err(SerializeError::invalid(
                "constants.pkl",
                format!("expected a tuple of constants, found {other:?}"),
            )),
        }
    }

    /// The root module object (`data.pkl`).
    pub fn load_data(&mut self, types: &mut dyn ArchiveTypes) -> Result<IValue> {
        self.load_pickle("data", types)
    }
}

/// Storage records plus the importer's types.
struct ArchiveHooks<'a> {
    storages: RecordStorages<'a>,
    types: &'a mut dyn ArchiveTypes,
}

impl LoadHooks for ArchiveHooks<'_> {
    fn read_storage(&mut self, key: &str, nbytes: usize) -> Result<Vec<u8>> {
        self.storages.read_storage(key, nbytes)
    }

    fn map_storage(&mut self, key: &str, nbytes: usize) -> Result<Option<Storage>> {
        self.storages.map_storage(key, nbytes)
    }

    fn storage_record(&self, key: &str) -> String {
        self.storages.storage_record(key)
    }

    fn big_endian(&self) -> bool {
        self.storages.big_endian
    }

    fn resolve_type(&mut self, qualified_name: &str) -> Result<Option<TypeRef>> {
        self.types.resolve_type(qualified_name).map(Some)
    }

    fn build_object(&mut self, class: &Arc<ClassType>, state: IValue) -> Result<IValue> {
        self.types.build_object(class, state)
    }

    fn tensor_from_id(&mut self, _id: i64) -> Result<Option<Tensor>> {
        Ok(None)
    }
}

/// For pickles that must not name user types (`constants.pkl`).
struct NoUserTypes;

impl ArchiveTypes for NoUserTypes {
    fn resolve_type(&mut self, qualified_name: &str) -> Result<TypeRef> {
        Err(SerializeError::invalid(
            "constants.pkl",
            format!("the constants table names the type {qualified_name}"),
        ))
    }
}

/// Classes made up from the saved state instead of compiled from `code/`: each `__torch__`
/// name becomes a class whose attributes are the keys of the first state dict seen for it,
/// typed from their values. Enough to inspect an archive and to load its tensors; methods and
/// declared types need the real importer. A `__getstate__` state is kept whole in an attribute
/// named `__getstate__`.
#[derive(Default)]
pub struct InferredClasses {
    classes: HashMap<String, Arc<ClassType>>,
}

impl InferredClasses {
    /// The classes made up so far, by qualified name.
    pub fn classes(&self) -> &HashMap<String, Arc<ClassType>> {
        &self.classes
    }
}

impl ArchiveTypes for InferredClasses {
    fn resolve_type(&mut self, qualified_name: &str) -> Result<TypeRef> {
        let class = self
            .classes
            .entry(qualified_name.to_owned())
            .or_insert_with(|| ClassType::new(qualified_name, true))
            .clone();
        Ok(Arc::new(Type::Class(class)))
    }

    fn build_object(&mut self, class: &Arc<ClassType>, state: IValue) -> Result<IValue> {
        let (names, values): (Vec<String>, Vec<IValue>) = match &state {
            IValue::Dict(d) => d
                .entries
                .read()
                .iter()
                .map(|(k, v)| match &k.0 {
                    IValue::String(s) => Ok(((**s).clone(), v.clone())),
                    other => Err(SerializeError::invalid(
                        &class.name,
                        format!("attribute name {other:?} is not a string"),
                    )),
                })
                .collect::<Result<Vec<_>>>()?
                .into_iter()
                .unzip(),
            _ => (vec!["__getstate__".to_owned()], vec![state.clone()]),
        };
        {
            let mut members = class.members.write();
            if members.attributes.is_empty() {
                members.attributes = names
                    .iter()
                    .zip(&values)
                    .map(|(name, v)| ClassAttribute {
                        name: name.clone(),
                        ty: shallow_type(v),
                        is_parameter: false,
                        is_buffer: false,
                    })
                    .collect();
            }
        }
        if matches!(state, IValue::Dict(_)) {
            return build_object_from_dict(class, state)
                .map_err(|m| SerializeError::invalid(&class.name, m));
        }
        Ok(IValue::Object(Arc::new(Object {
            class: class.clone(),
            slots: RwLock::new(values),
        })))
    }
}

/// The type of an attribute value: plain `Tensor` for tensors, `Any` for tuples (whose types
/// would have to be computed through possibly shared, deeply nested elements), otherwise the
/// value's own type, which for containers is their element-type tag.
fn shallow_type(v: &IValue) -> TypeRef {
    match v {
        IValue::Tensor(_) => Type::tensor(),
        IValue::Tuple(_) => Type::any(),
        other => other.type_of(),
    }
}
