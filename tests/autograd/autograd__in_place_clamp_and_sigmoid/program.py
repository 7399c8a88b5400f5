def f(x):
    x = x.detach().requires_grad_(True)
    y = x + 0
    y.clamp_(-0.5, 0.5)
    y.mul_(x)
    y.sigmoid_()
    return torch.autograd.grad([y.sum()], [x])
