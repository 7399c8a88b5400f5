def f(g, x):
    return torch.ops.aten.replication_pad1d_backward(g, x, [2, 1])
