"""TorchScript without libtorch: ``torch.jit``'s API (load, save, script, compile, trace) on
torchscript-rs.

>>> import tsrs
>>> m = tsrs.load("model.pt")          # a torch.jit.save archive
>>> y = m(tsrs.randn(1, 3, 224, 224))  # runs forward
>>> f = tsrs.script(my_function)       # compiles a Python function's source
>>> traced = tsrs.trace(mlp, (x,))     # records the operators run on tsrs.Tensor inputs
>>> tsrs.save(traced, "mlp.pt")        # torch.jit.load reads it

Operators are also functions of the package (``tsrs.relu(x)``, ``tsrs.cat([a, b])``) and
methods of tensors (``x.view(2, 3)``); all of them dispatch to the operator library and are
recorded while tracing.
"""

import builtins as _builtins

from . import _tsrs
from ._tsrs import (
    CompilationUnit,
    ScriptFunction,
    ScriptMethod,
    ScriptModule,
    ScriptObject,
    Tensor,
    compile,
    dtype,
    freeze,
    from_dlpack,
    from_numpy,
    is_tracing,
    load,
    manual_seed,
    optimize_for_inference,
    save,
    set_num_threads,
    tensor,
)
from ._tsrs import (  # noqa: F401  (dtypes, as torch.float32 ...)
    bfloat16,
    bool,
    double,
    float,
    float16,
    float32,
    float64,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    short,
    uint8,
)
from ._script import script
from ._trace import TracerWarning, trace
from . import autograd, nn
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = [
    "CompilationUnit",
    "ScriptFunction",
    "ScriptMethod",
    "ScriptModule",
    "ScriptObject",
    "Tensor",
    "TracerWarning",
    "compile",
    "autograd",
    "dtype",
    "enable_grad",
    "freeze",
    "from_dlpack",
    "from_numpy",
    "is_grad_enabled",
    "is_tracing",
    "load",
    "manual_seed",
    "optimize_for_inference",
    "nn",
    "no_grad",
    "save",
    "script",
    "set_grad_enabled",
    "set_num_threads",
    "tensor",
    "trace",
]

# Factory operators whose first argument is a size list: `tsrs.zeros(2, 3)` as in PyTorch.
_SIZE_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn"})


def _op(name):
    """The operator ``aten::name`` as a Python function."""

    def call(*args, **kwargs):
        if name in _SIZE_FACTORIES and args and all(type(a) is _builtins.int for a in args):
            args = (list(args),)
        return _tsrs._call_op(name, *args, **kwargs)

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = f"The operator aten::{name}."
    return call


def __getattr__(name):
    if not name.startswith("_") and _tsrs._has_op(name):
        return _op(name)
    raise AttributeError(f"module 'tsrs' has no attribute '{name}' (no operator aten::{name})")
