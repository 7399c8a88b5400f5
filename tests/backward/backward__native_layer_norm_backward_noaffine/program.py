def f(g, x, m, r):
    return torch.ops.aten.native_layer_norm_backward(g, x, [4], m, r, None, None, [True, False, False])[0]
