"""Generates tests/backward: TorchScript programs calling ATen's explicit backward operators
(`torch.ops.aten.tanh_backward`, `convolution_backward`, `native_layer_norm_backward`,
`upsample_bilinear2d_backward`, ...) with their inputs and torch 2.15's results (or errors).
Saved statistics and indices are produced by the forward operators here. Needs torch:

    /work/torch-venv/bin/python tools/backward/gen_backward_cases.py
"""
import json
import os
import shutil

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "backward")
A = torch.ops.aten
CASES = {}
g = torch.Generator().manual_seed(12)


def rnd(*shape):
    return torch.randn(shape, generator=g, dtype=torch.float64)


def case(name, params, expr, inputs, error=False, rtol=1e-7, atol=1e-9):
    """`def f(params): return expr` over `inputs`."""
    src = f"def f({params}):\n    return {expr}\n"
    CASES[name] = (src, tuple(inputs), error, rtol, atol)


def unary(name, op, extra="", x=None):
    x = rnd(2, 5) * 3 if x is None else x
    case(name, "g, x", f"torch.ops.aten.{op}(g, x{extra})", (rnd(*x.shape), x))


# Pointwise activations.
xb = torch.tensor([-4.0, -3.0, -1.0, 0.0, 0.5, 1.0, 3.0, 4.0, float("nan")], dtype=torch.float64)
case("tanh_backward", "g, y", "torch.ops.aten.tanh_backward(g, y)", (rnd(3, 4), rnd(3, 4).tanh()))
case("sigmoid_backward", "g, y", "torch.ops.aten.sigmoid_backward(g, y)", (rnd(3, 4), rnd(3, 4).sigmoid()))
case("tanh_backward_broadcast", "g, y", "torch.ops.aten.tanh_backward(g, y)", (rnd(3, 1), rnd(4).tanh()))
case("sigmoid_backward_noncontig", "g, y", "torch.ops.aten.sigmoid_backward(g.t(), y.t())", (rnd(4, 3), rnd(4, 3)))
unary("threshold_backward", "threshold_backward", ", 1.0", xb)
unary("hardtanh_backward", "hardtanh_backward", ", -1.0, 1.0", xb)
unary("hardsigmoid_backward", "hardsigmoid_backward", "", xb)
unary("hardswish_backward", "hardswish_backward", "", xb)
unary("softshrink_backward", "softshrink_backward", ", 1.0", xb)
unary("hardshrink_backward", "hardshrink_backward", ", 1.0", xb)
unary("leaky_relu_backward", "leaky_relu_backward", ", 0.1, False", xb)
unary("softplus_backward", "softplus_backward", ", 2.0, 3.0")
unary("gelu_backward", "gelu_backward")
unary("gelu_backward_tanh", "gelu_backward", ", approximate='tanh'")
unary("silu_backward", "silu_backward")
unary("mish_backward", "mish_backward")
unary("infinitely_differentiable_gelu_backward", "infinitely_differentiable_gelu_backward")
case("glu_backward", "g, x", "torch.ops.aten.glu_backward(g, x, 1)", (rnd(3, 2), rnd(3, 4)))
xl = torch.tensor([-0.5, 0.0, 0.05, 0.5, 0.99, 1.0, 1.5], dtype=torch.float64)
case("logit_backward", "g, x", "torch.ops.aten.logit_backward(g, x)", (rnd(7), xl))
case("logit_backward_eps", "g, x", "torch.ops.aten.logit_backward(g, x, 0.1)", (rnd(7), xl))
case("elu_backward", "g, x", "torch.ops.aten.elu_backward(g, 1.5, 1.2, 0.8, False, x)", (rnd(9), xb))
case("elu_backward_result", "g, y", "torch.ops.aten.elu_backward(g, 1.5, 1.2, 0.8, True, y)",
     (rnd(9), torch.nn.functional.elu(xb, 1.5)))
xs = rnd(2, 3)
case("log_sigmoid_backward", "g, x, b", "torch.ops.aten.log_sigmoid_backward(g, x, b)",
     (rnd(2, 3), xs, torch.ops.aten.log_sigmoid_forward(xs)[1]))
case("rrelu_with_noise_backward_eval", "g, x, n",
     "torch.ops.aten.rrelu_with_noise_backward(g, x, n, 0.1, 0.3, False, False)", (rnd(6), rnd(6), rnd(6)))
case("rrelu_with_noise_backward_train", "g, x, n",
     "torch.ops.aten.rrelu_with_noise_backward(g, x, n, 0.1, 0.3, True, False)", (rnd(6), rnd(6), rnd(6).abs()))
