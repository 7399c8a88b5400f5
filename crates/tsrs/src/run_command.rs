//! `tsrs run PROGRAM --entry NAME --inputs IN.pt --output OUT.pt`: the conformance contract;
//! inputs and outputs may also be NumPy or safetensors files, inputs random tensors.

use std::path::Path;

use ts_core::IValue;

use crate::cli::CliError;
use crate::program::compile_file;

/// Reads positional arguments: a `torch.save(tuple_of_args)` file, or (by extension) `.npy`,
/// `.npz` and `.safetensors` tensors.
pub fn read_inputs(path: &Path) -> Result<Vec<IValue>, CliError> {
    let v = torchscript::data_files::read_inputs(path)
        .map_err(|e| CliError(format!("error: cannot load inputs {}: {e}", path.display())))?;
    Ok(v.into_iter().map(torchscript::IValue::into_core).collect())
}

/// Standard-normal float32 tensors of the shapes given as `1x3x224x224`, seeded `seed`,
/// `seed + 1`, ...
pub fn random_inputs(shapes: &[String], seed: u64) -> Result<Vec<IValue>, CliError> {
    shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let shape = torchscript::data_files::parse_shape(s)
                .map_err(|e| CliError(format!("error: --random: {e}")))?;
            let t = torchscript::Tensor::randn(&shape, seed.wrapping_add(i as u64))
                .map_err(|e| CliError(format!("error: --random {s}: {e}")))?;
            Ok(torchscript::IValue::from(t).into_core())
        })
        .collect()
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

/// `tsrs run` on arguments already read.
pub fn run(
    program: &Path,
    entry: &str,
    args: Vec<IValue>,
    output: Option<&Path>,
) -> Result<(), CliError> {
    let result = if crate::model::is_archive(program) {
        crate::model::call_model(program, entry, args)?
    } else {
        call_program(program, entry, args)?
    };
    match output {
        Some(out) => {
            torchscript::data_files::write_output(out, &torchscript::IValue::from_core(result))
                .map_err(|e| CliError(format!("error: {e}")))
        }
        None => {
            crate::cli::emit(&format!("{}\n", result.to_display_string()));
            Ok(())
        }
    }
}
