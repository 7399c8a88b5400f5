//! Commands on TorchScript source programs: `graph`.

use std::path::Path;
use std::sync::Arc;

use ts_core::Source;
use ts_ir::CompilationUnit;

use crate::cli::{read_text, CliError};

/// Compiles a source file into a unit.
pub fn compile_file(path: &Path) -> Result<Arc<CompilationUnit>, CliError> {
    compile_file_with(path, true)
}

/// Compiles a source file; `clean` runs PyTorch's cleanup passes on every graph (once).
pub fn compile_file_with(path: &Path, clean: bool) -> Result<Arc<CompilationUnit>, CliError> {
    let text = read_text(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string());
    let src = Source::new(text, name, 1);
    let cu =
        ts_frontend::compile_source(&src).map_err(|e| CliError(format!("RuntimeError: {e}")))?;
    // Keep the graphs PyTorch keeps after compiling: cleaned up.
    for f in cu.functions().into_iter().filter(|_| clean) {
        if let Some(g) = f.graph() {
            let mut g = (*g).clone();
            ts_passes::run_cleanup_passes(&mut g);
            f.set_graph(g);
        }
    }
    Ok(cu)
}

/// The function `entry` names: a function of a source program, or a method of a saved
/// module's root (`forward`) or of a submodule (`encoder.layer0.forward`).
pub fn find_entry(path: &Path, entry: &str) -> Result<Arc<ts_ir::Function>, CliError> {
    find_entry_with(path, entry, true)
}

/// [`find_entry`], optionally without the cleanup passes (source programs only).
pub fn find_entry_with(
    path: &Path,
    entry: &str,
    clean: bool,
) -> Result<Arc<ts_ir::Function>, CliError> {
    if crate::model::is_archive(path) {
        let m = crate::model::load(path)?;
        let (obj, method) = crate::model::resolve_method_path(&m.module, entry)?;
        let mm = obj.class.find_method(&method).ok_or_else(|| {
            CliError(format!(
                "error: '{}' has no method '{method}'",
                obj.class.name
            ))
        })?;
        let f = ts_ir::as_function(&mm)
            .ok_or_else(|| CliError(format!("error: '{method}' is not a TorchScript method")))?;
        return m
            .cu
            .find_function(f.qualified_name())
            .ok_or_else(|| CliError(format!("error: method '{method}' is not in the unit")));
    }
    let cu = compile_file_with(path, clean)?;
    cu.find_function(entry).ok_or_else(|| {
        CliError(format!(
            "error: no function named '{entry}' in {}",
            path.display()
        ))
    })
}

/// The graph PyTorch shows as `fn.graph` for `entry` (cleanup passes run unless `raw`).
pub fn entry_graph(path: &Path, entry: &str, raw: bool) -> Result<ts_ir::Graph, CliError> {
    // Stored graphs are already cleaned up (PyTorch's passes are not idempotent: constant
    // pooling reverses the order of constants each time).
    let f = find_entry_with(path, entry, !raw)?;
    let g = f
        .graph()
        .ok_or_else(|| CliError(format!("error: function '{entry}' has no body")))?;
    Ok((*g).clone())
}
