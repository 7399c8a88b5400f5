def f(x, w):
    x = x.detach().requires_grad_(True)
    for i in range(3):
        y = (x * w * float(i + 1)).sum()
        y.backward()
    return x.grad