case("prelu_kernel_backward", "g, x, w", "torch.ops.aten._prelu_kernel_backward(g, x, w)",
     (rnd(2, 3, 4), rnd(2, 3, 4), rnd(3, 1)))
case("native_dropout_backward", "g, m", "torch.ops.aten.native_dropout_backward(g, m, 2.0)",
     (rnd(3, 4), torch.rand(3, 4, generator=g) > 0.5))
xg, dxg = rnd(2, 6), rnd(2, 6)
case("glu_jvp", "y, x, dx", "torch.ops.aten.glu_jvp(y, x, dx, 1)", (torch.nn.functional.glu(xg, 1), xg, dxg))

# Losses.
x, t = rnd(3, 4), rnd(3, 4)
for red in (0, 1, 2):
    gshape = (3, 4) if red == 0 else ()
    case(f"mse_loss_backward_r{red}", "g, x, t", f"torch.ops.aten.mse_loss_backward(g, x, t, {red})", (rnd(*gshape), x, t))
case("huber_loss_backward", "g, x, t", "torch.ops.aten.huber_loss_backward(g, x, t, 1, 0.7)", (rnd(), x, t))
case("smooth_l1_loss_backward", "g, x, t", "torch.ops.aten.smooth_l1_loss_backward(g, x, t, 0, 0.5)", (rnd(3, 4), x, t))
case("soft_margin_loss_backward", "g, x, t", "torch.ops.aten.soft_margin_loss_backward(g, x, t, 1)",
     (rnd(), x, torch.sign(t)))
p = torch.rand(3, 4, generator=g, dtype=torch.float64) * 0.9 + 0.05
case("binary_cross_entropy_backward", "g, x, t, w", "torch.ops.aten.binary_cross_entropy_backward(g, x, t, w, 1)",
     (rnd(), p, torch.rand(3, 4, generator=g, dtype=torch.float64), rnd(3, 4).abs()))
tgt = torch.tensor([1, 0, 3])
case("multi_margin_loss_backward", "g, x, t", "torch.ops.aten.multi_margin_loss_backward(g, x, t, 1, 1.0, None, 1)",
     (rnd(), x, tgt))
mt = torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 1, 2]])
case("multilabel_margin_loss_backward", "g, x, t, it",
     "torch.ops.aten.multilabel_margin_loss_backward(g, x, t, 1, it)",
     (rnd(), x, mt, torch.ops.aten.multilabel_margin_loss_forward(x, mt, 1)[1]))
lp = torch.log_softmax(rnd(5, 4), 1)
nt = torch.tensor([0, 3, 1, 2, 1])
w = rnd(4).abs()
for red in (0, 1, 2):
    out, tw = torch.ops.aten.nll_loss_forward(lp, nt, w, red, 2)
    case(f"nll_loss_backward_r{red}", "g, x, t, w, tw",
         f"torch.ops.aten.nll_loss_backward(g, x, t, w, {red}, 2, tw)", (rnd(*out.shape), lp, nt, w, tw))
out, tw = torch.ops.aten.nll_loss_forward(lp, torch.tensor([2, 2, 2, 2, 2]), None, 1, 2)
case("nll_loss_backward_all_ignored", "g, x, t, tw", "torch.ops.aten.nll_loss_backward(g, x, t, None, 1, 2, tw)",
     (rnd(), lp, torch.tensor([2, 2, 2, 2, 2]), tw))
out, tw = torch.ops.aten.nll_loss_forward(lp[0], nt[0], w, 1, -100)
case("nll_loss_backward_unbatched", "g, x, t, w, tw", "torch.ops.aten.nll_loss_backward(g, x, t, w, 1, -100, tw)",
     (rnd(), lp[0], nt[0], w, tw))
lp2 = torch.log_softmax(rnd(2, 3, 2, 2), 1)
nt2 = torch.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
out, tw = torch.ops.aten.nll_loss2d_forward(lp2, nt2, None, 1, -100)
case("nll_loss2d_backward", "g, x, t, tw", "torch.ops.aten.nll_loss2d_backward(g, x, t, None, 1, -100, tw)",
     (rnd(), lp2, nt2, tw))

# Pooling, padding, upsampling.
xp = rnd(2, 3, 6, 5)
y, idx = torch.ops.aten.max_pool2d_with_indices(xp, [3, 2], [2, 1], [1, 0], [1, 1], True)
case("max_pool2d_with_indices_backward", "g, x, i",
     "torch.ops.aten.max_pool2d_with_indices_backward(g, x, [3, 2], [2, 1], [1, 0], [1, 1], True, i)",
     (rnd(*y.shape), xp, idx))
