//! `aten::save(item, filename)` (`torch.save` in scripted code): writes `item` as a file
//! `torch.load` reads. The pickling lives in ts-serialize, above this crate, so the writer is
//! a hook the embedding layer installs (the `torchscript` crate does, before the first load
//! or compile); without one the operator reports that saving is unavailable.

use std::sync::OnceLock;

use ts_core::IValue;
use ts_tensor::Error;

use crate::registry::{op, Registry};
use crate::schema_table::schema_line;
use crate::stack::{pop, pop_str};

/// Writes a value to a path in `torch.save`'s format.
pub type SaveHook = fn(&IValue, &str) -> Result<(), Error>;

static HOOK: OnceLock<SaveHook> = OnceLock::new();

/// Installs the writer `aten::save` uses (the first installation wins).
pub fn install(hook: SaveHook) {
    let _ = HOOK.set(hook);
}

/// Registers `aten::save`.
pub fn register(r: &Registry) {
    if let Some(line) = schema_line("aten::save") {
        let _ = r.register(
            line,
            op(|s| {
                let filename = pop_str(s)?;
                let item = pop(s)?;
                let Some(hook) = HOOK.get() else {
                    return Err(Error::runtime(
                        "aten::save: no torch.save writer is installed (embed through the torchscript crate, which installs ts-serialize's)",
                    ));
                };
                hook(&item, &filename)
            }),
        );
    }
}
