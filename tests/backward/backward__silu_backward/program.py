def f(g, x):
    return torch.ops.aten.silu_backward(g, x)
