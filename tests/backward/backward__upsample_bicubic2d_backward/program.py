def f(g):
    return torch.ops.aten.upsample_bicubic2d_backward(g, [5, 7], [2, 3, 3, 4], False)
