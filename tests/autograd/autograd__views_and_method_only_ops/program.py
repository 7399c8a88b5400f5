def f(x, w, m):
    x = x.detach().requires_grad_(True)
    a = x.t()[1]
    b = x.view(-1).narrow(0, 2, 3)
    c = x.expand_as(w) * w
    d = c.masked_fill(m, 0.5).view_as(w)
    e = x.unsqueeze(0).transpose(1, 2).squeeze(0).diagonal()
    z = (a * b).sum() + d.sum() + e.prod() + x.type_as(w).norm()
    return torch.autograd.grad([z], [x])
