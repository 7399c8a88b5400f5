def f(x):
    x = x.detach().requires_grad_(True)
    y = x * 2
    r1 = y.requires_grad
    y.detach_()
    w = x.detach()
    return r1, y.requires_grad, y.is_leaf, w.requires_grad, (x * 2).requires_grad
