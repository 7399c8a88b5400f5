//! Loading a `torch.jit.save` archive as a runnable module (PyTorch's `import_source` +
//! `ScriptModuleDeserializer`): compile every `code/` file with the frontend, then unpickle
//! `data.pkl` with the compiled classes, restoring each object's attributes (or calling its
//! `__setstate__`).

use std::path::Path;
use std::sync::Arc;

use parking_lot::RwLock;
use ts_core::types::ClassType;
use ts_core::{DebugSegment, DictKey, IValue, Object, Source, SourceRange, Type, TypeRef};
use ts_ir::CompilationUnit;

use crate::archive::Archive;
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

/// Loads the archive at `path` (the modern format, or the legacy `model.json` one).
pub fn load_script_module(path: &Path) -> Result<LoadedModule> {
    load_archive(Archive::open(path)?)
}

/// [`load_script_module`], calling `before_compile` once, after the archive's code is read
/// and parsed and before it compiles: the first point that needs the operators. A caller that
/// builds its operator libraries on another thread waits for them there, so that the build
/// overlaps reading and parsing the archive.
pub fn load_script_module_with(
    path: &Path,
    before_compile: &mut dyn FnMut(),
) -> Result<LoadedModule> {
    load_archive_with(Archive::open(path)?, before_compile)
}

/// Loads an archive held in memory.
pub fn load_script_module_bytes(bytes: Vec<u8>) -> Result<LoadedModule> {
    load_archive(Archive::from_bytes(bytes)?)
}

/// Loads an opened archive: the way to load with limits of one's own (for example
/// `Archive::open(path)?.with_inflate_budget(n)`).
pub fn load_archive(archive: Archive) -> Result<LoadedModule> {
    load_archive_with(archive, &mut || {})
}

/// [`load_archive`] with a `before_compile` call (see [`load_script_module_with`]).
pub fn load_archive_with(
    archive: Archive,
    before_compile: &mut dyn FnMut(),
) -> Result<LoadedModule> {
    if crate::legacy_import::is_legacy(&archive) {
        before_compile();
        return crate::legacy_import::load_legacy(archive);
    }
    import(ScriptArchive::from_archive(archive)?, before_compile)
}

/// `code/__torch__/a/b.py` defines the members of `__torch__.a.b`.
fn qualifier_of(record: &str) -> Option<String> {
    let path = record.split_once("code/")?.1.strip_suffix(".py")?;
    Some(path.replace('/', "."))
}

/// Compiles the archive's code into a new unit.
pub fn compile_code(archive: &mut ScriptArchive) -> Result<Arc<CompilationUnit>> {
    compile_code_with(archive, &mut || {})
}

/// [`compile_code`], calling `before_compile` between parsing and compiling.
fn compile_code_with(
    archive: &mut ScriptArchive,
    before_compile: &mut dyn FnMut(),
) -> Result<Arc<CompilationUnit>> {
    let constants = archive.load_constants()?;
    let mut files = Vec::new();
    let records: Vec<String> = archive.code_files().iter().map(|s| s.to_string()).collect();
    for record in records {
        let Some(qualifier) = qualifier_of(&record) else {
            continue;
        };
        let text = archive.read_code(&record)?;
        if qualifier.starts_with("__torch__.torch.classes") {
            // PyTorch writes an empty file per custom class namespace; the classes themselves
            // are native (`ts_ops::quantized::packed`), and only those are known.
            if text.trim().is_empty() {
                continue;
            }
            return Err(SerializeError::unsupported(
                &record,
                "custom C++ classes (torch.classes) cannot be loaded",
            ));
        }
        let debug_record = format!("{record}.debug_pkl");
        let source = if archive.archive().has_record(&debug_record) {
            let segments = read_debug_info(archive, &debug_record)?;
            Source::with_debug_info(text, Some(record.clone()), segments)
        } else {
            Source::new(text, Some(record.clone()), 1)
        };
        files.push((qualifier, source));
    }
    let parsed = ts_frontend::parse_files(&files).map_err(code_error)?;
    before_compile();
    compile_parsed(parsed, constants)
}

/// A compile error of the archive's code.
fn code_error(e: ts_frontend::CompileError) -> SerializeError {
    SerializeError::Code {
        record: "code/".to_string(),
        message: format!("the archive's code does not compile: {e}"),
    }
}

/// Compiles archive-mode source files (`(qualifier, source)` pairs) with the constants table
/// `CONSTANTS.c<N>` refers to, leaving each graph cleaned up as PyTorch stores it.
pub(crate) fn compile_sources(
    files: &[(String, Arc<Source>)],
    constants: Vec<IValue>,
) -> Result<Arc<CompilationUnit>> {
    compile_parsed(
        ts_frontend::parse_files(files).map_err(code_error)?,
        constants,
    )
}

