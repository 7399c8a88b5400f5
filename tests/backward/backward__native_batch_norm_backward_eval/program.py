def f(g, x, w, rm, rv):
    return torch.ops.aten.native_batch_norm_backward(g, x, w, rm, rv, None, None, False, 1e-05, [True, True, True])
