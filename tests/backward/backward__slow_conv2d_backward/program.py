def f(g, x, w):
    return torch.ops.aten._slow_conv2d_backward(g, x, w, [3, 3], [1, 1], [1, 0], [True, True, True])
