def f(g, x, t):
    return torch.ops.aten.smooth_l1_loss_backward(g, x, t, 0, 0.5)
