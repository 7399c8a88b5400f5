def f(g):
    return torch.ops.aten._upsample_nearest_exact2d_backward(g, [5, 3], [2, 3, 3, 4])
