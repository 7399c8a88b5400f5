def f(g, w, i, off, o2b):
    return torch.ops.aten._embedding_bag_per_sample_weights_backward(g, w, i, off, o2b, 0, 2)
