def f(g, x, t):
    return torch.ops.aten.multi_margin_loss_backward(g, x, t, 1, 1.0, None, 1)
