//! `torch.no_grad()` in TorchScript: a class `__torch__.torch.autograd.grad_mode.no_grad`
//! compiled from source into the unit on first use, as PyTorch scripts Python's class
//! (`__enter__` saves `torch.is_grad_enabled()` and turns gradients off, `__exit__` restores),
//! so `with torch.no_grad():` becomes `prim::Enter`/`prim::Exit` around the body and saved
//! archives name the same class. PyTorch's TorchScript accepts only this grad-mode context;
//! `enable_grad` and `set_grad_enabled` stay builtins and fail as they do there.

use std::sync::Arc;

use ts_core::Source;

use super::{classes, CompileCtx};
use crate::ast::StmtKind;
use crate::error::CResult;
use crate::parser::parse_program;

/// Qualified name of the class.
pub const NO_GRAD: &str = "__torch__.torch.autograd.grad_mode.no_grad";

const NO_GRAD_SOURCE: &str = "\
class no_grad:
    prev : bool
    def __init__(self) -> None:
        self.prev = False
    def __enter__(self) -> None:
        self.prev = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        torch.set_grad_enabled(self.prev)
";

/// Declares and defines the `no_grad` class in the unit unless it is there already (an
/// archive's own `code/` may define it).
pub fn ensure_no_grad(ctx: &mut CompileCtx) -> CResult<()> {
    if ctx.cu.find_type(NO_GRAD).is_some() {
        return ctx.ensure_class(NO_GRAD);
    }
    let src: Arc<Source> = Source::new(
        NO_GRAD_SOURCE,
        Some("torch/autograd/grad_mode.py".to_string()),
        1,
    );
    let program = parse_program(&src)?;
    let saved = std::mem::replace(
        &mut ctx.prefix,
        "__torch__.torch.autograd.grad_mode".to_string(),
    );
    let mut result = Ok(());
    for stmt in program {
        if let StmtKind::Class(cd) = stmt.kind {
            result = classes::declare_class(ctx, cd);
        }
    }
    ctx.prefix = saved;
    result?;
    ctx.ensure_class(NO_GRAD)
}
