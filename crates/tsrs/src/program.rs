//! Commands on TorchScript source programs: `graph`.

use std::path::Path;
use std::sync::Arc;

use ts_core::Source;
use ts_ir::CompilationUnit;

use crate::cli::{read_text, CliError};

/// Compiles a source file into a unit.
pub fn compile_file(path: &Path) -> Result<Arc<CompilationUnit>, CliError> {
    let text = read_text(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string());
    let src = Source::new(text, name, 1);
    ts_frontend::compile_source(&src).map_err(|e| CliError(format!("RuntimeError: {e}")))
}

/// `tsrs graph PROGRAM --entry NAME`.
pub fn graph(path: &Path, entry: &str, code: bool, raw: bool) -> Result<(), CliError> {
    let cu = compile_file(path)?;
    let f = cu.find_function(entry).ok_or_else(|| {
        CliError(format!(
            "error: no function named '{entry}' in {}",
            path.display()
        ))
    })?;
    let g = f
        .graph()
        .ok_or_else(|| CliError(format!("error: function '{entry}' has no body")))?;
    let mut g = (*g).clone();
    if !raw {
        ts_passes::run_cleanup_passes(&mut g);
    }
    if code {
        let c = ts_runtime::Code::new(&g, entry).map_err(|e| CliError(format!("error: {e}")))?;
        print!("{c}");
    } else {
        print!("{g}");
    }
    Ok(())
}
