def f(gh, ig, hg, hx, ib, hb):
    return torch.ops.aten._thnn_differentiable_gru_cell_backward(gh, ig, hg, hx, ib, hb)
