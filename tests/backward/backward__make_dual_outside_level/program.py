def f(x, t):
    return torch.ops.aten._make_dual(x, t, 0)
