def f(g, y):
    return torch.ops.aten.elu_backward(g, 1.5, 1.2, 0.8, True, y)
