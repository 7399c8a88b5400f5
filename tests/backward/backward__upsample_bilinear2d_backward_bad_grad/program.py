def f(g):
    return torch.ops.aten.upsample_bilinear2d_backward(g, [4, 4], [1, 1, 2, 2], False)
