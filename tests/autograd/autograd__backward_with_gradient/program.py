def f(x, go):
    x = x.detach().requires_grad_(True)
    y = x * x.exp()
    y.backward(go)
    return x.grad
