def f(g):
    return torch.ops.aten._upsample_bilinear2d_aa_backward(g, [2, 3], [1, 2, 5, 7], False)
