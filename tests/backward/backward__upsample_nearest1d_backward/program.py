def f(g):
    return torch.ops.aten.upsample_nearest1d_backward(g, [7], [2, 3, 4])
