//! `tsrs freeze IN.pt OUT.pt`: `torch.jit.freeze` of a saved module (parameters and attributes
//! that are never written become constants, calls are inlined, batch norms and constant
//! arithmetic fold into convolutions and linears, dropout goes), optionally followed by
//! `torch.jit.optimize_for_inference`'s rewrites (`--optimize-for-inference`); the result is
//! saved as an archive PyTorch loads.

use std::path::Path;

use ts_passes::freeze_module::{freeze_module, optimize_for_inference, FreezeOptions};

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
    if !crate::model::is_archive(req.input) {
        return Err(CliError(format!(
            "error: {} is not a saved module (.pt): only modules can be frozen",
            req.input.display()
        )));
    }
    let m = crate::model::load(req.input)?;
    let opts = FreezeOptions {
        preserved_attrs: req.preserve.to_vec(),
        no_numerics: req.no_numerics,
    };
    let frozen = if ts_passes::freeze_module::is_frozen(&m.module) {
        m.module.clone()
    } else {
        freeze_module(&m.module, &opts)
            .map_err(|e| CliError(format!("{}: {}", e.kind.name(), e.message)))?
    };
    let frozen = if req.optimize_for_inference {
        optimize_for_inference(&frozen, req.preserve)
            .map_err(|e| CliError(format!("{}: {}", e.kind.name(), e.message)))?
    } else {
        frozen
    };
    ts_serialize::save_script_module(&frozen, req.output)
        .map_err(|e| CliError(format!("error: cannot save {}: {e}", req.output.display())))
}
