"""Writes crates/ts-torchvision/tests/data/fixtures.json: inputs and torchvision's outputs for
its operators (needs torch + torchvision; the Rust tests only read the JSON).

    /work/torch-venv/bin/python tools/models/gen_torchvision_fixtures.py
"""

import json
import os

import torch
import torchvision  # noqa: F401  (registers torch.ops.torchvision)

ops = torch.ops.torchvision
g = torch.Generator().manual_seed(0)


def t(x):
    # float32 values round-trip through 9 significant digits; float64 needs repr's 17.
    short = x.dtype == torch.float32
    data = [float("%.9g" % v) if short else float(v) for v in x.flatten().tolist()]
    return {"dtype": str(x.dtype).replace("torch.", ""), "shape": list(x.shape), "data": data}


def boxes(n, size=32.0, dtype=torch.float32):
    xy = torch.rand(n, 2, generator=g) * size
    wh = torch.rand(n, 2, generator=g) * size / 2 + 1
    return torch.cat([xy, xy + wh], 1).to(dtype)


def rois(k, batches, size, dtype=torch.float32):
    b = boxes(k, size, dtype)
    idx = torch.randint(0, batches, (k, 1), generator=g).to(dtype)
    return torch.cat([idx, b], 1)


cases = []


def case(op, args, out):
    outs = out if isinstance(out, tuple) else (out,)
    enc = []
    for a in args:
        enc.append(t(a) if isinstance(a, torch.Tensor) else a)
    cases.append({"op": op, "args": enc, "outputs": [t(o) for o in outs]})


for dtype in (torch.float32, torch.float64):
    b = boxes(40, dtype=dtype)
    s = torch.rand(40, generator=g).to(dtype)
    for thr in (0.3, 0.5, 0.7):
        case("nms", [b, s, thr], ops.nms(b, s, thr))
    x = torch.randn(2, 6, 12, 10, generator=g).to(dtype)
    r = rois(7, 2, 40.0, dtype)
    r[0, 1:] = torch.tensor([-3.0, -2.0, 60.0, 50.0], dtype=dtype)  # partly outside
    r[1, 1:] = torch.tensor([5.0, 5.0, 5.2, 5.1], dtype=dtype)  # tiny
    for aligned in (False, True):
        for sr in (-1, 0, 2):
            case("roi_align", [x, r, 0.25, 3, 2, sr, aligned], ops.roi_align(x, r, 0.25, 3, 2, sr, aligned))
    case("roi_align", [x, r, 0.5, 4, 4, 2, False], ops.roi_align(x, r, 0.5, 4, 4, 2, False))
    case("ps_roi_align", [x, r, 0.25, 2, 3, 2], ops.ps_roi_align(x, r, 0.25, 2, 3, 2))
    case("ps_roi_align", [x, r, 0.5, 1, 2, -1], ops.ps_roi_align(x, r, 0.5, 1, 2, -1))
    case("roi_pool", [x, r, 0.25, 3, 2], ops.roi_pool(x, r, 0.25, 3, 2))
    case("roi_pool", [x, r, 0.5, 4, 4], ops.roi_pool(x, r, 0.5, 4, 4))
    case("ps_roi_pool", [x, r, 0.25, 2, 3], ops.ps_roi_pool(x, r, 0.25, 2, 3))
    case("ps_roi_pool", [x, r, 0.5, 1, 2], ops.ps_roi_pool(x, r, 0.5, 1, 2))
    # deform_conv2d: 2 weight groups, 2 offset groups, with and without mask
    inp = torch.randn(2, 4, 7, 6, generator=g).to(dtype)
    w = torch.randn(6, 2, 3, 3, generator=g).to(dtype)
    bias = torch.randn(6, generator=g).to(dtype)
    off = (torch.randn(2, 2 * 2 * 9, 3, 3, generator=g) * 2).to(dtype)
    mask = torch.rand(2, 2 * 9, 3, 3, generator=g).to(dtype)
    args = [1, 2, 0, 1, 2, 1, 2, 2]  # stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups
    for use_mask in (False, True):
        case("deform_conv2d", [inp, w, off, mask, bias] + args + [use_mask],
             ops.deform_conv2d(inp, w, off, mask, bias, *args, use_mask))
    rb1 = torch.cat([torch.rand(6, 2, generator=g) * 10, torch.rand(6, 2, generator=g) * 6 + 1,
                     torch.rand(6, 1, generator=g) * 180 - 90], 1).to(dtype)
    rb2 = torch.cat([torch.rand(5, 2, generator=g) * 10, torch.rand(5, 2, generator=g) * 6 + 1,
                     torch.rand(5, 1, generator=g) * 180 - 90], 1).to(dtype)
    rb2[0] = rb1[0]  # identical boxes
    rb2[1] = rb1[1].clone()
    rb2[1, 4] += 90.0  # same box turned by 90 degrees
    case("box_iou_rotated", [rb1, rb2], ops.box_iou_rotated(rb1, rb2))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "crates", "ts-torchvision", "tests",
                   "data", "fixtures.json")
with open(out, "w") as f:
    json.dump({"torchvision": torchvision.__version__, "cases": cases}, f)
print("wrote %d cases to %s (%d bytes)" % (len(cases), out, os.path.getsize(out)))
