def f(x):
    x = x.detach().requires_grad_(True)
    y = x * 2
    y.add_(1)
    y.mul_(x)
    y.div_(3.0)
    y.relu_()
    z = y.sin().sum()
    return torch.autograd.grad([z], [x])
