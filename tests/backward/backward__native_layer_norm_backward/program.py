def f(g, x, m, r, w, b):
    return torch.ops.aten.native_layer_norm_backward(g, x, [3, 4], m, r, w, b, [True, True, True])