xp3 = rnd(1, 2, 4, 4, 4)
y, idx = torch.ops.aten.max_pool3d_with_indices(xp3, [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False)
case("max_pool3d_with_indices_backward", "g, x, i",
     "torch.ops.aten.max_pool3d_with_indices_backward(g, x, [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False, i)",
     (rnd(*y.shape), xp3, idx))
y, idx = torch.ops.aten.adaptive_max_pool2d(xp, [4, 3])
case("adaptive_max_pool2d_backward", "g, x, i", "torch.ops.aten.adaptive_max_pool2d_backward(g, x, i)",
     (rnd(*y.shape), xp, idx))
y, idx = torch.ops.aten.adaptive_max_pool3d(xp3, [3, 2, 2])
case("adaptive_max_pool3d_backward", "g, x, i", "torch.ops.aten.adaptive_max_pool3d_backward(g, x, i)",
     (rnd(*y.shape), xp3, idx))
y, idx = torch.ops.aten.fractional_max_pool2d(xp, [2, 2], [3, 3], torch.rand(2, 3, 2, generator=g, dtype=torch.float64))
case("fractional_max_pool2d_backward", "g, x, i", "torch.ops.aten.fractional_max_pool2d_backward(g, x, [2, 2], [3, 3], i)",
     (rnd(*y.shape), xp, idx))
case("avg_pool2d_backward", "g, x", "torch.ops.aten.avg_pool2d_backward(g, x, [3, 2], [2, 1], [1, 1], True, False, None)",
     (rnd(*torch.ops.aten.avg_pool2d(xp, [3, 2], [2, 1], [1, 1], True, False).shape), xp))
case("avg_pool2d_backward_divisor", "g, x", "torch.ops.aten.avg_pool2d_backward(g, x, [2, 2], [2, 2], [0, 0], False, True, 3)",
     (rnd(2, 3, 3, 2), xp))
case("avg_pool3d_backward", "g, x", "torch.ops.aten.avg_pool3d_backward(g, x, [2, 2, 2], [1, 2, 2], [1, 0, 0], False, True, None)",
     (rnd(*torch.ops.aten.avg_pool3d(xp3, [2, 2, 2], [1, 2, 2], [1, 0, 0]).shape), xp3))
case("adaptive_avg_pool2d_backward", "g, x", "torch.ops.aten._adaptive_avg_pool2d_backward(g, x)", (rnd(2, 3, 4, 3), xp))
case("adaptive_avg_pool3d_backward", "g, x", "torch.ops.aten._adaptive_avg_pool3d_backward(g, x)", (rnd(1, 2, 3, 2, 3), xp3))
for kind, k in (("reflection", 1), ("reflection", 2), ("reflection", 3), ("replication", 1), ("replication", 2), ("replication", 3)):
    xin = {1: rnd(2, 3, 5), 2: rnd(2, 3, 4, 5), 3: rnd(1, 2, 3, 4, 4)}[k]
    pad = [2, 1, 1, 2, 1, 0][: 2 * k]
    y = getattr(A, f"{kind}_pad{k}d")(xin, pad)
    case(f"{kind}_pad{k}d_backward", "g, x", f"torch.ops.aten.{kind}_pad{k}d_backward(g, x, {pad})", (rnd(*y.shape), xin))
ups = [
    ("upsample_nearest1d", [7], [2, 3, 4], ""),
    ("upsample_nearest2d", [5, 7], [2, 3, 3, 4], ""),
    ("upsample_nearest2d_scales", [5, 7], [2, 3, 3, 4], ", 1.7, 2.1"),
    ("upsample_nearest3d", [3, 5, 4], [1, 2, 2, 3, 3], ""),
    ("_upsample_nearest_exact1d", [7], [2, 3, 4], ""),
    ("_upsample_nearest_exact2d", [5, 3], [2, 3, 3, 4], ""),
    ("_upsample_nearest_exact3d", [3, 5, 4], [1, 2, 2, 3, 3], ""),
    ("upsample_linear1d", [7], [2, 3, 4], ", False"),
    ("upsample_linear1d_align", [7], [2, 3, 4], ", True"),
    ("upsample_bilinear2d", [5, 7], [2, 3, 3, 4], ", False"),
    ("upsample_bilinear2d_align", [5, 7], [2, 3, 3, 4], ", True"),
    ("upsample_bilinear2d_down", [2, 3], [1, 2, 5, 7], ", False"),
    ("upsample_bicubic2d", [5, 7], [2, 3, 3, 4], ", False"),
    ("upsample_bicubic2d_align", [5, 7], [2, 3, 3, 4], ", True, 1.5, 2.0"),
    ("upsample_trilinear3d", [3, 5, 4], [1, 2, 2, 3, 3], ", False"),
    ("_upsample_bilinear2d_aa", [2, 3], [1, 2, 5, 7], ", False"),
    ("_upsample_bicubic2d_aa", [2, 3], [1, 2, 5, 7], ", False"),
    ("_upsample_lanczos2d_aa", [2, 3], [1, 2, 5, 7], ", False"),
]
for name, osz, isz, extra in ups:
    op = name.replace("_scales", "").replace("_align", "").replace("_down", "")
    gshape = isz[:2] + osz
    case(f"{name}_backward", "g", f"torch.ops.aten.{op}_backward(g, {osz}, {isz}{extra})", (rnd(*gshape),))
case("upsample_bilinear2d_backward_bad_grad", "g", "torch.ops.aten.upsample_bilinear2d_backward(g, [4, 4], [1, 1, 2, 2], False)",
     (rnd(1, 1, 3, 3),), error=True)

# Views and index selections.
case("select_backward", "g", "torch.ops.aten.select_backward(g, [3, 4, 5], 1, -2)", (rnd(3, 5),))
case("slice_backward", "g", "torch.ops.aten.slice_backward(g, [3, 8], 1, 1, 7, 2)", (rnd(3, 3),))
case("diagonal_backward", "g", "torch.ops.aten.diagonal_backward(g, [3, 4, 5], 1, 2, 0)", (rnd(4, 2),))
case("trace_backward", "g", "torch.ops.aten.trace_backward(g, [3, 5])", (rnd(),))
case("unfold_backward", "g", "torch.ops.aten.unfold_backward(g, [3, 7], 1, 3, 2)", (rnd(3, 3, 3),))
case("index_select_backward", "g, i", "torch.ops.aten.index_select_backward(g, [4, 3], 0, i)", (rnd(5, 3), torch.tensor([0, 2, 2, 3, 0])))
case("gather_backward", "g, x, i", "torch.ops.aten.gather_backward(g, x, 1, i, False)",
     (rnd(2, 3), rnd(2, 4), torch.tensor([[0, 0, 3], [1, 2, 1]])))
xc = rnd(2, 5)
vals, ci = torch.cummax(xc, 1)
case("cummaxmin_backward", "g, x, i", "torch.ops.aten.cummaxmin_backward(g, x, i, 1)", (rnd(2, 5), xc, ci))
vm, vi = torch.max(rnd(3, 4), 1)
case("value_selecting_reduction_backward", "g, i", "torch.ops.aten.value_selecting_reduction_backward(g, 1, i, [3, 4], False)",
     (rnd(3), vi))
mk = torch.tensor([[True, False, True], [False, True, False]])
case("masked_select_backward", "g, x, m", "torch.ops.aten.masked_select_backward(g, x, m)", (rnd(3), rnd(3), mk))
case("masked_scatter_backward", "g, m", "torch.ops.aten.masked_scatter_backward(g, m, [2, 4])", (rnd(2, 3), mk))
xcp = rnd(3, 4)
case("cumprod_backward", "g, x, y", "torch.ops.aten.cumprod_backward(g, x, 1, y)", (rnd(3, 4), xcp, torch.cumprod(xcp, 1)))
case("pack_padded_sequence_backward", "g, b", "torch.ops.aten._pack_padded_sequence_backward(g, [3, 2, 2], b, False)",
     (rnd(5, 2), torch.tensor([2, 2, 1])))
case("pack_padded_sequence_backward_bf", "g, b", "torch.ops.aten._pack_padded_sequence_backward(g, [2, 3, 2], b, True)",
     (rnd(5, 2), torch.tensor([2, 2, 1])))

# Layers.
xi, wc = rnd(2, 4, 6, 5), rnd(6, 2, 3, 2)
y = torch.ops.aten.convolution(xi, wc, None, [2, 1], [1, 0], [1, 2], False, [0, 0], 2)
for mask in ([True, True, True], [True, False, True], [False, True, False]):
    m = "".join("1" if b else "0" for b in mask)
    keep = ", ".join(f"r[{i}]" for i, b in enumerate(mask) if b)
    call = f"torch.ops.aten.convolution_backward(g, x, w, [6], [2, 1], [1, 0], [1, 2], False, [0, 0], 2, {mask})"
    CASES[f"convolution_backward_{m}"] = (
        f"def f(g, x, w):\n    r = {call}\n    return {keep}\n", (rnd(*y.shape), xi, wc), False, 1e-7, 1e-9)
wt = rnd(4, 3, 3, 3)
y = torch.ops.aten.convolution(xi, wt, None, [2, 2], [1, 1], [1, 1], True, [1, 0], 1)
case("convolution_backward_transposed", "g, x, w",
     "torch.ops.aten.convolution_backward(g, x, w, [3], [2, 2], [1, 1], [1, 1], True, [1, 0], 1, [True, True, True])",
     (rnd(*y.shape), xi, wt))
xl1, wl = rnd(2, 3, 4), rnd(5, 4)
ei = torch.tensor([[0, 2, 4], [2, 1, 0]])
case("embedding_dense_backward", "g, i", "torch.ops.aten.embedding_dense_backward(g, i, 5, 1, False)", (rnd(2, 3, 4), ei))
case("embedding_dense_backward_freq", "g, i", "torch.ops.aten.embedding_dense_backward(g, i, 6, -1, True)", (rnd(2, 3, 4), ei))
case("embedding_backward", "g, i", "torch.ops.aten.embedding_backward(g, i, 5, -1, False, False)", (rnd(2, 3, 4), ei))
v, gn = rnd(4, 3), rnd(4, 1)
w, norms = torch.ops.aten._weight_norm_interface(v, gn, 0)
case("weight_norm_interface_backward", "gw, v, g, n", "torch.ops.aten._weight_norm_interface_backward(gw, v, g, n, 0)",
     (rnd(4, 3), v, gn, norms))
x1, x2 = rnd(2, 3, 4), rnd(2, 5, 4)
cd = torch.cdist(x1, x2)
case("cdist_backward", "g, a, b, d", "torch.ops.aten._cdist_backward(g, a, b, 2.0, d)", (rnd(2, 3, 5), x1, x2, cd))
xpd = rnd(4, 3)
case("pdist_backward", "g, x, d", "torch.ops.aten._pdist_backward(g, x, 2.0, d)", (rnd(6), xpd, torch.pdist(xpd)))
case("matrix_exp_backward", "x, g", "torch.ops.aten.matrix_exp_backward(x, g)", (rnd(3, 3) * 0.3, rnd(3, 3)))
xgs, grid = rnd(1, 2, 4, 5), torch.rand(1, 3, 2, 2, generator=g, dtype=torch.float64) * 2.2 - 1.1
case("grid_sampler_2d_backward", "g, x, gr", "torch.ops.aten.grid_sampler_2d_backward(g, x, gr, 0, 0, False, [True, True])",
     (rnd(1, 2, 3, 2), xgs, grid))
case("affine_grid_generator_backward", "g", "torch.ops.aten.affine_grid_generator_backward(g, [2, 3, 4, 5], False)", (rnd(2, 4, 5, 2),))
case("affine_grid_generator_backward_3d", "g", "torch.ops.aten.affine_grid_generator_backward(g, [1, 1, 2, 3, 2], True)", (rnd(1, 2, 3, 2, 3),))
xt, wtb, bt = rnd(5, 2, 3), rnd(3, 3, 4), rnd(4)
case("conv_tbc_backward", "g, x, w, b", "torch.ops.aten.conv_tbc_backward(g, x, w, b, 1)", (rnd(5, 2, 4), xt, wtb, bt))
# RNN cells (the differentiable CPU variants; the fused ones are CUDA kernels).
case("thnn_differentiable_lstm_cell_backward", "gh, gc, ig, hg, ib, hb, cx, cy",
     "torch.ops.aten._thnn_differentiable_lstm_cell_backward(gh, gc, ig, hg, ib, hb, cx, cy)",
     (rnd(3, 2), rnd(3, 2), rnd(3, 8), rnd(3, 8), rnd(8), rnd(8), rnd(3, 2), rnd(3, 2)))
case("thnn_differentiable_lstm_cell_backward_nobias", "gh, ig, hg, cx, cy",
     "torch.ops.aten._thnn_differentiable_lstm_cell_backward(gh, None, ig, hg, None, None, cx, cy)[:3]",
     (rnd(3, 2), rnd(3, 8), rnd(3, 8), rnd(3, 2), rnd(3, 2)))
case("thnn_differentiable_gru_cell_backward", "gh, ig, hg, hx, ib, hb",
     "torch.ops.aten._thnn_differentiable_gru_cell_backward(gh, ig, hg, hx, ib, hb)",
     (rnd(3, 2), rnd(3, 6), rnd(3, 6), rnd(3, 2), rnd(6), rnd(6)))
case("grid_sampler_2d_cpu_fallback_backward", "g, x, gr",
     "torch.ops.aten._grid_sampler_2d_cpu_fallback_backward(g, x, gr, 0, 1, True)",
     (rnd(1, 2, 3, 2).float(), xgs.float(), grid.float()), rtol=1e-5, atol=1e-6)
case("slow_conv2d_backward", "g, x, w",
     "torch.ops.aten._slow_conv2d_backward(g, x, w, [3, 3], [1, 1], [1, 0], [True, True, True])",
     (rnd(1, 2, 4, 2), rnd(1, 3, 4, 4), rnd(2, 3, 3, 3)))

# Normalizations.
xn = rnd(2, 3, 4)
wln, bln = rnd(3, 4), rnd(3, 4)
y, mean, rstd = torch.ops.aten.native_layer_norm(xn, [3, 4], wln, bln, 1e-5)
case("native_layer_norm_backward", "g, x, m, r, w, b",
     "torch.ops.aten.native_layer_norm_backward(g, x, [3, 4], m, r, w, b, [True, True, True])",
     (rnd(2, 3, 4), xn, mean, rstd, wln, bln))
y, mean, rstd = torch.ops.aten.native_layer_norm(xn, [4], None, None, 1e-5)
case("native_layer_norm_backward_noaffine", "g, x, m, r",
     "torch.ops.aten.native_layer_norm_backward(g, x, [4], m, r, None, None, [True, False, False])[0]",
     (rnd(2, 3, 4), xn, mean, rstd))
xbn, wbn, bbn = rnd(4, 3, 2, 2), rnd(3), rnd(3)
rm, rv = rnd(3), rnd(3).abs() + 0.5
y, sm, si = torch.ops.aten.native_batch_norm(xbn, wbn, bbn, rm.clone(), rv.clone(), True, 0.1, 1e-5)
case("native_batch_norm_backward_train", "g, x, w, rm, rv, sm, si",
     "torch.ops.aten.native_batch_norm_backward(g, x, w, rm, rv, sm, si, True, 1e-05, [True, True, True])",
     (rnd(4, 3, 2, 2), xbn, wbn, rm, rv, sm, si))
case("native_batch_norm_backward_eval", "g, x, w, rm, rv",
     "torch.ops.aten.native_batch_norm_backward(g, x, w, rm, rv, None, None, False, 1e-05, [True, True, True])",
     (rnd(4, 3, 2, 2), xbn, wbn, rm, rv))
case("batch_norm_backward", "g, x, w, rm, rv, sm, si, r",
     "torch.ops.aten.batch_norm_backward(g, x, w, rm, rv, sm, si, True, 1e-05, [True, True, True], r)",
     (rnd(4, 3, 2, 2), xbn, wbn, rm, rv, sm, si, torch.empty(0, dtype=torch.uint8)))
xgn, wgn, bgn = rnd(2, 6, 5), rnd(6), rnd(6)
y, mean, rstd = torch.ops.aten.native_group_norm(xgn, wgn, bgn, 2, 6, 5, 3, 1e-5)
case("native_group_norm_backward", "g, x, m, r, w",
     "torch.ops.aten.native_group_norm_backward(g, x, m, r, w, 2, 6, 5, 3, [True, True, True])",
     (rnd(2, 6, 5), xgn, mean, rstd, wgn))

# Forward-AD entry points on tensors without tangents.
case("unpack_dual", "x", "torch.ops.aten._unpack_dual(x, 0)[0]", (rnd(3),))
case("fw_primal", "x", "torch.ops.aten._fw_primal(x, 0)", (rnd(3),))

# Internal and composite-path backwards.
T, N, C, S = 6, 2, 5, 3
lpc = torch.log_softmax(rnd(T, N, C), 2)
tg = torch.tensor([[1, 2, 2], [3, 1, 0]])
il, tl = [6, 5], [3, 2]
nll, la = torch.ops.aten._ctc_loss(lpc, tg, il, tl, 0, False)
case("ctc_loss_backward", "g, lp, t, nll, la", f"torch.ops.aten._ctc_loss_backward(g, lp, t, {il}, {tl}, nll, la, 0, False)",
     (rnd(N), lpc, tg, nll, la))
tg1 = torch.tensor([1, 2, 2, 3, 1])
nll1, la1 = torch.ops.aten._ctc_loss(lpc, tg1, il, tl, 0, False)
case("ctc_loss_backward_1d_targets", "g, lp, t, nll, la", f"torch.ops.aten._ctc_loss_backward(g, lp, t, {il}, {tl}, nll, la, 0, True)",
     (rnd(N), lpc, tg1, nll1, la1))
wb = rnd(6, 3)
ib = torch.tensor([0, 2, 5, 2, 1, 4, 4])
ob = torch.tensor([0, 3, 3, 5])
for mode in (0, 1, 2):
    out, o2b, bsz, mx = torch.ops.aten._embedding_bag(wb, ib, ob, False, mode, False, None, False, -1)
    case(f"embedding_bag_dense_backward_m{mode}", "g, i, o2b, bs, mx",
         f"torch.ops.aten._embedding_bag_dense_backward(g, i, o2b, bs, mx, 6, False, {mode}, None, -1)",
         (rnd(*out.shape), ib, o2b, bsz, mx))
psw = rnd(7)
out, o2b, bsz, mx = torch.ops.aten._embedding_bag(wb, ib, ob, True, 0, False, psw, False, 2)
case("embedding_bag_backward_psw_freq_pad", "g, i, off, o2b, bs, mx, p",
     "torch.ops.aten._embedding_bag_backward(g, i, off, o2b, bs, mx, 6, True, 0, False, p, 2)",
     (rnd(*out.shape), ib, ob, o2b, bsz, mx, psw))
case("embedding_bag_per_sample_weights_backward", "g, w, i, off, o2b",
     "torch.ops.aten._embedding_bag_per_sample_weights_backward(g, w, i, off, o2b, 0, 2)",
     (rnd(*out.shape), wb, ib, ob, o2b))
xcd, wcd = rnd(1, 2, 5), rnd(3, 2, 2)
ycd = torch.ops.aten.convolution(xcd, wcd, None, [1], [1], [1], False, [0], 1)
case("convolution_double_backward", "ggi, ggw, ggb, go, w, x",
     "torch.ops.aten._convolution_double_backward(ggi, ggw, ggb, go, w, x, [1], [1], [1], False, [0], 1, [True, True, True])",
     (rnd(1, 2, 5), rnd(3, 2, 2), rnd(3), rnd(*ycd.shape), wcd, xcd))
CASES["convolution_double_backward_partial"] = (
    "def f(ggi, go, w, x):\n    r = torch.ops.aten._convolution_double_backward(ggi, None, None, go, w, x, [1], [1], [1], False, [0], 1, [True, True, True])\n    return r[0], r[2]\n",
    (rnd(1, 2, 5), rnd(*ycd.shape), wcd, xcd), False, 1e-7, 1e-9)
q, k, v = rnd(2, 2, 4, 3), rnd(2, 2, 5, 3), rnd(2, 2, 5, 3)
o_, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)
case("sdpa_flash_for_cpu_backward", "g, q, k, v, o, l",
     "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(g, q, k, v, o, l, 0.0, False)",
     (rnd(2, 2, 4, 3), q, k, v, o_, lse))
