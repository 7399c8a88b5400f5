def f(gw, v, g, n):
    return torch.ops.aten._weight_norm_interface_backward(gw, v, g, n, 0)
