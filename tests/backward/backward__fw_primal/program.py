def f(x):
    return torch.ops.aten._fw_primal(x, 0)
