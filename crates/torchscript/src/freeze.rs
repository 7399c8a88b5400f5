//! Freezing ([`Module::freeze`], PyTorch's `torch.jit.freeze`) and
//! [`Module::optimize_for_inference`].

use crate::error::Result;
use crate::module::Module;

/// The arguments of [`Module::freeze`], as `torch.jit.freeze` takes them.
#[derive(Clone, Debug)]
pub struct FreezeOptions {
    /// Methods and attributes to keep (`preserved_attrs`); `forward` is always kept.
    pub preserved_attrs: Vec<String>,
    /// Fold batch norms and constant arithmetic into convolutions and linears, which changes
    /// results in the last bits (`optimize_numerics`, on by default as in PyTorch).
    pub optimize_numerics: bool,
}

impl Default for FreezeOptions {
    fn default() -> FreezeOptions {
        FreezeOptions {
            preserved_attrs: Vec::new(),
            optimize_numerics: true,
        }
    }
}

impl Module {
    /// Freezes the module (it should be in eval mode): attributes and parameters that are
    /// never written become constants, calls are inlined, batch norms fold into convolutions,
    /// dropout goes. The result is a new module; `self` is unchanged. A frozen module is
    /// returned as is.
    ///
    /// ```
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny_cnn.pt");
    /// let model = torchscript::Module::load(path)?;   // saved in eval mode
    /// let frozen = model.freeze(&Default::default())?;
    /// assert!(frozen.is_frozen() && !model.is_frozen());
    /// // Parameters are constants now: `forward` reads no attribute.
    /// assert!(!frozen.method("forward")?.graph()?.contains("prim::GetAttr"));
    /// # Ok::<(), torchscript::Error>(())
    /// ```
    pub fn freeze(&self, opts: &FreezeOptions) -> Result<Module> {
        if self.is_frozen() {
            return Ok(self.clone());
        }
        let opts = ts_passes::freeze_module::FreezeOptions {
            preserved_attrs: opts.preserved_attrs.clone(),
            no_numerics: !opts.optimize_numerics,
        };
        let frozen = ts_passes::freeze_module::freeze_module(self.object(), &opts)?;
        Ok(Module::from_object(frozen))
    }

    /// `torch.jit.optimize_for_inference`: freezes the module unless it is frozen, then
    /// rewrites `forward` and `other_methods` for inference (pre-transposed linear weights).
    pub fn optimize_for_inference(&self, other_methods: &[String]) -> Result<Module> {
        let m = ts_passes::freeze_module::optimize_for_inference(self.object(), other_methods)?;
        Ok(Module::from_object(m))
    }

    /// Whether the module is frozen (it has no `training` attribute left).
    pub fn is_frozen(&self) -> bool {
        ts_passes::freeze_module::is_frozen(self.object())
    }
}
