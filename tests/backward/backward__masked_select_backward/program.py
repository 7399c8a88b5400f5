def f(g, x, m):
    return torch.ops.aten.masked_select_backward(g, x, m)
