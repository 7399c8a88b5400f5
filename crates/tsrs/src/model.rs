//! Commands on `torch.jit.save` archives.

use std::path::Path;

use ts_core::IValue;
use ts_serialize::LoadedModule;

use crate::cli::CliError;

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
