//! Loading a `torch.jit.save` archive as a runnable module (PyTorch's `import_source` +
//! `ScriptModuleDeserializer`): compile every `code/` file with the frontend, then unpickle
//! `data.pkl` with the compiled classes, restoring each object's attributes (or calling its
//! `__setstate__`).

use std::path::Path;
use std::sync::Arc;

use parking_lot::RwLock;
use ts_core::types::ClassType;
use ts_core::{DictKey, IValue, Object, Source, Type, TypeRef};
use ts_ir::CompilationUnit;

use crate::error::{Result, SerializeError};
use crate::script_archive::{ArchiveTypes, ScriptArchive};

/// A module loaded from an archive: the root object and the unit its code was compiled into.
pub struct LoadedModule {
    /// The root module object (`self` of its methods).
    pub module: Arc<Object>,
    /// Every class and function of the archive's code.
    pub cu: Arc<CompilationUnit>,
    /// The archive's file format version.
    pub version: u64,
}

/// Loads the archive at `path`.
pub fn load_script_module(path: &Path) -> Result<LoadedModule> {
    import(ScriptArchive::open(path)?)
}

/// Loads an archive held in memory.
pub fn load_script_module_bytes(bytes: Vec<u8>) -> Result<LoadedModule> {
    import(ScriptArchive::from_bytes(bytes)?)
}

/// `code/__torch__/a/b.py` defines the members of `__torch__.a.b`.
fn qualifier_of(record: &str) -> Option<String> {
    let path = record.split_once("code/")?.1.strip_suffix(".py")?;
    Some(path.replace('/', "."))
}

/// Compiles the archive's code into a new unit.
pub fn compile_code(archive: &mut ScriptArchive) -> Result<Arc<CompilationUnit>> {
    let constants = archive.load_constants()?;
    let mut files = Vec::new();
    let records: Vec<String> = archive.code_files().iter().map(|s| s.to_string()).collect();
    for record in records {
        let Some(qualifier) = qualifier_of(&record) else {
            continue;
        };
        if qualifier.starts_with("__torch__.torch.classes") {
            return Err(SerializeError::unsupported(
                &record,
                "custom C++ classes (torch.classes) cannot be loaded",
            ));
        }
        let text = archive.read_code(&record)?;
        files.push((qualifier, Source::new(text, Some(record.clone()), 1)));
    }
    let cu = CompilationUnit::new();
    ts_frontend::compile_archive_code(&cu, &files, constants).map_err(|e| {
        SerializeError::Code {
            record: "code/".to_string(),
            message: format!("the archive's code does not compile: {e}"),
        }
    })?;
    Ok(cu)
}

fn import(mut archive: ScriptArchive) -> Result<LoadedModule> {
    let cu = compile_code(&mut archive)?;
    let version = archive.version();
    let mut types = CompiledTypes { cu: cu.clone() };
    let root = archive.load_pickle("data", &mut types)?;
    let IValue::Object(module) = root else {
        return Err(SerializeError::invalid(
            "data.pkl",
            format!("expected a module object, found a {}", root.tag_name()),
        ));
    };
    Ok(LoadedModule {
        module,
        cu,
        version,
    })
}

/// Resolves the pickle's class names to the compiled classes.
struct CompiledTypes {
    cu: Arc<CompilationUnit>,
}

impl ArchiveTypes for CompiledTypes {
    fn resolve_type(&mut self, qualified_name: &str) -> Result<TypeRef> {
        self.cu
            .find_type(qualified_name)
            .ok_or_else(|| SerializeError::Code {
                record: "data.pkl".into(),
                message: format!("the archive's code defines no class named '{qualified_name}'"),
            })
    }

    fn build_object(&mut self, class: &Arc<ClassType>, state: IValue) -> Result<IValue> {
        if class.find_method("__setstate__").is_some() {
            let slots = vec![IValue::None; class.num_attributes()];
            let obj = Arc::new(Object {
                class: class.clone(),
                slots: RwLock::new(slots),
            });
            ts_runtime::call_method(&obj, "__setstate__", vec![state]).map_err(|e| {
                SerializeError::Runtime {
                    record: "data.pkl".into(),
                    message: format!("{}.__setstate__ failed: {e}", class.name),
                }
            })?;
            return Ok(IValue::Object(obj));
        }
        let IValue::Dict(dict) = &state else {
            return Err(SerializeError::invalid(
                "data.pkl",
                format!(
                    "the state of a {} object is not a dict and the class has no __setstate__",
                    class.name
                ),
            ));
        };
        let entries = dict.entries.read();
        let mut slots = Vec::new();
        for attr in class.attributes() {
            let key = DictKey(IValue::str(attr.name.clone()));
            let v = entries.get(&key).cloned().ok_or_else(|| {
                SerializeError::invalid(
                    "data.pkl",
                    format!(
                        "the saved {} has no value for attribute '{}'",
                        class.name, attr.name
                    ),
                )
            })?;
            slots.push(typed(v, &attr.ty));
        }
        Ok(IValue::Object(Arc::new(Object {
            class: class.clone(),
            slots: RwLock::new(slots),
        })))
    }
}

/// Gives unpickled containers their declared element types (pickles carry none for lists of
/// primitives).
fn typed(v: IValue, ty: &TypeRef) -> IValue {
    if matches!(**ty, Type::Any) {
        return v;
    }
    ts_runtime::coerce(v.clone(), ty).unwrap_or(v)
}
