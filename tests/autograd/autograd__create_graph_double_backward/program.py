def f(x):
    x = x.detach().requires_grad_(True)
    y = (x ** 3 * x.tanh()).sum()
    g = torch.autograd.grad([y], [x], create_graph=True)[0]
    assert g is not None
    gg = torch.autograd.grad([(g * g).sum()], [x])[0]
    return g.detach(), gg
