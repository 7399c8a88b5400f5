def f(x):
    x = x.detach().requires_grad_(True)
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    z.backward()
    return x.grad, y.grad, y.is_leaf, x.is_leaf
