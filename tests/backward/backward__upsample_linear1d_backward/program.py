def f(g):
    return torch.ops.aten.upsample_linear1d_backward(g, [7], [2, 3, 4], False)
