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

/// Loads an archive and calls method `entry` of its root module.
pub fn call_model(path: &Path, entry: &str, args: Vec<IValue>) -> Result<IValue, CliError> {
    let m = load(path)?;
    let method = m.module.class.find_method(entry).ok_or_else(|| {
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
    ts_runtime::call_method(&m.module, entry, args).map_err(|e| CliError(e.to_string()))
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