/// [`compile_sources`] on files parsed already.
fn compile_parsed(
    parsed: ts_frontend::ParsedFiles,
    constants: Vec<IValue>,
) -> Result<Arc<CompilationUnit>> {
    let cu = CompilationUnit::new();
    for name in ts_ops::quantized::packed::CUSTOM_CLASSES {
        if let Some(t) = ts_ops::quantized::packed::custom_class_type(name) {
            cu.register_type(name, t);
        }
    }
    ts_frontend::compile_parsed_archive_code(&cu, parsed, constants).map_err(code_error)?;
    // Stored graphs are what PyTorch keeps after compiling: cleaned up.
    for f in cu.functions() {
        if let Some(g) = f.graph() {
            let mut g = (*g).clone();
            ts_passes::run_cleanup_passes(&mut g);
            f.set_graph(g);
        }
    }
    Ok(cu)
}

/// Storage-less pickles (debug info) have no tensors to read.
struct NoStorages;

impl crate::value_loader::LoadHooks for NoStorages {
    fn read_storage(&mut self, key: &str, _nbytes: usize) -> Result<Vec<u8>> {
        Err(SerializeError::invalid(
            "debug info",
            format!("unexpected tensor storage '{key}'"),
        ))
    }
}

/// Reads a `code/….py.debug_pkl` record: `("FORMAT_WITH_STRING_TABLE", strings, entries)`, each
/// entry `(code_offset, ((text_parts, filename_index, starting_line), start, end), handle)`,
/// mapping the printed code back to the user's Python source.
fn read_debug_info(archive: &mut ScriptArchive, record: &str) -> Result<Vec<DebugSegment>> {
    let bad = |m: &str| SerializeError::invalid(record, m);
    let tree = archive.archive().read_pickle(record)?;
    let root = crate::value_loader::load_pickle(&tree, record, &mut NoStorages)?;
    let top = root.as_tuple().ok_or_else(|| bad("expected a tuple"))?;
    let (strings, entries) = match top.elements.as_slice() {
        [IValue::String(tag), strings, entries] if tag.as_str() == "FORMAT_WITH_STRING_TABLE" => {
            (strings.clone(), entries.clone())
        }
        _ => {
            return Err(bad(
                "unsupported debug info format (expected FORMAT_WITH_STRING_TABLE)",
            ))
        }
    };
    let strings: Vec<String> = tuple_items(&strings)
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_string())
        .collect();
    let mut sources: std::collections::HashMap<(Vec<i64>, i64, i64), Arc<Source>> =
        std::collections::HashMap::new();
    let mut out = Vec::new();
    for e in tuple_items(&entries) {
        let parts = tuple_items(&e);
        let (Some(offset), Some(range)) = (parts.first().and_then(IValue::as_int), parts.get(1))
        else {
            return Err(bad("malformed debug entry"));
        };
        let r = tuple_items(range);
        let (Some(src), Some(start), Some(end)) = (
            r.first(),
            r.get(1).and_then(IValue::as_int),
            r.get(2).and_then(IValue::as_int),
        ) else {
            return Err(bad("malformed debug range"));
        };
        let sp = tuple_items(src);
        let text_ids: Vec<i64> = sp
            .first()
            .map(|l| tuple_items(l).iter().filter_map(IValue::as_int).collect())
            .unwrap_or_default();
        let file_id = sp.get(1).and_then(IValue::as_int).unwrap_or(0);
        let line = sp.get(2).and_then(IValue::as_int).unwrap_or(0);
        let filename = strings.get(file_id as usize).cloned().unwrap_or_default();
        let original = if text_ids.is_empty() && filename.is_empty() {
            None
        } else {
            let key = (text_ids.clone(), file_id, line);
            let source = sources
                .entry(key)
                .or_insert_with(|| {
                    let text: String = text_ids
                        .iter()
                        .filter_map(|&i| strings.get(i as usize))
                        .map(String::as_str)
                        .collect();
                    Source::new(text, Some(filename.clone()), line.max(1) as usize)
                })
                .clone();
            Some(SourceRange::new(
                source,
                start.max(0) as usize,
                end.max(0) as usize,
            ))
        };
        out.push(DebugSegment {
            offset: offset.max(0) as usize,
            original,
        });
    }
    Ok(out)
}

/// The elements of a tuple or list value (empty for anything else).
fn tuple_items(v: &IValue) -> Vec<IValue> {
    match v {
        IValue::Tuple(t) => t.elements.clone(),
        IValue::List(l) => l.items.read().clone(),
        _ => Vec::new(),
    }
}

fn import(mut archive: ScriptArchive, before_compile: &mut dyn FnMut()) -> Result<LoadedModule> {
    let cu = compile_code_with(&mut archive, before_compile)?;
    let version = archive.version();
    crate::op_upgrade::upgrade_operators(&cu, version);
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
        if ts_ops::quantized::packed::custom_class_type(&class.name).is_some() {
            return ts_ops::quantized::packed::set_state(&class.name, state).map_err(|e| {
                SerializeError::Runtime {
                    record: "data.pkl".into(),
                    message: format!("{}.__setstate__ failed: {e}", class.name),
                }
            });
        }
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
