def f(x):
    x = x.detach().requires_grad_(True)
    with torch.no_grad():
        y = x * 2
        inner = torch.is_grad_enabled()
    z = x * 2
    return y.requires_grad, inner, z.requires_grad, torch.is_grad_enabled()
