//! Commands on `torch.jit.save` archives.

use std::path::Path;

use ts_core::IValue;

use crate::cli::CliError;

/// Loads an archive and calls method `entry` of its root module.
pub fn call_model(path: &Path, entry: &str, _args: Vec<IValue>) -> Result<IValue, CliError> {
    Err(CliError(format!(
        "error: cannot run '{entry}' of {}: loading torch.jit.save archives is not implemented yet",
        path.display()
    )))
}
