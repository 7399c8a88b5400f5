def f(gh, gc, ig, hg, ib, hb, cx, cy):
    return torch.ops.aten._thnn_differentiable_lstm_cell_backward(gh, gc, ig, hg, ib, hb, cx, cy)
