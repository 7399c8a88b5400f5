"""Modules to write models against ``tsrs.Tensor`` and trace them (a small ``torch.nn``)."""

import math

from .. import _tsrs
from . import functional

__all__ = ["Module", "Linear", "ReLU", "Tanh", "Sigmoid", "Sequential", "functional"]


class Module:
    """A model: tensors assigned as attributes are parameters (``register_buffer`` for
    buffers), modules assigned as attributes are submodules; calling it runs ``forward``."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("call Module.__init__() before assigning attributes")
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        if isinstance(value, _tsrs.Tensor):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for d in ("_parameters", "_buffers", "_modules"):
            table = self.__dict__.get(d, {})
            if name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def register_buffer(self, name, tensor):
        """Adds a tensor that is saved with the module but is not a parameter."""
        self._parameters.pop(name, None)
        self._buffers[name] = tensor

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix=""):
        """(dotted name, tensor) of this module's and its submodules' parameters."""
        out = [(prefix + n, p) for n, p in self._parameters.items()]
        for n, m in self._modules.items():
            out.extend(m.named_parameters(prefix + n + "."))
        return out

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def named_children(self):
        return list(self._modules.items())

    def children(self):
        return list(self._modules.values())


class Linear(Module):
    """``y = x @ weight.T + bias``, initialized as ``torch.nn.Linear`` is (uniform in
    ``±1/sqrt(in_features)``)."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        k = 1.0 / math.sqrt(in_features)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = _tsrs._call_op("rand", [out_features, in_features]) * (2 * k) - k
        self.bias = _tsrs._call_op("rand", [out_features]) * (2 * k) - k if bias else None

    def forward(self, x):
        return functional.linear(x, self.weight, self.bias)


class ReLU(Module):
    def forward(self, x):
        return functional.relu(x)


class Tanh(Module):
    def forward(self, x):
        return functional.tanh(x)


class Sigmoid(Module):
    def forward(self, x):
        return functional.sigmoid(x)


class Sequential(Module):
    """Runs its submodules (named ``0``, ``1``, ...) in order."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x
