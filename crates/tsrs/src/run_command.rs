//! `tsrs run PROGRAM --entry NAME --inputs IN.pt --output OUT.pt`: the conformance contract.

use std::path::Path;

use ts_core::IValue;

use crate::cli::CliError;
use crate::program::compile_file;

/// Reads the positional arguments saved with `torch.save(tuple_of_args)`.
pub fn read_inputs(path: &Path) -> Result<Vec<IValue>, CliError> {
    let v = ts_serialize::load_torch_save(path)
        .map_err(|e| CliError(format!("error: cannot load inputs {}: {e}", path.display())))?;
    match v {
        IValue::Tuple(t) => Ok(t.elements.clone()),
        IValue::List(l) => Ok(l.items.read().clone()),
        other => Ok(vec![other]),
    }
}

/// Calls `entry` of a source program on `args` and returns its result.
pub fn call_program(program: &Path, entry: &str, args: Vec<IValue>) -> Result<IValue, CliError> {
    let cu = compile_file(program)?;
    let f = cu.find_function(entry).ok_or_else(|| {
        CliError(format!(
            "error: no function named '{entry}' in {}",
            program.display()
        ))
    })?;
    let schema = f
        .try_schema()
        .ok_or_else(|| CliError(format!("error: function '{entry}' has no schema")))?;
    let args = ts_runtime::bind_arguments(&schema, args, false)
        .map_err(|e| CliError(format!("{}: {}", e.kind.name(), e.message)))?;
    ts_runtime::call_function(&f, args).map_err(|e| CliError(e.to_string()))
}

/// `tsrs run`.
pub fn run(
    program: &Path,
    entry: &str,
    inputs: Option<&Path>,
    output: Option<&Path>,
) -> Result<(), CliError> {
    let args = match inputs {
        Some(p) => read_inputs(p)?,
        None => Vec::new(),
    };
    let result = if crate::model::is_archive(program) {
        crate::model::call_model(program, entry, args)?
    } else {
        call_program(program, entry, args)?
    };
    match output {
        Some(out) => ts_serialize::save_torch_save(&result, out)
            .map_err(|e| CliError(format!("error: cannot write {}: {e}", out.display()))),
        None => {
            crate::cli::emit(&format!("{}\n", result.to_display_string()));
            Ok(())
        }
    }
}
