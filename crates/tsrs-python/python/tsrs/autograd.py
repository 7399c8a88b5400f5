"""Gradients, as ``torch.autograd``: grad-mode context managers (also usable as decorators)
and ``grad``/``backward`` running torchscript-rs's autograd engine."""

import functools as _functools

from . import _tsrs

__all__ = ["enable_grad", "grad", "backward", "is_grad_enabled", "no_grad", "set_grad_enabled"]

is_grad_enabled = _tsrs.is_grad_enabled


class set_grad_enabled:
    """Sets grad mode on this thread; as a context manager, restores the previous mode on exit."""

    def __init__(self, mode):
        self._prev = _tsrs.is_grad_enabled()
        self._mode = bool(mode)
        _tsrs._set_grad_enabled(self._mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _tsrs._set_grad_enabled(self._prev)
        return False


class _GradMode:
    """A context manager and decorator that runs its body with grad mode ``_MODE``."""

    _MODE = True

    def __enter__(self):
        self._prev = _tsrs.is_grad_enabled()
        _tsrs._set_grad_enabled(self._MODE)
        return None

    def __exit__(self, *exc):
        _tsrs._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Runs its body without recording autograd history (``torch.no_grad``)."""

    _MODE = False


class enable_grad(_GradMode):
    """Runs its body with autograd recording on (``torch.enable_grad``)."""

    _MODE = True


def _tensors(x):
    return [x] if isinstance(x, _tsrs.Tensor) else list(x)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """The gradients of ``outputs`` with respect to ``inputs`` (``torch.autograd.grad``)."""
    outputs, inputs = _tensors(outputs), _tensors(inputs)
    if grad_outputs is not None:
        grad_outputs = _tensors(grad_outputs)
    return tuple(_tsrs._call_op("aten::grad", outputs, inputs, grad_outputs, retain_graph,
                                create_graph, allow_unused))


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    """Accumulates gradients of ``tensors`` into the leaves' ``.grad``
    (``torch.autograd.backward``)."""
    tensors = _tensors(tensors)
    grads = [None] * len(tensors) if grad_tensors is None else _tensors(grad_tensors)
    for t, g in zip(tensors, grads):
        t.backward(g, retain_graph, create_graph)
