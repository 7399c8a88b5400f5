//! Commands on saved modules: `save`, `info` and `code`.

use std::path::Path;

use crate::cli::{emit, CliError};
use crate::program::{is_archive, load_module, Program};

/// `tsrs save PROGRAM OUT.pt [--entry NAME]`.
pub fn save(program: &Path, output: &Path, entry: Option<&str>) -> Result<(), CliError> {
    let module = if is_archive(program) {
        load_module(program)?
    } else {
        let entry = entry.ok_or_else(|| {
            CliError("error: saving a source program needs --entry NAME (the function to save as forward)".into())
        })?;
        Program::open(program, true)?
            .entry(entry, program)?
            .into_module("ScriptFunctionModule")?
    };
    Ok(module.save(output)?)
}

/// `tsrs info MODEL`.
pub fn info(path: &Path) -> Result<(), CliError> {
    let m = load_module(path)?;
    let version = m.file_format_version().unwrap_or_default();
    emit(&format!(
        "{}: file format version {version}\n{}",
        path.display(),
        m.summary()
    ));
    Ok(())
}

/// `tsrs code MODEL`: the module's code as the Python printer writes it.
pub fn code(path: &Path) -> Result<(), CliError> {
    for (file, text) in load_module(path)?.code_files()? {
        emit(&format!("# {file}\n{text}"));
    }
    Ok(())
}
