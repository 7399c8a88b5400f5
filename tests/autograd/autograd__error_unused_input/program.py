def f(x, u):
    x = x.detach().requires_grad_(True)
    u = u.detach().requires_grad_(True)
    return torch.autograd.grad([(x * 2).sum()], [x, u])
