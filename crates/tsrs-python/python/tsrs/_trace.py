"""``tsrs.trace``: runs a function or ``tsrs.nn.Module`` once on example tensors and records
the operators it calls into the ``forward`` of a new ``ScriptModule``."""

import inspect
import warnings

from . import _tsrs


class TracerWarning(Warning):
    """The trace baked in a value that depends on the example inputs' data."""


def _module_spec(module, class_names):
    """`(class_name, parameters, buffers, submodules)` of a `tsrs.nn.Module`, with class
    names made unique per archive as PyTorch mangles them."""
    base = type(module).__name__
    n = class_names.get(base, 0)
    class_names[base] = n + 1
    name = f"__torch__.{base}" if n == 0 else f"__torch__.___torch_mangle_{n}.{base}"
    return (
        name,
        list(module._parameters.items()),
        list(module._buffers.items()),
        [(k, _module_spec(m, class_names)) for k, m in module._modules.items()],
    )


def trace(func, example_inputs, *, dynamic_sizes=False):
    """Traces ``func(*example_inputs)``.

    ``func`` is a function or a ``tsrs.nn.Module`` (whose parameters and buffers become the
    traced module's). Inputs are ``tsrs.Tensor`` objects (NumPy arrays are converted). With
    ``dynamic_sizes=True``, ``x.size(d)`` is recorded as ``aten::size`` instead of a constant.
    Data-dependent values the trace bakes in are reported as ``TracerWarning``s.
    """
    from .nn import Module

    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    inputs = [
        x if isinstance(x, _tsrs.Tensor) else _tsrs.from_numpy(x) for x in example_inputs
    ]
    if isinstance(func, Module):
        spec = _module_spec(func, {})
        fn = func.forward
    elif callable(func):
        spec = (f"__torch__.{getattr(func, '__name__', 'TracedFunction')}", [], [], [])
        fn = func
    else:
        raise TypeError(f"tsrs.trace takes a function or a tsrs.nn.Module, not {type(func).__name__}")
    try:
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    names = [params[i] if i < len(params) else f"input_{i}" for i in range(len(inputs))]
    module, notes = _tsrs._trace(fn, inputs, names, spec, dynamic_sizes)
    for note in notes:
        warnings.warn(note, TracerWarning, stacklevel=2)
    return module
