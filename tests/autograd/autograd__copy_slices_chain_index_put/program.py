def f(x, v, w):
    x = x.detach().requires_grad_(True)
    v = v.detach().requires_grad_(True)
    y = x * x
    r = y.t()[1]
    r.index_put_([torch.tensor([2, 0])], v * 2.0)
    r.masked_fill_(r > 0.5, 0.25)
    return torch.autograd.grad([(y * w).sum()], [x, v])