qc = rnd(1, 2, 4, 3)
o_, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(qc, qc, qc, 0.0, True, scale=0.3)
case("sdpa_flash_for_cpu_backward_causal", "g, q, o, l",
     "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(g, q, q, q, o, l, 0.0, True, scale=0.3)",
     (rnd(1, 2, 4, 3), qc, o_, lse))
ym = torch.softmax(rnd(2, 3, 4), 2)
case("masked_softmax_backward", "g, y, m", "torch.ops.aten._masked_softmax_backward(g, y, m)",
     (rnd(2, 3, 4), ym, torch.rand(2, 3, 4, generator=g) > 0.6))
case("masked_softmax_backward_dim", "g, y, m", "torch.ops.aten._masked_softmax_backward(g, y, m, 1)",
     (rnd(2, 3, 4), torch.softmax(rnd(2, 3, 4), 1), torch.rand(2, 3, 4, generator=g) > 0.6))
dsr = torch.tensor([1.0, 3.0, 3.0, 2.0, 5.0, -1.0], dtype=torch.float64)
lsr = torch.tensor([2, 3, 1])
for red in ("sum", "mean", "max", "min", "prod"):
    out = torch.ops.aten.segment_reduce(dsr, red, lengths=lsr)
    case(f"segment_reduce_backward_{red}", "g, o, d, l", f"torch.ops.aten._segment_reduce_backward(g, o, d, '{red}', lengths=l)",
         (rnd(3), out, dsr, lsr))
