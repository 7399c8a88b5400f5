def f(g, m):
    return torch.ops.aten.native_dropout_backward(g, m, 2.0)
