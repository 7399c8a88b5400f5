def f(g):
    return torch.ops.aten._upsample_nearest_exact3d_backward(g, [3, 5, 4], [1, 2, 2, 3, 3])
