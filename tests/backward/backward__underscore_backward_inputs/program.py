def f(x, w):
    x = x.detach().requires_grad_(True)
    w = w.detach().requires_grad_(True)
    y = (x * w).sum()
    torch.ops.aten._backward(y, [x], None, None, False)
    return x.grad, w.grad is None