xj, ggj = rnd(2, 6), rnd(2, 3)
case("glu_backward_jvp", "gx, gg, x, dgg, dx", "torch.ops.aten.glu_backward_jvp(gx, gg, x, dgg, dx, 1)",
     (torch.ops.aten.glu_backward(ggj, xj, 1), ggj, xj, rnd(2, 3), rnd(2, 6)))
case("new_zeros_with_same_feature_meta", "a, b", "torch.ops.aten._new_zeros_with_same_feature_meta(a, b, self_num_batch_dims=1)",
     (rnd(2, 3), rnd(4, 5)))
# torch.ops.aten._backward fails inside torch's own interpreter (an undefined tensor reaches
# it); its meaning is torch.autograd.backward(y, inputs=[x]), computed here in Python.
xa, wa = rnd(2, 3).requires_grad_(True), rnd(2, 3).requires_grad_(True)
torch.autograd.backward((xa * wa).sum(), inputs=[xa])
CASES["underscore_backward_inputs"] = (
    "def f(x, w):\n    x = x.detach().requires_grad_(True)\n    w = w.detach().requires_grad_(True)\n    y = (x * w).sum()\n    torch.ops.aten._backward(y, [x], None, None, False)\n    return x.grad, w.grad is None\n",
    (xa.detach(), wa.detach()), False, 1e-7, 1e-9, (xa.grad, wa.grad is None))

