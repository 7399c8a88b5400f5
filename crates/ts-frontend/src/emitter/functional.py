# TorchScript source of `torch.nn.functional` as torchscript-rs provides it (written for this
# project). Signatures follow torch 2.15's `torch.nn.functional` so that calls (positional and
# keyword) match PyTorch's; bodies call the same aten operators.
#
# A name defined more than once is an overload set (like PyTorch's `@_overload` functions):
# calls pick the first definition whose signature matches. Overloads are compiled in their own
# namespace, so they reach the helpers by qualified name.

def _reduction_enum(reduction: str) -> int:
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(reduction + " is not a valid value for reduction")

def _legacy_reduction(size_average: Optional[bool], reduce: Optional[bool]) -> str:
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' (or 'sum', 'none') instead.")
    avg = True
    red = True
    if size_average is not None:
        avg = size_average
    if reduce is not None:
        red = reduce
    if avg and red:
        ret = "mean"
    elif red:
        ret = "sum"
    else:
        ret = "none"
    return ret

def _reduction_of(size_average: Optional[bool], reduce: Optional[bool], reduction: str) -> int:
    if size_average is not None or reduce is not None:
        return _reduction_enum(_legacy_reduction(size_average, reduce))
    return _reduction_enum(reduction)

def _list_with_default(out_size: List[int], defaults: List[int]) -> List[int]:
    # As TorchScript compiles PyTorch's helper: sizes are ints (no None to fill), the input's
    # rank must exceed the output size's length.
    assert len(defaults) > len(out_size)
    return out_size

def _expand_size(size: Optional[int], dim: int) -> Optional[List[int]]:
    if size is None:
        return None
    ret = [size for _ in range(dim)]
    return ret

def _expand_scale(scale: Optional[float], dim: int) -> Optional[List[float]]:
    if scale is None:
        return None
    ret = [scale for _ in range(dim)]
    return ret

def _verify_batch_size(size: List[int]) -> None:
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size {}".format(size))

def _verify_spatial_size(size: List[int]) -> None:
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size {}".format(size))

def _check_size_match(name: str, input: Tensor, target: Tensor) -> None:
    if not (target.size() == input.size()):
        warnings.warn("{}: the target size ({}) differs from the input size ({}); broadcasting them is probably not intended".format(name, target.size(), input.size()))

# ---------------------------------------------------------------------------------------------
# Activations

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.relu_(input)
    else:
        result = torch.relu(input)
    return result

def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.relu6_(input)
    else:
        result = torch.relu6(input)
    return result

def silu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.silu_(input)
    return torch.silu(input)

def mish(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.mish_(input)
    return torch.mish(input)

def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.hardswish_(input)
    return torch.hardswish(input)

def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.hardsigmoid_(input)
    return torch.hardsigmoid(input)

def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.elu_(input, alpha)
    else:
        result = torch.elu(input, alpha)
    return result

def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.celu_(input, alpha)
    else:
        result = torch.celu(input, alpha)
    return result

def selu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.selu_(input)
    else:
        result = torch.selu(input)
    return result

def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.leaky_relu_(input, negative_slope)
    else:
        result = torch.leaky_relu(input, negative_slope)
    return result

def rrelu(input: Tensor, lower: float = 0.125, upper: float = 0.3333333333333333, training: bool = False, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.rrelu_(input, lower, upper, training)
    else:
        result = torch.rrelu(input, lower, upper, training)
    return result

def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.hardtanh_(input, min_val, max_val)
    else:
        result = torch.hardtanh(input, min_val, max_val)
    return result

def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.threshold_(input, threshold, value)
    else:
        result = torch.threshold(input, threshold, value)
    return result

def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return torch.glu(input, dim)

def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()

def tanh(input: Tensor) -> Tensor:
    return input.tanh()

def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)

def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()

def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn("Implicit dimension choice for {} has been deprecated. Change the call to include dim=X as an argument.".format(name))
    if ndim == 0 or ndim == 1 or ndim == 3:
        ret = 0
    else:
        ret = 1
    return ret

def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is None:
        ret = input.softmax(dim)
    else:
        ret = input.softmax(dim, dtype=dtype)
    return ret

def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is None:
        ret = (-input).softmax(dim)
    else:
        ret = (-input).softmax(dim, dtype=dtype)
    return ret

def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is None:
        ret = input.log_softmax(dim)
    else:
        ret = input.log_softmax(dim, dtype=dtype)
    return ret

def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    gumbels = -torch.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = torch.zeros_like(logits).scatter_(dim, index, 1.0)
        ret = y_hard - y_soft.detach() + y_soft
    else:
        ret = y_soft
    return ret

# ---------------------------------------------------------------------------------------------
# Dropout

def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))

def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    if inplace:
        result = torch.dropout_(input, p, training)
    else:
        result = torch.dropout(input, p, training)
    return result

def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    _check_p(p)
    if inplace:
        result = torch.alpha_dropout_(input, p, training)
    else:
        result = torch.alpha_dropout(input, p, training)
    return result

def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    _check_p(p)
    if inplace:
        result = torch.feature_alpha_dropout_(input, p, training)
    else:
        result = torch.feature_alpha_dropout(input, p, training)
    return result

