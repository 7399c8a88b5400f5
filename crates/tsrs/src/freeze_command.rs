//! `tsrs freeze IN.pt OUT.pt`: `torch.jit.freeze` of a saved module (parameters and attributes
//! that are never written become constants, calls are inlined, batch norms and constant
//! arithmetic fold into convolutions and linears, dropout goes), optionally followed by
//! `torch.jit.optimize_for_inference`'s rewrites (`--optimize-for-inference`); the result is
//! saved as an archive PyTorch loads.

use std::path::Path;

use torchscript::FreezeOptions;

use crate::cli::CliError;

/// What `tsrs freeze` was asked.
pub struct FreezeRequest<'a> {
    pub input: &'a Path,
    pub output: &'a Path,
    pub preserve: &'a [String],
    pub optimize_for_inference: bool,
    pub no_numerics: bool,
}

/// `tsrs freeze`.
pub fn freeze(req: FreezeRequest<'_>) -> Result<(), CliError> {
    if !crate::program::is_archive(req.input) {
        return Err(CliError(format!(
            "error: {} is not a saved module (.pt): only modules can be frozen",
            req.input.display()
        )));
    }
    let m = crate::program::load_module(req.input)?;
    let frozen = m.freeze(&FreezeOptions {
        preserved_attrs: req.preserve.to_vec(),
        optimize_numerics: !req.no_numerics,
    })?;
    let out = if req.optimize_for_inference {
        frozen.optimize_for_inference(req.preserve)?
    } else {
        frozen
    };
    Ok(out.save(req.output)?)
}
