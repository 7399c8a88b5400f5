def f(g):
    return torch.ops.aten.affine_grid_generator_backward(g, [2, 3, 4, 5], False)
