# An unfused chain of 8 elementwise operators (arithmetic with scalars and tensors, and the
# transcendental activations), each producing a fresh tensor.


def chain8(x: Tensor) -> Tensor:
    y = x * 0.5
    y = y + 1.0
    y = y * x
    y = y.sigmoid()
    y = y - x
    y = y.tanh()
    y = y.exp()
    y = y.relu()
    return y


def gelu_erf(x: Tensor) -> Tensor:
    return torch.nn.functional.gelu(x)
