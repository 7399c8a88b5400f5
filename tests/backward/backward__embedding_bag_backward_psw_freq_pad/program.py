def f(g, i, off, o2b, bs, mx, p):
    return torch.ops.aten._embedding_bag_backward(g, i, off, o2b, bs, mx, 6, True, 0, False, p, 2)
