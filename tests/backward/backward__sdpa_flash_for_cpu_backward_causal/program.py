def f(g, q, o, l):
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(g, q, q, q, o, l, 0.0, True, scale=0.3)