def _feature_dropout_unbatched(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    if not batched:
        if inplace:
            input = input.unsqueeze_(0)
        else:
            input = input.unsqueeze(0)
    if inplace:
        result = torch.feature_dropout_(input, p, training)
    else:
        result = torch.feature_dropout(input, p, training)
    if not batched:
        if inplace:
            result = result.squeeze_(0)
        else:
            result = result.squeeze(0)
    return result

def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim != 2 and inp_dim != 3:
        raise RuntimeError("dropout1d: Expected 2D or 3D input, but received a {}D input. dropout1d drops whole channels of inputs with one spatial dimension, a channel dimension and an optional batch dimension.".format(inp_dim))
    return _feature_dropout_unbatched(input, p, training, inplace, inp_dim == 3)

def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim != 3 and inp_dim != 4:
        warnings.warn("dropout2d: a {}-D input is deprecated; dropout2d expects 3-D or 4-D inputs (use dropout for others).".format(inp_dim))
    if inp_dim == 3:
        warnings.warn("dropout2d: a 3-D input is treated as (N, C, L) and gets channel-wise 1-D dropout; use dropout1d for that.")
    if inplace:
        result = torch.feature_dropout_(input, p, training)
    else:
        result = torch.feature_dropout(input, p, training)
    return result

def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim != 4 and inp_dim != 5:
        warnings.warn("dropout3d: a {}-D input is deprecated; dropout3d expects 4-D or 5-D inputs (use dropout for others).".format(inp_dim))
    return _feature_dropout_unbatched(input, p, training, inplace, inp_dim == 5)

# ---------------------------------------------------------------------------------------------
# Normalization

def layer_norm(input: Tensor, normalized_shape: List[int], weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, eps: float = 1e-05) -> Tensor:
    return torch.layer_norm(input, normalized_shape, weight, bias, eps, True)

def rms_norm(input: Tensor, normalized_shape: List[int], weight: Optional[Tensor] = None, eps: Optional[float] = None) -> Tensor:
    return torch.rms_norm(input, normalized_shape, weight, eps)

def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, eps: float = 1e-05) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received {}".format(input.dim()))
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return torch.group_norm(input, num_groups, weight, bias, eps, True)

def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor], weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    if training:
        _verify_batch_size(input.size())
    return torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)

def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    if use_input_stats:
        _verify_spatial_size(input.size())
    return torch.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, True)