# Bad arguments.
case("make_dual_outside_level", "x, t", "torch.ops.aten._make_dual(x, t, 0)", (rnd(3), rnd(3)), error=True)
case("select_backward_bad_index", "g", "torch.ops.aten.select_backward(g, [3, 4], 1, 7)", (rnd(3),), error=True)
case("max_pool2d_with_indices_backward_bad", "g, x, i",
     "torch.ops.aten.max_pool2d_with_indices_backward(g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, i)",
     (rnd(1, 1, 2, 2), rnd(1, 1, 4, 4), torch.zeros(1, 1, 3, 3, dtype=torch.long)), error=True)
case("native_layer_norm_backward_bad_shape", "g, x, m, r",
     "torch.ops.aten.native_layer_norm_backward(g, x, [5], m, r, None, None, [True, False, False])",
     (rnd(2, 4), rnd(2, 4), rnd(2, 1), rnd(2, 1)), error=True)
case("convolution_backward_bad_weight", "g, x, w",
     "torch.ops.aten.convolution_backward(g, x, w, None, [1], [0], [1], False, [0], 1, [True, True, False])",
     (rnd(1, 2, 3), rnd(1, 3, 5), rnd(2, 4, 3)), error=True)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for name, (src, inputs, error, rtol, atol, *given) in CASES.items():
        d = os.path.join(OUT, "backward__" + name)
        os.makedirs(d)
        with open(os.path.join(d, "program.py"), "w") as fh:
            fh.write(src)
        torch.save(inputs, os.path.join(d, "inputs.pt"))
        cu = torch.jit.CompilationUnit(src)
        meta = {
            "entry": "f",
            "category": "backward",
            "origin": "written",
            "expect": "error" if error else "value",
            "rtol": rtol,
            "atol": atol,
            "notes": "ATen's explicit *_backward operators called directly",
            "program": "program.py",
            "compiled_with": "torch.jit.CompilationUnit",
            "torch_version": torch.__version__.split("+")[0],
        }
        try:
            out = given[0] if given else cu.f(*inputs)
        except Exception as e:  # noqa: BLE001 - the error is the expected result
            if not error:
                shutil.rmtree(d)
                print(name, "FAILED IN TORCH:", str(e).strip().splitlines()[-1][:200])
                continue
            meta["error_stage"] = "runtime"
            first = str(e).strip().splitlines()
            msg = next((l for l in reversed(first) if l.strip() and not l.startswith(" ")), "")
            meta["torch_error"] = msg
        else:
            if error:
                raise SystemExit(f"{name}: expected an error, got {out}")
            torch.save(out, os.path.join(d, "expected.pt"))
        with open(os.path.join(d, "case.json"), "w") as fh:
            json.dump(meta, fh, indent=1)
            fh.write("\n")
        print(name, meta.get("torch_error", "ok"))


if __name__ == "__main__":
    main()
