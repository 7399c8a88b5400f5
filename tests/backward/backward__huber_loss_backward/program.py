def f(g, x, t):
    return torch.ops.aten.huber_loss_backward(g, x, t, 1, 0.7)
