def f(g, x, n):
    return torch.ops.aten.rrelu_with_noise_backward(g, x, n, 0.1, 0.3, True, False)
