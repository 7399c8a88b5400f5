def f(g, x):
    return torch.ops.aten.replication_pad2d_backward(g, x, [2, 1, 1, 2])
