def f(g):
    return torch.ops.aten.upsample_bilinear2d_backward(g, [2, 3], [1, 2, 5, 7], False)