def local_response_norm(input: Tensor, size: int, alpha: float = 0.0001, beta: float = 0.75, k: float = 1.0) -> Tensor:
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got {} dimensions)".format(dim))
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = torch._C._nn.pad(div, [0, 0, size // 2, (size - 1) // 2], "constant", None)
        div = torch.avg_pool2d(div, [size, 1], [1, 1]).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = torch._C._nn.pad(div, [0, 0, 0, 0, size // 2, (size - 1) // 2], "constant", None)
        div = torch._C._nn.avg_pool3d(div, [size, 1, 1], [1, 1, 1]).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div

def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Optional[Tensor] = None) -> Tensor:
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return torch.div(input, denom, out=out)

# ---------------------------------------------------------------------------------------------
# Embeddings

def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        # PyTorch calls `aten::_no_grad_embedding_renorm_` here, whose schema marks no mutation:
        # TorchScript's dead code elimination drops it, so scripted code never renormalizes.
        input = input.contiguous()
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)

def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None, max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False, per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False, padding_idx: Optional[int] = None) -> Tensor:
    if weight.dtype == torch.long and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.")
        swapped = weight
        weight = input
        input = swapped
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError("embedding_bag: If per_sample_weights ({}) is not None, then it must have the same shape as the input ({})".format(per_sample_weights.size(), input.size()))
    if not weight.dim() == 2:
        raise ValueError("weight has to be a 2D Tensor, but got Tensor of dimension {}".format(weight.dim()))
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences.")
        bag_offsets = torch.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        bag_offsets = offsets
        if bag_offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension {}".format(input.dim()))
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    # (No renormalization for `max_norm`: as in `embedding`, TorchScript drops it.)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='{}'). Please open a feature request on GitHub.".format(mode))
    ret, _, _, _ = torch.embedding_bag(weight, input, bag_offsets, scale_grad_by_freq, mode_enum, sparse, per_sample_weights, include_last_offset, padding_idx)
    return ret

# ---------------------------------------------------------------------------------------------
# Pooling

def _max_pool1d(input: Tensor, kernel_size: BroadcastingList1[int], stride: Optional[BroadcastingList1[int]] = None, padding: BroadcastingList1[int] = 0, dilation: BroadcastingList1[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)

def max_pool1d_with_indices(input: Tensor, kernel_size: BroadcastingList1[int], stride: Optional[BroadcastingList1[int]] = None, padding: BroadcastingList1[int] = 0, dilation: BroadcastingList1[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)

def _max_pool2d(input: Tensor, kernel_size: BroadcastingList2[int], stride: Optional[BroadcastingList2[int]] = None, padding: BroadcastingList2[int] = 0, dilation: BroadcastingList2[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)

def max_pool2d_with_indices(input: Tensor, kernel_size: BroadcastingList2[int], stride: Optional[BroadcastingList2[int]] = None, padding: BroadcastingList2[int] = 0, dilation: BroadcastingList2[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch._C._nn.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)

def _max_pool3d(input: Tensor, kernel_size: BroadcastingList3[int], stride: Optional[BroadcastingList3[int]] = None, padding: BroadcastingList3[int] = 0, dilation: BroadcastingList3[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)

def max_pool3d_with_indices(input: Tensor, kernel_size: BroadcastingList3[int], stride: Optional[BroadcastingList3[int]] = None, padding: BroadcastingList3[int] = 0, dilation: BroadcastingList3[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch._C._nn.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)

def adaptive_max_pool1d_with_indices(input: Tensor, output_size: BroadcastingList1[int], return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    return torch.adaptive_max_pool1d(input, output_size)

def _adaptive_max_pool1d(input: Tensor, output_size: BroadcastingList1[int], return_indices: bool = False) -> Tensor:
    return adaptive_max_pool1d_with_indices(input, output_size)[0]

def adaptive_max_pool2d_with_indices(input: Tensor, output_size: BroadcastingList2[int], return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    output_size = _list_with_default(output_size, input.size())
    return torch._C._nn.adaptive_max_pool2d(input, output_size)

def _adaptive_max_pool2d(input: Tensor, output_size: BroadcastingList2[int], return_indices: bool = False) -> Tensor:
    return adaptive_max_pool2d_with_indices(input, output_size)[0]

def adaptive_max_pool3d_with_indices(input: Tensor, output_size: BroadcastingList3[int], return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    output_size = _list_with_default(output_size, input.size())
    return torch._C._nn.adaptive_max_pool3d(input, output_size)

def _adaptive_max_pool3d(input: Tensor, output_size: BroadcastingList3[int], return_indices: bool = False) -> Tensor:
    return adaptive_max_pool3d_with_indices(input, output_size)[0]

def adaptive_avg_pool2d(input: Tensor, output_size: BroadcastingList2[int]) -> Tensor:
    _output_size = _list_with_default(output_size, input.size())
    return torch._C._nn.adaptive_avg_pool2d(input, _output_size)

def adaptive_avg_pool3d(input: Tensor, output_size: BroadcastingList3[int]) -> Tensor:
    _output_size = _list_with_default(output_size, input.size())
    return torch._C._nn.adaptive_avg_pool3d(input, _output_size)

def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: BroadcastingList2[int], output_size: Optional[BroadcastingList2[int]] = None, output_ratio: Optional[BroadcastingList2[float]] = None, return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        assert output_ratio is not None
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        output_size = [int(input.size(-2) * output_ratio[0]), int(input.size(-1) * output_ratio[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = torch.rand(n_batch, input.size(-3), 2, dtype=input.dtype, device=input.device)
    return torch._C._nn.fractional_max_pool2d(input, kernel_size, output_size, _random_samples)

def _fractional_max_pool2d(input: Tensor, kernel_size: BroadcastingList2[int], output_size: Optional[BroadcastingList2[int]] = None, output_ratio: Optional[BroadcastingList2[float]] = None, return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Tensor:
    return fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices, _random_samples)[0]

def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: BroadcastingList3[int], output_size: Optional[BroadcastingList3[int]] = None, output_ratio: Optional[BroadcastingList3[float]] = None, return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        assert output_ratio is not None
        output_size = [int(input.size(-3) * output_ratio[0]), int(input.size(-2) * output_ratio[1]), int(input.size(-1) * output_ratio[2])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 4 else input.size(0)
        _random_samples = torch.rand(n_batch, input.size(-4), 3, dtype=input.dtype, device=input.device)
    return torch._C._nn.fractional_max_pool3d(input, kernel_size, output_size, _random_samples)

def _fractional_max_pool3d(input: Tensor, kernel_size: BroadcastingList3[int], output_size: Optional[BroadcastingList3[int]] = None, output_ratio: Optional[BroadcastingList3[float]] = None, return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Tensor:
    return fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices, _random_samples)[0]

def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Optional[BroadcastingList1[int]] = None, ceil_mode: bool = False) -> Tensor:
    if stride is not None:
        out = torch.avg_pool1d(input.pow(norm_type), [kernel_size], stride, [0], ceil_mode)
    else:
        out = torch.avg_pool1d(input.pow(norm_type), [kernel_size], torch.jit.annotate(List[int], []), [0], ceil_mode)
    return (torch.sign(out) * torch.relu(torch.abs(out))).mul(kernel_size).pow(1.0 / norm_type)

def lp_pool2d(input: Tensor, norm_type: float, kernel_size: BroadcastingList2[int], stride: Optional[BroadcastingList2[int]] = None, ceil_mode: bool = False) -> Tensor:
    kw = kernel_size[0]
    kh = kernel_size[1]
    if stride is not None:
        out = torch.avg_pool2d(input.pow(norm_type), kernel_size, stride, [0, 0], ceil_mode)
    else:
        out = torch.avg_pool2d(input.pow(norm_type), kernel_size, torch.jit.annotate(List[int], []), [0, 0], ceil_mode)
    return (torch.sign(out) * torch.relu(torch.abs(out))).mul(kw * kh).pow(1.0 / norm_type)

def lp_pool3d(input: Tensor, norm_type: float, kernel_size: BroadcastingList3[int], stride: Optional[BroadcastingList3[int]] = None, ceil_mode: bool = False) -> Tensor:
    kd = kernel_size[0]
    kw = kernel_size[1]
    kh = kernel_size[2]
    if stride is not None:
        out = torch._C._nn.avg_pool3d(input.pow(norm_type), kernel_size, stride, [0, 0, 0], ceil_mode)
    else:
        out = torch._C._nn.avg_pool3d(input.pow(norm_type), kernel_size, torch.jit.annotate(List[int], []), [0, 0, 0], ceil_mode)
    return (torch.sign(out) * torch.relu(torch.abs(out))).mul(kd * kw * kh).pow(1.0 / norm_type)

def _unpool_output_size(input: Tensor, kernel_size: List[int], stride: List[int], padding: List[int], output_size: Optional[List[int]]) -> List[int]:
    input_size = input.size()
    default_size = torch.jit.annotate(List[int], [])
    for d in range(len(kernel_size)):
        default_size.append((input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d])
    if output_size is None:
        ret = default_size
    else:
        if len(output_size) == len(kernel_size) + 2:
            output_size = output_size[2:]
        if len(output_size) != len(kernel_size):
            raise ValueError("output_size should be a sequence containing {} or {} elements, but it has a length of '{}'".format(len(kernel_size), len(kernel_size) + 2, len(output_size)))
        for d in range(len(kernel_size)):
            min_size = default_size[d] - stride[d]
            max_size = default_size[d] + stride[d]
            if not (min_size < output_size[d] and output_size[d] < max_size):
                raise ValueError("invalid output_size \"{}\" (dim {} must be between {} and {})".format(output_size, d, min_size, max_size))
        ret = output_size
    return ret

def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: BroadcastingList1[int], stride: Optional[BroadcastingList1[int]] = None, padding: BroadcastingList1[int] = 0, output_size: Optional[BroadcastingList1[int]] = None) -> Tensor:
    if stride is None:
        stride = kernel_size
    out = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    out = out + [1]
    return torch._C._nn.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), out).squeeze(-1)

def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: BroadcastingList2[int], stride: Optional[BroadcastingList2[int]] = None, padding: BroadcastingList2[int] = 0, output_size: Optional[BroadcastingList2[int]] = None) -> Tensor:
    if stride is None:
        stride = kernel_size
    out = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return torch._C._nn.max_unpool2d(input, indices, out)

def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: BroadcastingList3[int], stride: Optional[BroadcastingList3[int]] = None, padding: BroadcastingList3[int] = 0, output_size: Optional[BroadcastingList3[int]] = None) -> Tensor:
    if stride is None:
        stride = kernel_size
    out = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return torch._C._nn.max_unpool3d(input, indices, out, stride, padding)

# ---------------------------------------------------------------------------------------------
# Vision: padding, interpolation, sampling grids, patches

def pad(input: Tensor, pad: List[int], mode: str = "constant", value: Optional[float] = None) -> Tensor:
    return torch._C._nn.pad(input, pad, mode, value)

def _interpolate(input: Tensor, size: Optional[List[int]], scale_factor: Optional[List[float]], mode: str, align_corners: Optional[bool], recompute_scale_factor: Optional[bool], antialias: bool) -> Tensor:
    if mode == "nearest" or mode == "area" or mode == "nearest-exact":
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear")
    else:
        if align_corners is None:
            align_corners = False
    dim = input.dim() - 2
    output_size = torch.jit.annotate(Optional[List[int]], None)
    scale_factors = torch.jit.annotate(Optional[List[float]], None)
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        if len(size) != dim:
            raise ValueError("Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {} and output size of {}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.".format(input.size()[2:], size))
        output_size = size
    elif scale_factor is not None:
        if len(scale_factor) != dim:
            raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of {} and scale_factor of shape {}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.".format(input.size()[2:], scale_factor))
        scale_factors = scale_factor
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        assert scale_factors is not None
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not ((mode == "bilinear" or mode == "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as input")
    if input.dim() == 3 and mode == "nearest":
        return torch._C._nn.upsample_nearest1d(input, output_size, scale_factors)
    if input.dim() == 4 and mode == "nearest":
        return torch._C._nn.upsample_nearest2d(input, output_size, scale_factors)
    if input.dim() == 5 and mode == "nearest":
        return torch._C._nn.upsample_nearest3d(input, output_size, scale_factors)
    if input.dim() == 3 and mode == "nearest-exact":
        return torch._C._nn._upsample_nearest_exact1d(input, output_size, scale_factors)
    if input.dim() == 4 and mode == "nearest-exact":
        return torch._C._nn._upsample_nearest_exact2d(input, output_size, scale_factors)
    if input.dim() == 5 and mode == "nearest-exact":
        return torch._C._nn._upsample_nearest_exact3d(input, output_size, scale_factors)
    if input.dim() == 3 and mode == "area":
        assert output_size is not None
        return torch.adaptive_avg_pool1d(input, output_size)
    if input.dim() == 4 and mode == "area":
        assert output_size is not None
        return torch._C._nn.adaptive_avg_pool2d(input, output_size)
    if input.dim() == 5 and mode == "area":
        assert output_size is not None
        return torch._C._nn.adaptive_avg_pool3d(input, output_size)
    if input.dim() == 3 and mode == "linear":
        assert align_corners is not None
        return torch._C._nn.upsample_linear1d(input, output_size, align_corners, scale_factors)
    if input.dim() == 4 and mode == "bilinear":
        assert align_corners is not None
        if antialias:
            return torch._C._nn._upsample_bilinear2d_aa(input, output_size, align_corners, scale_factors)
        return torch._C._nn.upsample_bilinear2d(input, output_size, align_corners, scale_factors)
    if input.dim() == 5 and mode == "trilinear":
        assert align_corners is not None
        return torch._C._nn.upsample_trilinear3d(input, output_size, align_corners, scale_factors)
    if input.dim() == 4 and mode == "bicubic":
        assert align_corners is not None
        if antialias:
            return torch._C._nn._upsample_bicubic2d_aa(input, output_size, align_corners, scale_factors)
        return torch._C._nn.upsample_bicubic2d(input, output_size, align_corners, scale_factors)
    if input.dim() == 3 and mode == "bilinear":
        raise NotImplementedError("Got 3D input, but bilinear mode needs 4D input")
    if input.dim() == 3 and mode == "trilinear":
        raise NotImplementedError("Got 3D input, but trilinear mode needs 5D input")
    if input.dim() == 4 and mode == "linear":
        raise NotImplementedError("Got 4D input, but linear mode needs 3D input")
    if input.dim() == 4 and mode == "trilinear":
        raise NotImplementedError("Got 4D input, but trilinear mode needs 5D input")
    if input.dim() == 5 and mode == "linear":
        raise NotImplementedError("Got 5D input, but linear mode needs 3D input")
    if input.dim() == 5 and mode == "bilinear":
        raise NotImplementedError("Got 5D input, but bilinear mode needs 4D input")
    raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {})".format(input.dim(), mode))

def interpolate(input: Tensor, size: Optional[int] = None, scale_factor: Optional[List[float]] = None, mode: str = "nearest", align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    return __torch__.torch.nn.functional._interpolate(input, __torch__.torch.nn.functional._expand_size(size, input.dim() - 2), scale_factor, mode, align_corners, recompute_scale_factor, antialias)

def interpolate(input: Tensor, size: Optional[List[int]] = None, scale_factor: Optional[List[float]] = None, mode: str = "nearest", align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    return __torch__.torch.nn.functional._interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)

def interpolate(input: Tensor, size: Optional[int] = None, scale_factor: Optional[float] = None, mode: str = "nearest", align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    dim = input.dim() - 2
    return __torch__.torch.nn.functional._interpolate(input, __torch__.torch.nn.functional._expand_size(size, dim), __torch__.torch.nn.functional._expand_scale(scale_factor, dim), mode, align_corners, recompute_scale_factor, antialias)

def interpolate(input: Tensor, size: Optional[List[int]] = None, scale_factor: Optional[float] = None, mode: str = "nearest", align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    return __torch__.torch.nn.functional._interpolate(input, size, __torch__.torch.nn.functional._expand_scale(scale_factor, input.dim() - 2), mode, align_corners, recompute_scale_factor, antialias)

def upsample(input: Tensor, size: Optional[int] = None, scale_factor: Optional[float] = None, mode: str = "nearest", align_corners: Optional[bool] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    dim = input.dim() - 2
    return __torch__.torch.nn.functional._interpolate(input, __torch__.torch.nn.functional._expand_size(size, dim), __torch__.torch.nn.functional._expand_scale(scale_factor, dim), mode, align_corners, None, False)

def upsample(input: Tensor, size: Optional[List[int]] = None, scale_factor: Optional[float] = None, mode: str = "nearest", align_corners: Optional[bool] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    return __torch__.torch.nn.functional._interpolate(input, size, __torch__.torch.nn.functional._expand_scale(scale_factor, input.dim() - 2), mode, align_corners, None, False)

def upsample_nearest(input: Tensor, size: Optional[int] = None, scale_factor: Optional[float] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.")
    dim = input.dim() - 2
    return __torch__.torch.nn.functional._interpolate(input, __torch__.torch.nn.functional._expand_size(size, dim), __torch__.torch.nn.functional._expand_scale(scale_factor, dim), "nearest", None, None, False)

def upsample_nearest(input: Tensor, size: Optional[List[int]] = None, scale_factor: Optional[float] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.")
    return __torch__.torch.nn.functional._interpolate(input, size, __torch__.torch.nn.functional._expand_scale(scale_factor, input.dim() - 2), "nearest", None, None, False)

def upsample_bilinear(input: Tensor, size: Optional[int] = None, scale_factor: Optional[float] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")
    dim = input.dim() - 2
    return __torch__.torch.nn.functional._interpolate(input, __torch__.torch.nn.functional._expand_size(size, dim), __torch__.torch.nn.functional._expand_scale(scale_factor, dim), "bilinear", True, None, False)

def upsample_bilinear(input: Tensor, size: Optional[List[int]] = None, scale_factor: Optional[float] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")
    return __torch__.torch.nn.functional._interpolate(input, size, __torch__.torch.nn.functional._expand_scale(scale_factor, input.dim() - 2), "bilinear", True, None, False)

def upsample_bilinear(input: Tensor, size: Optional[int] = None, scale_factor: Optional[List[float]] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")
    return __torch__.torch.nn.functional._interpolate(input, __torch__.torch.nn.functional._expand_size(size, input.dim() - 2), scale_factor, "bilinear", True, None, False)

def upsample_bilinear(input: Tensor, size: Optional[List[int]] = None, scale_factor: Optional[List[float]] = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")
    return __torch__.torch.nn.functional._interpolate(input, size, scale_factor, "bilinear", True, None, False)

def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros", align_corners: Optional[bool] = None) -> Tensor:
    if mode != "bilinear" and mode != "nearest" and mode != "bicubic":
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{}'".format(mode))
    if padding_mode != "zeros" and padding_mode != "border" and padding_mode != "reflection":
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '{}'".format(padding_mode))
    if mode == "bilinear":
        mode_enum = 0
    elif mode == "nearest":
        mode_enum = 1
    else:
        mode_enum = 2
    if padding_mode == "zeros":
        padding_mode_enum = 0
    elif padding_mode == "border":
        padding_mode_enum = 1
    else:
        padding_mode_enum = 2
    if align_corners is None:
        warnings.warn("grid_sample: align_corners defaults to False (the behaviour since 1.3.0); pass it explicitly to silence this warning.")
        align_corners = False
    return torch.grid_sampler(input, grid, mode_enum, padding_mode_enum, align_corners)

def affine_grid(theta: Tensor, size: List[int], align_corners: Optional[bool] = None) -> Tensor:
    if align_corners is None:
        warnings.warn("affine_grid: align_corners defaults to False (the behaviour since 1.3.0); pass it explicitly to silence this warning.")
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError("Expected theta to have floating point type, but got {}".format(theta.dtype))
    if len(size) == 4:
        if theta.dim() != 3 or theta.size(-2) != 2 or theta.size(-1) != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size {}. Got {}.".format(size, theta.size()))
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.size(-2) != 3 or theta.size(-1) != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size {}. Got {}.".format(size, theta.size()))
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {}.".format(size))
    if min(spatial_size) <= 0:
        raise ValueError("Expected non-zero, positive output size. Got {}".format(size))
    return torch.affine_grid_generator(theta, size, align_corners)

def unfold(input: Tensor, kernel_size: BroadcastingList2[int], dilation: BroadcastingList2[int] = 1, padding: BroadcastingList2[int] = 0, stride: BroadcastingList2[int] = 1) -> Tensor:
    return torch._C._nn.im2col(input, kernel_size, dilation, padding, stride)

def fold(input: Tensor, output_size: BroadcastingList2[int], kernel_size: BroadcastingList2[int], dilation: BroadcastingList2[int] = 1, padding: BroadcastingList2[int] = 0, stride: BroadcastingList2[int] = 1) -> Tensor:
    return torch._C._nn.col2im(input, output_size, kernel_size, dilation, padding, stride)

# ---------------------------------------------------------------------------------------------
# Losses

def l1_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    _check_size_match("l1_loss", input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = torch.broadcast_tensors(input, target)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        weighted = torch.abs(expanded_input - expanded_target) * weight
        if reduction == "none":
            return weighted
        if reduction == "sum":
            return torch.sum(weighted)
        if reduction == "mean":
            return torch.sum(weighted) / torch.sum(weight)
        raise ValueError("Invalid reduction mode: {}. Expected one of 'none', 'mean', 'sum'.".format(reduction))
    return torch._C._nn.l1_loss(expanded_input, expanded_target, _reduction_enum(reduction))

def mse_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    _check_size_match("mse_loss", input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = torch.broadcast_tensors(input, target)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        weighted = torch.pow(expanded_input - expanded_target, 2) * weight
        if reduction == "none":
            return weighted
        if reduction == "sum":
            return torch.sum(weighted)
        if reduction == "mean":
            return torch.sum(weighted) / torch.sum(weight)
        raise ValueError("Invalid reduction mode: {}. Expected one of 'none', 'mean', 'sum'.".format(reduction))
    return torch._C._nn.mse_loss(expanded_input, expanded_target, _reduction_enum(reduction))

def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Optional[Tensor] = None) -> Tensor:
    _check_size_match("huber_loss", input, target)
    expanded_input, expanded_target = torch.broadcast_tensors(input, target)
    if weight is None:
        return torch._C._nn.huber_loss(expanded_input, expanded_target, _reduction_enum(reduction), delta)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = torch._C._nn.huber_loss(expanded_input, expanded_target, 0, delta) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return torch.sum(weighted)
    if reduction == "mean":
        return weighted.mean()
    raise ValueError("Invalid reduction mode: {}. Expected one of 'none', 'mean', 'sum'.".format(reduction))

def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    _check_size_match("smooth_l1_loss", input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = torch.broadcast_tensors(input, target)
    if beta == 0.0:
        return torch._C._nn.l1_loss(expanded_input, expanded_target, _reduction_enum(reduction))
    return torch._C._nn.smooth_l1_loss(expanded_input, expanded_target, _reduction_enum(reduction), beta)

def soft_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return torch._C._nn.soft_margin_loss(input, target, _reduction_of(size_average, reduce, reduction))

def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return torch._C._nn.nll_loss_nd(input, target, weight, _reduction_of(size_average, reduce, reduction), ignore_index)

def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100, reduce: Optional[bool] = None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    return torch._C._nn.cross_entropy_loss(input, target, weight, _reduction_of(size_average, reduce, reduction), ignore_index, label_smoothing)

def kl_div(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("kl_div: reduction='mean' divides the total loss by both the batch size and the support size; 'batchmean' divides by the batch size only, as the KL divergence is defined.")
        if reduction == "batchmean":
            reduction_enum = 2
        else:
            reduction_enum = _reduction_enum(reduction)
    reduced = torch.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced

def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average: Optional[bool] = None, eps: float = 1e-08, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not a valid value for reduction")
    return torch.poisson_nll_loss(input, target, log_input, full, eps, _reduction_enum(reduction))

def binary_cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError("Using a target size ({}) that is different to the input size ({}) is deprecated. Please ensure they have the same size.".format(target.size(), input.size()))
    if weight is not None:
        new_size = torch._infer_size(target.size(), weight.size())
        weight = weight.expand(new_size)
    return torch._C._nn.binary_cross_entropy(input, target, weight, reduction_enum)

def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean", pos_weight: Optional[Tensor] = None) -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if not (target.size() == input.size()):
        raise ValueError("Target size ({}) must be the same as input size ({})".format(target.size(), input.size()))
    return torch.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)

def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return torch.hinge_embedding_loss(input, target, margin, _reduction_of(size_average, reduce, reduction))

def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return torch._C._nn.multilabel_margin_loss(input, target, _reduction_of(size_average, reduce, reduction))

def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * torch.nn.functional.logsigmoid(input) + torch.rsub(target, 1) * torch.nn.functional.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    C = input.size(class_dim)
    loss = loss.sum(dim=class_dim) / C
    if reduction == "none":
        ret = loss
    elif reduction == "mean":
        ret = loss.mean()
    elif reduction == "sum":
        ret = loss.sum()
    else:
        ret = input
        raise ValueError(reduction + " is not valid")
    return ret

def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return torch.cosine_embedding_loss(input1, input2, target, margin, _reduction_of(size_average, reduce, reduction))

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: {}, input2: {}, target: {} ".format(input1.size(), input2.size(), target.size()))
    return torch.margin_ranking_loss(input1, input2, target, margin, reduction_enum)

def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None:
        if weight.dim() != 1:
            raise ValueError("weight must be one-dimensional")
    return torch._C._nn.multi_margin_loss(input, target, p, margin, weight, reduction_enum)

def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0, eps: float = 1e-06, swap: bool = False, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError("margin must be greater than 0, got {}".format(margin))
    return torch.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction_enum)

def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    return torch.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction_enum(reduction), zero_infinity)

# ---------------------------------------------------------------------------------------------
# Attention

def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor], attn_mask: Optional[Tensor], num_heads: int) -> bool:
    if query.dim() == 3:
        is_batched = True
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found {}-D and {}-D tensors respectively".format(key.dim(), value.dim()))
        if key_padding_mask is not None:
            if key_padding_mask.dim() != 2:
                raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found {}-D tensor instead".format(key_padding_mask.dim()))
        if attn_mask is not None:
            if attn_mask.dim() != 2 and attn_mask.dim() != 3:
                raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {}-D tensor instead".format(attn_mask.dim()))
    elif query.dim() == 2:
        is_batched = False
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found {}-D and {}-D tensors respectively".format(key.dim(), value.dim()))
        if key_padding_mask is not None:
            if key_padding_mask.dim() != 1:
                raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found {}-D tensor instead".format(key_padding_mask.dim()))
        if attn_mask is not None:
            if attn_mask.dim() != 2 and attn_mask.dim() != 3:
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {}-D tensor instead".format(attn_mask.dim()))
            if attn_mask.dim() == 3:
                expected_shape = [num_heads, query.size(0), key.size(0)]
                if attn_mask.size() != expected_shape:
                    raise AssertionError("Expected `attn_mask` shape to be {} but got {}".format(expected_shape, attn_mask.size()))
    else:
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received {}-D query tensor".format(query.dim()))
    return is_batched

def _canonical_mask(mask: Optional[Tensor], mask_name: str, other_type: Optional[int], other_name: str, target_type: int, check_other: bool = True) -> Optional[Tensor]:
    if mask is not None:
        _mask_dtype = mask.dtype
        _mask_is_float = torch.is_floating_point(mask)
        if _mask_dtype != torch.bool and not _mask_is_float:
            raise AssertionError("only bool and floating types of {} are supported".format(mask_name))
        if check_other and other_type is not None:
            if _mask_dtype != other_type:
                warnings.warn("Support for mismatched {} and {} is deprecated. Use same type for both instead.".format(mask_name, other_name))
        if not _mask_is_float:
            mask = torch.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask

def _none_or_dtype(input: Optional[Tensor]) -> Optional[int]:
    if input is None:
        return None
    return input.dtype

def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int, in_proj_weight: Optional[Tensor], in_proj_bias: Optional[Tensor], bias_k: Optional[Tensor], bias_v: Optional[Tensor], add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Optional[Tensor], training: bool = True, key_padding_mask: Optional[Tensor] = None, need_weights: bool = True, attn_mask: Optional[Tensor] = None, use_separate_proj_weight: bool = False, q_proj_weight: Optional[Tensor] = None, k_proj_weight: Optional[Tensor] = None, v_proj_weight: Optional[Tensor] = None, static_k: Optional[Tensor] = None, static_v: Optional[Tensor] = None, average_attn_weights: bool = True, is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len = query.size(0)
    bsz = query.size(1)
    embed_dim = query.size(2)
    src_len = key.size(0)
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError("was expecting embedding dimension of {}, but got {}".format(embed_dim_to_check, embed_dim))
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError("embed_dim {} not divisible by num_heads {}".format(embed_dim, num_heads))
    if use_separate_proj_weight:
        if key.size()[:2] != value.size()[:2]:
            raise AssertionError("key's sequence and batch dims {} do not match value's {}".format(key.size()[:2], value.size()[:2]))
    else:
        if key.size() != value.size():
            raise AssertionError("key shape {} does not match value shape {}".format(key.size(), value.size()))
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w = in_proj_weight.chunk(3)
        if in_proj_bias is None:
            q = torch.nn.functional.linear(query, w[0], None)
            k = torch.nn.functional.linear(key, w[1], None)
            v = torch.nn.functional.linear(value, w[2], None)
        else:
            b = in_proj_bias.chunk(3)
            q = torch.nn.functional.linear(query, w[0], b[0])
            k = torch.nn.functional.linear(key, w[1], b[1])
            v = torch.nn.functional.linear(value, w[2], b[2])
    else:
        if q_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight is None")
        if k_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but k_proj_weight is None")
        if v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but v_proj_weight is None")
        if in_proj_bias is None:
            q = torch.nn.functional.linear(query, q_proj_weight, None)
            k = torch.nn.functional.linear(key, k_proj_weight, None)
            v = torch.nn.functional.linear(value, v_proj_weight, None)
        else:
            b = in_proj_bias.chunk(3)
            q = torch.nn.functional.linear(query, q_proj_weight, b[0])
            k = torch.nn.functional.linear(key, k_proj_weight, b[1])
            v = torch.nn.functional.linear(value, v_proj_weight, b[2])
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.size() != [tgt_len, src_len]:
                raise RuntimeError("The shape of the 2D attn_mask is {}, but should be {}.".format(attn_mask.size(), [tgt_len, src_len]))
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.size() != [bsz * num_heads, tgt_len, src_len]:
                raise RuntimeError("The shape of the 3D attn_mask is {}, but should be {}.".format(attn_mask.size(), [bsz * num_heads, tgt_len, src_len]))
        else:
            raise RuntimeError("attn_mask's dimension {} is not supported".format(attn_mask.dim()))
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = torch.cat([k, bias_k.repeat(1, bsz, 1)])
        v = torch.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = torch._C._nn.pad(attn_mask, [0, 1], "constant", None)
        if key_padding_mask is not None:
            key_padding_mask = torch._C._nn.pad(key_padding_mask, [0, 1], "constant", None)
    else:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError("expecting static_k.size(0) of {}, but got {}".format(bsz * num_heads, static_k.size(0)))
        if static_k.size(2) != head_dim:
            raise AssertionError("expecting static_k.size(2) of {}, but got {}".format(head_dim, static_k.size(2)))
        k = static_k
    if static_v is None:
        v = v.view(v.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError("expecting static_v.size(0) of {}, but got {}".format(bsz * num_heads, static_v.size(0)))
        if static_v.size(2) != head_dim:
            raise AssertionError("expecting static_v.size(2) of {}, but got {}".format(head_dim, static_v.size(2)))
        v = static_v
    if add_zero_attn:
        k = torch.cat([k, torch.zeros([bsz * num_heads, 1, head_dim], dtype=k.dtype, device=k.device)], dim=1)
        v = torch.cat([v, torch.zeros([bsz * num_heads, 1, head_dim], dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = torch._C._nn.pad(attn_mask, [0, 1], "constant", None)
        if key_padding_mask is not None:
            key_padding_mask = torch._C._nn.pad(key_padding_mask, [0, 1], "constant", None)
    src_len = k.size(1)
    if key_padding_mask is not None:
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        if attn_mask is None:
            attn_mask = key_padding_mask
        else:
            attn_mask = attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        E = q.size(2)
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            attn_output_weights = torch.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = torch.bmm(q_scaled, k.transpose(-2, -1))
        attn_output_weights = attn_output_weights.softmax(-1)
        if dropout_p > 0.0:
            attn_output_weights = torch.dropout(attn_output_weights, dropout_p, True)
        attn_output = torch.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = torch.nn.functional.linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = attn_output_weights.mean(dim=1)
        if not is_batched:
            attn_output = attn_output.squeeze(1)
            attn_output_weights = attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights
    else:
        if attn_mask is not None:
            if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
                attn_mask = attn_mask.unsqueeze(0)
            else:
                attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
        q = q.view(bsz, num_heads, tgt_len, head_dim)
        k = k.view(bsz, num_heads, src_len, head_dim)
        v = v.view(bsz, num_heads, src_len, head_dim)
        attn_output = torch.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
        attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
        attn_output = torch.nn.functional.linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        if not is_batched:
            attn_output = attn_output.squeeze(1)
        return attn_output, None
