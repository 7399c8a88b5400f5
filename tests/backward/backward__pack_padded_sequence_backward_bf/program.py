def f(g, b):
    return torch.ops.aten._pack_padded_sequence_backward(g, [2, 3, 2], b, True)
