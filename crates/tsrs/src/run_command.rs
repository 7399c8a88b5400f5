//! `tsrs run PROGRAM --entry NAME --inputs IN.pt --output OUT.pt`: the conformance contract;
//! inputs and outputs may also be NumPy or safetensors files, inputs random tensors.

use std::path::Path;

use torchscript::data_files;
use torchscript::{IValue, Tensor};

use crate::cli::CliError;
use crate::program::Program;

/// Reads positional arguments: a `torch.save(tuple_of_args)` file, or (by extension) `.npy`,
/// `.npz` and `.safetensors` tensors.
pub fn read_inputs(path: &Path) -> Result<Vec<IValue>, CliError> {
    data_files::read_inputs(path)
        .map_err(|e| CliError(format!("error: cannot load inputs {}: {e}", path.display())))
}

/// The arguments `--inputs` (when given) holds.
pub fn read_optional_inputs(path: Option<&Path>) -> Result<Vec<IValue>, CliError> {
    path.map_or_else(|| Ok(Vec::new()), read_inputs)
}

/// Standard-normal float32 tensors of the shapes given as `1x3x224x224`, seeded `seed`,
/// `seed + 1`, ...
pub fn random_inputs(shapes: &[String], seed: u64) -> Result<Vec<IValue>, CliError> {
    shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let shape = data_files::parse_shape(s)
                .map_err(|e| CliError(format!("error: --random: {e}")))?;
            let t = Tensor::randn(&shape, seed.wrapping_add(i as u64))
                .map_err(|e| CliError(format!("error: --random {s}: {e}")))?;
            Ok(IValue::from(t))
        })
        .collect()
}

/// `tsrs run` on arguments already read.
pub fn run(
    program: &Path,
    entry: &str,
    args: Vec<IValue>,
    output: Option<&Path>,
) -> Result<(), CliError> {
    let loaded = Program::open(program, true)?;
    let result = loaded.entry(entry, program)?.call(args)?;
    let written = match output {
        Some(out) => {
            data_files::write_output(out, &result).map_err(|e| CliError(format!("error: {e}")))
        }
        None => {
            crate::cli::emit(&format!("{result}\n"));
            Ok(())
        }
    };
    // The process ends next: freeing the model's graphs, code and tensors one by one (1-2 ms
    // for ResNet-18) would only delay its exit, which returns the memory at once.
    std::mem::forget(result);
    std::mem::forget(loaded);
    written
}
