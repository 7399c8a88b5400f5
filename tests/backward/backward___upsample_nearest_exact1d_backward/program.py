def f(g):
    return torch.ops.aten._upsample_nearest_exact1d_backward(g, [7], [2, 3, 4])
