def f(g, x, y):
    return torch.ops.aten.cumprod_backward(g, x, 1, y)
