"""Python functions written for `torch.jit.script`, compiled by `tsrs.script` in the tests.

`gen_script_expected.py` runs them through real `torch.jit.script` to make
`data/script_expected.json`; the tests never import torch.
"""

from __future__ import annotations

import math
from typing import List, Tuple

try:  # Only the expectation generator has torch; tsrs reads these functions' source.
    import torch
except ImportError:  # pragma: no cover
    torch = None


def scale_shift(x: torch.Tensor, a: float, b: float) -> torch.Tensor:
    return x * a + b


def clamp_norm(x: torch.Tensor, max_norm: float) -> torch.Tensor:
    n = x.norm()
    if n > max_norm:
        x = x * (max_norm / n)
    return x


def fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def softplus_sum(xs: List[torch.Tensor]) -> torch.Tensor:
    total = torch.zeros_like(xs[0])
    for x in xs:
        total = total + torch.log1p(torch.exp(x))
    return total


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def gelu_mlp(x: torch.Tensor, w: torch.Tensor) -> Tuple[torch.Tensor, int]:
    # Calls a plain Python helper: tsrs.script compiles it too.
    y = _gelu_tanh(torch.matmul(x, w))
    return y, y.size(1)


# name -> (function, input builder) for the generator and the tests.
CASES = ["scale_shift", "clamp_norm", "fib", "softplus_sum", "gelu_mlp"]
