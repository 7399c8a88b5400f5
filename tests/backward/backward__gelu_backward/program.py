def f(g, x):
    return torch.ops.aten.gelu_backward(g, x)
