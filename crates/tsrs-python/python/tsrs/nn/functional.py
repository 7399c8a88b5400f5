"""``tsrs.nn.functional``: ``torch.nn.functional``'s functions as operator calls
(``F.relu(x)`` runs ``aten::relu``), recorded while tracing."""

from .. import _tsrs

# Functions whose operator has another name, or whose keyword differs from the schema's.
_RENAMED = {"dropout": ("dropout", {"training": "train"})}


def _fn(name):
    op, kwmap = _RENAMED.get(name, (name, {}))

    def call(*args, **kwargs):
        kwargs = {kwmap.get(k, k): v for k, v in kwargs.items()}
        return _tsrs._call_op(op, *args, **kwargs)

    call.__name__ = name
    call.__doc__ = f"torch.nn.functional.{name} (the operator aten::{op})."
    return call


def __getattr__(name):
    if not name.startswith("_") and _tsrs._has_op(_RENAMED.get(name, (name,))[0]):
        return _fn(name)
    raise AttributeError(
        f"module 'tsrs.nn.functional' has no attribute '{name}' (no operator aten::{name})"
    )
