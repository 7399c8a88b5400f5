def f(g):
    return torch.ops.aten.affine_grid_generator_backward(g, [1, 1, 2, 3, 2], True)
