def f(g, x, t):
    return torch.ops.aten.mse_loss_backward(g, x, t, 0)
