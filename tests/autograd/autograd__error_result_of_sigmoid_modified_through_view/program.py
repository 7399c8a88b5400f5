def f(x):
    x = x.detach().requires_grad_(True)
    y = torch.sigmoid(x * 2)
    y[0].zero_()
    return torch.autograd.grad([y.sum()], [x])
