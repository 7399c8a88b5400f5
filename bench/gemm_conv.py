# Kernel cases: a single float32 matrix product and a 3x3 convolution (64 -> 64 channels).
def sgemm(a: Tensor, b: Tensor) -> Tensor:
    return torch.mm(a, b)


def conv3x3(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    return torch.conv2d(x, w, b, [1, 1], [1, 1])
