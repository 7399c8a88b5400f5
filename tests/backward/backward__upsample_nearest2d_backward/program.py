def f(g):
    return torch.ops.aten.upsample_nearest2d_backward(g, [5, 7], [2, 3, 3, 4])
