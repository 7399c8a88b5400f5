def f(g, x):
    return torch.ops.aten.hardswish_backward(g, x)
