//! Saving a module as a `torch.jit.save` archive that PyTorch's `torch.jit.load` reads: the
//! Python printer writes `code/`, the pickler writes the module objects (`data.pkl`) and the
//! constants table (`constants.pkl`), each with their tensor storages.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use ts_core::types::ClassType;
use ts_core::{IValue, Object, Type, TypeRef};
use ts_ir::{Function, Graph};

use crate::archive_writer::ArchiveWriter;
use crate::error::{Result, SerializeError};
use crate::python_printer::PythonPrinter;
use crate::torch_save_writer::write_script_pickle;

/// The file format version PyTorch 2.15 writes for archives that need no operator upgraders.
const PRODUCED_VERSION: &[u8] = b"3";

/// Saves `module` to `path`.
pub fn save_script_module(module: &Arc<Object>, path: &Path) -> Result<()> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "archive".to_owned());
    let bytes = save_script_module_bytes(module, &stem)?;
    crate::file_replace::replace_file(path, &bytes)
}

/// The archive bytes of `module`, with records under `archive_name/`.
pub fn save_script_module_bytes(module: &Arc<Object>, archive_name: &str) -> Result<Vec<u8>> {
    if !module.class.is_module {
        return Err(SerializeError::unsupported(
            &module.class.name,
            "only modules can be saved as TorchScript archives",
        ));
    }
    // torch.jit.save prints the classes of the pickled objects first, in pickling order.
    let mut classes = Vec::new();
    let mut seen = HashSet::new();
    collect_classes(&IValue::Object(module.clone()), &mut classes, &mut seen, 0);
    if let Some(custom) = seen
        .iter()
        .find(|n| n.starts_with("__torch__.torch.classes."))
    {
        return Err(SerializeError::unsupported(
            custom,
            "saving objects of C++ custom classes (quantized packed parameters) is not supported",
        ));
    }
    let mut printer = PythonPrinter::new();
    printer
        .add_types(&classes)
        .map_err(|e| SerializeError::unsupported("code/", format!("cannot print the code: {e}")))?;
    let mut w = ArchiveWriter::new(archive_name)?;
    write_script_pickle(&mut w, "data", &IValue::Object(module.clone()))?;
    for (path, text) in printer.files() {
        w.write_record(&path, text.as_bytes())?;
    }
    let constants = printer.into_constants();
    write_script_pickle(&mut w, "constants", &IValue::tuple(constants))?;
    w.write_record("version", PRODUCED_VERSION)?;
    w.write_record("byteorder", b"little")?;
    w.finish()
}

/// The class types of every object reachable from `v`, in pickling (depth-first) order.
fn collect_classes(v: &IValue, out: &mut Vec<TypeRef>, seen: &mut HashSet<String>, depth: usize) {
    if depth > crate::value_loader::MAX_NESTING {
        return;
    }
    match v {
        IValue::Object(o) => {
            if seen.insert(o.class.name.clone()) {
                out.push(Type::class(o.class.clone()));
            }
            for s in o.slots.read().iter() {
                collect_classes(s, out, seen, depth + 1);
            }
        }
        IValue::List(l) => {
            for x in l.items.read().iter() {
                collect_classes(x, out, seen, depth + 1);
            }
        }
        IValue::Tuple(t) => {
            for x in &t.elements {
                collect_classes(x, out, seen, depth + 1);
            }
        }
        IValue::Dict(d) => {
            for x in d.entries.read().values() {
                collect_classes(x, out, seen, depth + 1);
            }
        }
        _ => {}
    }
}

/// Wraps a free function as the `forward` method of a new module class (what `torch.jit.save`
/// of a scripted function does), returning the module object.
pub fn module_from_function(f: &Arc<Function>, class_name: &str) -> Result<Arc<Object>> {
    let graph = f.graph().ok_or_else(|| {
        SerializeError::unsupported(f.qualified_name(), "the function has no graph")
    })?;
    let schema = f.try_schema().ok_or_else(|| {
        SerializeError::unsupported(f.qualified_name(), "the function has no schema")
    })?;
    let class = ClassType::new(format!("__torch__.{class_name}"), true);
    class.add_attribute("training", Type::bool(), false, false);
    let mut g: Graph = (*graph).clone();
    // `self` becomes the first input.
    let top = g.block();
    let self_v = g.insert_block_input(top, 0, Type::class(class.clone()));
    let _ = g.set_debug_name(self_v, "self");
    let mut schema = schema;
    schema.name = "forward".to_string();
    schema.arguments.insert(
        0,
        ts_core::Argument {
            name: "self".to_string(),
            ty: Type::class(class.clone()),
            real_ty: None,
            n: None,
            default: None,
            kwarg_only: false,
            alias_info: None,
        },
    );
    let method = Function::new(format!("{}.forward", class.name), g, schema);
    class.add_method(method);
    Ok(Arc::new(Object {
        class: class.clone(),
        slots: parking_lot::RwLock::new(vec![IValue::Bool(false)]),
    }))
}
