//! Commands on `torch.jit.save` archives.

use std::path::Path;

use std::sync::Arc;

use ts_core::{IValue, Object};
use ts_serialize::LoadedModule;

use crate::cli::CliError;

/// True when `path` names a saved archive rather than a source program.
pub fn is_archive(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "pt" || e == "pth" || e == "zip")
}

/// Walks `a.b.method` from the root module: the object owning the method, and its name.
pub fn resolve_method_path(
    root: &Arc<Object>,
    path: &str,
) -> Result<(Arc<Object>, String), CliError> {
    let mut parts: Vec<&str> = path.split('.').collect();
    let method = parts.pop().unwrap_or_default().to_string();
    let mut obj = root.clone();
    for p in parts {
        let i = obj.class.attribute_index(p).ok_or_else(|| {
            CliError(format!(
                "error: '{}' has no submodule '{p}'",
                obj.class.name
            ))
        })?;
        let next = obj.slots.read()[i].clone();
        obj = match next {
            IValue::Object(o) => o,
            _ => return Err(CliError(format!("error: attribute '{p}' is not a module"))),
        };
    }
    Ok((obj, method))
}

/// Loads the archive at `path`.
pub fn load(path: &Path) -> Result<LoadedModule, CliError> {
    ts_serialize::load_script_module(path)
        .map_err(|e| CliError(format!("error: cannot load {}: {e}", path.display())))
}

/// Loads an archive and calls method `entry` of its root module (or of a submodule:
/// `fc1.forward`, as `graph` and `save` accept).
pub fn call_model(path: &Path, entry: &str, args: Vec<IValue>) -> Result<IValue, CliError> {
    let m = load(path)?;
    let (obj, name) = resolve_method_path(&m.module, entry)?;
    let method = obj.class.find_method(&name).ok_or_else(|| {
        CliError(format!(
            "error: the module in {} has no method '{entry}'",
            path.display()
        ))
    })?;
    let f = ts_ir::as_function(&method)
        .ok_or_else(|| CliError(format!("error: '{entry}' is not a TorchScript method")))?;
    let schema = f
        .try_schema()
        .ok_or_else(|| CliError(format!("error: method '{entry}' has no schema")))?;
    let args = ts_runtime::bind_arguments(&schema, args, true)
        .map_err(|e| CliError(format!("{}: {}", e.kind.name(), e.message)))?;
    ts_runtime::call_method(&obj, &name, args).map_err(|e| CliError(e.to_string()))
}

/// `tsrs save PROGRAM OUT.pt [--entry NAME]`.
pub fn save(program: &Path, output: &Path, entry: Option<&str>) -> Result<(), CliError> {
    let module = if is_archive(program) {
        load(program)?.module
    } else {
        let entry = entry.ok_or_else(|| {
            CliError("error: saving a source program needs --entry NAME (the function to save as forward)".into())
        })?;
        let f = crate::program::find_entry(program, entry)?;
        ts_serialize::module_from_function(&f, "ScriptFunctionModule")
            .map_err(|e| CliError(format!("error: {e}")))?
    };
    ts_serialize::save_script_module(&module, output)
        .map_err(|e| CliError(format!("error: cannot save {}: {e}", output.display())))
}

/// `tsrs info MODEL`.
pub fn info(path: &Path) -> Result<(), CliError> {
    let m = load(path)?;
    let mut out = format!("{}: file format version {}\n", path.display(), m.version);
    describe(&m.module, "root", 0, &mut out);
    crate::cli::emit(&out);
    Ok(())
}

fn describe(obj: &Arc<Object>, name: &str, depth: usize, out: &mut String) {
    use std::fmt::Write;
    let pad = "  ".repeat(depth);
    let _ = writeln!(out, "{pad}{name} ({})", obj.class.name);
    let slots = obj.slots.read().clone();
    for (a, v) in obj.class.attributes().iter().zip(&slots) {
        match v {
            IValue::Object(o) if o.class.is_module => {
                describe(o, &a.name, depth + 1, out);
            }
            IValue::Tensor(t) => {
                let kind = if a.is_parameter {
                    "parameter"
                } else if a.is_buffer {
                    "buffer"
                } else {
                    "attribute"
                };
                let _ = writeln!(
                    out,
                    "{pad}  {kind} {}: {}{:?}",
                    a.name,
                    t.dtype().name(),
                    t.sizes().as_slice()
                );
            }
            other => {
                let mut shown = other.to_display_string();
                if shown.len() > 60 {
                    shown.truncate(57);
                    shown.push_str("...");
                }
                let _ = writeln!(
                    out,
                    "{pad}  attribute {}: {} = {shown}",
                    a.name,
                    a.ty.annotation_str()
                );
            }
        }
    }
    for m in obj.class.methods() {
        if let Some(f) = ts_ir::as_function(&m) {
            if let Some(s) = f.try_schema() {
                let _ = writeln!(out, "{pad}  method {s}");
            }
        }
    }
}

/// `tsrs code MODEL`: the module's code as the Python printer writes it.
pub fn code(path: &Path) -> Result<(), CliError> {
    let m = load(path)?;
    let mut p = ts_serialize::PythonPrinter::new();
    p.add_type_tree(&ts_core::Type::class(m.module.class.clone()))
        .map_err(|e| CliError(format!("error: cannot print the code: {e}")))?;
    for (file, text) in p.files() {
        crate::cli::emit(&format!("# {file}\n{text}"));
    }
    Ok(())
}
