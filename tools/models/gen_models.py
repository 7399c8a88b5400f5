"""Writes the real-model test cases of tests/models/ (needs torch, torchvision, transformers and,
optionally, torchaudio; CI never runs this, it only runs the cases it wrote).

Each case is a folder in the conformance case format (see ../shared/conformance/README.md):
model.pt (a scripted, traced or frozen module saved with torch.jit.save), inputs.pt (the
positional arguments), expected.pt (what torch computes with gradients enabled, as the runner
calls it) and case.json (entry, tolerance, how it was made).

The models are the real classes of torchvision, transformers and torchaudio, built small
(reduced widths and depths, few classes, small images) so that the committed data stays small.
Random weights make weak tests, so the generator gives batch norms real running statistics
(training-mode forwards on random data), runs every model in torch after reloading it, and
refuses outputs that are all tiny or all equal.

    /work/torch-venv/bin/python tools/models/gen_models.py [--out tests/models] [--only SUBSTR]
"""

import argparse
import io
import json
import os
import shutil
import sys
import warnings
import zlib
from collections import OrderedDict

import torch
from torch import nn

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
TORCH_VERSION = torch.__version__.split("+")[0]


def _import_torchaudio():
    """torchaudio, or None. The installed torchaudio may have been built for another CUDA
    version than torch; its pure-Python models do not care, so the version check is skipped."""
    saved = torch.version.cuda
    try:
        torch.version.cuda = None
        import torchaudio  # noqa: F401

        return torchaudio
    except Exception as e:  # pragma: no cover - depends on the environment
        print("torchaudio unavailable:", e, file=sys.stderr)
        sys.modules["torchaudio"] = None
        return None
    finally:
        torch.version.cuda = saved


torchaudio = _import_torchaudio()

import torchvision  # noqa: E402
from torchvision.models import detection, segmentation  # noqa: E402
from torchvision.ops import misc as misc_ops  # noqa: E402


# ----------------------------------------------------------------------------- case writing


def _seed(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def _normalize(v, path="result"):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, torch.Tensor):
        t = v.detach()
        if t.is_quantized:
            raise ValueError("%s: quantized result" % path)
        return t.clone()
    if isinstance(v, tuple):
        return tuple(_normalize(x, "%s[%d]" % (path, i)) for i, x in enumerate(v))
    if isinstance(v, list):
        return [_normalize(x, "%s[%d]" % (path, i)) for i, x in enumerate(v)]
    if isinstance(v, dict):
        return {k: _normalize(x, "%s[%r]" % (path, k)) for k, x in v.items()}
    raise ValueError("%s: result of unsupported type %s" % (path, type(v).__name__))


def _float_tensors(v):
    if isinstance(v, torch.Tensor):
        if v.is_floating_point() and v.numel() > 0:
            yield v
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _float_tensors(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _float_tensors(x)


def _check_informative(name, out):
    """Refuses results that would let a broken implementation pass: no floating tensor, or
    every floating tensor tiny or constant."""
    ts = list(_float_tensors(out))
    if not ts:
        raise SystemExit("%s: result has no non-empty floating tensor" % name)
    ok = [t for t in ts if t.abs().max() > 1e-3 and t.numel() > 1 and (t.max() - t.min()) > 1e-4]
    if not ok:
        raise SystemExit("%s: every floating output is tiny or constant" % name)


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


class Writer:
    def __init__(self, out, only):
        self.out = out
        self.only = only
        self.written = []

    def wanted(self, name):
        return self.only is None or self.only in name

    def case(self, category, name, module, inputs, compiled_with, rtol=1e-4, atol=1e-5, entry="forward",
             notes="", check=True):
        """Saves `module` (a ScriptModule), reloads it, runs it on `inputs` twice and writes the
        case."""
        d = os.path.join(self.out, "%s__%s" % (category, name))
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        path = os.path.join(d, "model.pt")
        torch.jit.save(module, path)
        loaded = torch.jit.load(path)
        fn = getattr(loaded, entry)
        out1 = _normalize(fn(*inputs))
        out2 = _normalize(fn(*inputs))
        if not _same(out1, out2):
            raise SystemExit("%s: not deterministic" % name)
        if check:
            _check_informative(name, out1)
        torch.save(tuple(inputs), os.path.join(d, "inputs.pt"))
        torch.save(out1, os.path.join(d, "expected.pt"))
        meta = OrderedDict(
            entry=entry,
            category=category,
            origin="written",
            expect="value",
            rtol=rtol,
            atol=atol,
            notes=notes,
            program="model.pt",
            compiled_with=compiled_with,
            torch_version=TORCH_VERSION,
        )
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        size = sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
        self.written.append((d, size))
        print("wrote %-60s %8.1f KB" % (d, size / 1024.0))


SCRIPTED = "torch.jit.script(nn.Module) + torch.jit.save"
TRACED = "torch.jit.trace(nn.Module) + torch.jit.save"
FROZEN = "torch.jit.freeze(torch.jit.script(nn.Module)) + torch.jit.save"


# ----------------------------------------------------------------------------- model helpers


def calibrate_bn(model, make_input, steps=4):
    """Gives every batch norm running statistics from training-mode forwards on random data,
    then puts the model in eval mode (random statistics would make every BN an identity)."""
    has_bn = any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())
    if has_bn:
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.momentum = None  # cumulative average
        model.train()
        with torch.no_grad():
            for _ in range(steps):
                model(*make_input())
    model.eval()
    return model


def randomize_frozen_bn(model, gen):
    """FrozenBatchNorm2d (detection backbones) has fixed buffers; give them plausible values."""
    for m in model.modules():
        if isinstance(m, misc_ops.FrozenBatchNorm2d):
            n = m.weight.numel()
            m.weight.copy_(1.0 + 0.2 * torch.randn(n, generator=gen))
            m.bias.copy_(0.1 * torch.randn(n, generator=gen))
            m.running_mean.copy_(0.1 * torch.randn(n, generator=gen))
            m.running_var.copy_(1.0 + 0.5 * torch.rand(n, generator=gen))


def small_resnet(block=torchvision.models.resnet.BasicBlock, layers=(1, 1, 1, 1), width=8, num_classes=10,
                 norm_layer=None, replace_stride_with_dilation=None, groups=1, width_per_group=64):
    """torchvision's ResNet class with every stage `64 / width` times narrower."""

    class SmallResNet(torchvision.models.resnet.ResNet):
        def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
            if planes == 64:
                self.inplanes = width
            return super()._make_layer(block, planes * width // 64, blocks, stride, dilate)

    m = SmallResNet(block, list(layers), num_classes=num_classes, norm_layer=norm_layer,
                    replace_stride_with_dilation=replace_stride_with_dilation, groups=groups,
                    width_per_group=width_per_group)
    norm = norm_layer or nn.BatchNorm2d
    m.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
    m.bn1 = norm(width)
    m.fc = nn.Linear(width * 8 * block.expansion, num_classes)
    return m


def image(n, c, h, w, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, c, h, w, generator=g)


# ----------------------------------------------------------------------------- classification


def classification(w):
    tv = torchvision.models
    cases = []

    def add(name, build, size=32, rtol=1e-4, atol=1e-4, trace=False):
        cases.append((name, build, size, rtol, atol, trace))

    add("resnet_basic", lambda: small_resnet())
    add("resnet_bottleneck", lambda: small_resnet(tv.resnet.Bottleneck, (1, 2, 1, 1)))
    add("resnext", lambda: _resnext())
    add("mobilenet_v2", lambda: tv.MobileNetV2(num_classes=10, width_mult=0.25))
    add("mobilenet_v3_small", lambda: _mobilenet_v3("mobilenet_v3_small"))
    add("mobilenet_v3_large", lambda: _mobilenet_v3("mobilenet_v3_large"))
    add("efficientnet_b0", lambda: _efficientnet("efficientnet_b0"))
    add("efficientnet_v2_s", lambda: _efficientnet("efficientnet_v2_s"))
    add("convnext", lambda: _convnext())
    add("swin_t", lambda: _swin(False), size=32)
    add("swin_v2_t", lambda: _swin(True), size=32)
    add("vit", lambda: _vit())
    add("densenet", lambda: tv.DenseNet(growth_rate=8, block_config=(2, 2, 2), num_init_features=16, bn_size=2,
                                        num_classes=10))
    add("regnet_y", lambda: tv.RegNet(tv.regnet.BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0,
                                                                             group_width=8, se_ratio=0.25),
                                      num_classes=10, stem_width=8))
    add("regnet_x", lambda: tv.RegNet(tv.regnet.BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0,
                                                                             group_width=8),
                                      num_classes=10, stem_width=8))
    add("shufflenet_v2", lambda: tv.ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 64], num_classes=10))
    add("squeezenet", lambda: _squeezenet())
    add("googlenet", lambda: _googlenet(), size=64)
    add("mnasnet", lambda: tv.MNASNet(0.25, num_classes=10))
    add("alexnet_traced", lambda: _alexnet(), size=64, trace=True)
    add("resnet_traced", lambda: small_resnet(), trace=True)
    for name, build, size, rtol, atol, trace in cases:
        full = name
        if not w.wanted(full):
            continue
        torch.manual_seed(_seed(full))
        m = build()
        calibrate_bn(m, lambda: (torch.randn(4, 3, size, size),))
        x = image(2, 3, size, size, _seed(full) + 1)
        if trace:
            with torch.no_grad():
                s = torch.jit.trace(m, (x,))
            w.case("models_vision_cls", full, s, (x,), TRACED, rtol, atol)
        else:
            s = torch.jit.script(m)
            w.case("models_vision_cls", full, s, (x,), SCRIPTED, rtol, atol)


def _resnext():
    tv = torchvision.models
    return small_resnet(tv.resnet.Bottleneck, (1, 1, 1, 1), width=8, groups=4, width_per_group=16)


def _vit():
    m = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                             mlp_dim=64, num_classes=10)
    nn.init.normal_(m.heads.head.weight, std=0.2)  # torchvision zero-initializes the head
    return m


def _mobilenet_v3(arch):
    tv = torchvision.models
    setting, last = tv.mobilenetv3._mobilenet_v3_conf(arch, width_mult=0.25, reduced_tail=True)
    return tv.MobileNetV3(setting, 64, num_classes=10)


def _efficientnet(arch):
    tv = torchvision.models
    if arch == "efficientnet_b0":
        setting, last = tv.efficientnet._efficientnet_conf(arch, width_mult=0.25, depth_mult=0.25)
    else:
        setting, last = tv.efficientnet._efficientnet_conf(arch)
        setting = setting[:4]
        for s in setting:
            s.num_layers = 1
            s.input_channels = max(8, s.input_channels // 4)
            s.out_channels = max(8, s.out_channels // 4)
        for a, b in zip(setting, setting[1:]):
            b.input_channels = a.out_channels
        last = 64
    return tv.EfficientNet(setting, dropout=0.2, stochastic_depth_prob=0.2, num_classes=10, last_channel=last)


def _convnext():
    tv = torchvision.models
    C = tv.convnext.CNBlockConfig
    return tv.ConvNeXt([C(16, 32, 1), C(32, 64, 1), C(64, None, 1)], stochastic_depth_prob=0.1, num_classes=10)


def _swin(v2):
    tv = torchvision.models
    st = tv.swin_transformer
    kw = {}
    if v2:
        kw = dict(block=st.SwinTransformerBlockV2, downsample_layer=st.PatchMergingV2)
    return st.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=[4, 4],
                              stochastic_depth_prob=0.1, num_classes=10, **kw)


def _squeezenet():
    tv = torchvision.models
    sq = tv.squeezenet
    m = tv.SqueezeNet("1_1", num_classes=10)
    m.features = nn.Sequential(
        nn.Conv2d(3, 16, kernel_size=3, stride=2),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        sq.Fire(16, 4, 8, 8),
        sq.Fire(16, 4, 8, 8),
        nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        sq.Fire(16, 8, 16, 16),
    )
    m.classifier[1] = nn.Conv2d(32, 10, kernel_size=1)
    return m


def _googlenet():
    tv = torchvision.models
    gn = sys.modules["torchvision.models.googlenet"]
    m = gn.GoogLeNet(num_classes=10, aux_logits=False, init_weights=False)
    B, I = gn.BasicConv2d, gn.Inception
    m.conv1 = B(3, 8, kernel_size=7, stride=2, padding=3)
    m.conv2 = B(8, 8, kernel_size=1)
    m.conv3 = B(8, 16, kernel_size=3, padding=1)
    # in, 1x1, 3x3red, 3x3, 5x5red, 5x5, pool_proj: out = 1x1 + 3x3 + 5x5 + pool_proj
    m.inception3a = I(16, 4, 4, 8, 2, 4, 4)  # 20
    m.inception3b = I(20, 8, 4, 8, 2, 4, 4)  # 24
    m.inception4a = I(24, 8, 4, 8, 2, 4, 4)  # 24
    m.inception4b = I(24, 8, 4, 8, 2, 4, 4)
    m.inception4c = I(24, 8, 4, 8, 2, 4, 4)
    m.inception4d = I(24, 8, 4, 8, 2, 4, 4)
    m.inception4e = I(24, 8, 4, 8, 2, 4, 4)
    m.inception5a = I(24, 8, 4, 8, 2, 4, 4)
    m.inception5b = I(24, 8, 4, 8, 2, 4, 4)
    m.fc = nn.Linear(24, 10)
    return m


def _alexnet():
    m = torchvision.models.AlexNet(num_classes=10)
    m.features = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
        nn.MaxPool2d(kernel_size=3, stride=2), nn.Conv2d(8, 16, kernel_size=5, padding=2), nn.ReLU(inplace=True),
        nn.MaxPool2d(kernel_size=3, stride=2),
    )
    m.classifier = nn.Sequential(nn.Dropout(), nn.Linear(16 * 36, 32), nn.ReLU(inplace=True), nn.Linear(32, 10))
    return m


# ----------------------------------------------------------------------------- detection / segmentation


def _fpn_backbone(extra_blocks=None, returned=(1, 2, 3), out_channels=16, width=8):
    from torchvision.models.detection.backbone_utils import BackboneWithFPN

    body = small_resnet(width=width, norm_layer=misc_ops.FrozenBatchNorm2d)
    return_layers = {"layer%d" % (i + 1): str(k) for k, i in enumerate(returned)}
    in_channels = [width * (2 ** i) for i in returned]
    return BackboneWithFPN(body, return_layers, in_channels, out_channels, extra_blocks=extra_blocks)


def _det_kw():
    return dict(min_size=64, max_size=96, image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])


def detection_models(w):
    from torchvision.models.detection import anchor_utils, faster_rcnn, mask_rcnn, keypoint_rcnn, retinanet, fcos, ssd
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7

    def rcnn_parts():
        anchor = anchor_utils.AnchorGenerator(((16,), (32,), (64,), (128,)), ((0.5, 1.0, 2.0),) * 4)
        return dict(
            rpn_anchor_generator=anchor,
            box_head=faster_rcnn.TwoMLPHead(16 * 7 * 7, 32),
            box_predictor=faster_rcnn.FastRCNNPredictor(32, 3),
            box_score_thresh=0.0,
            rpn_pre_nms_top_n_test=50,
            rpn_post_nms_top_n_test=20,
            box_detections_per_img=10,
        )

    def fasterrcnn():
        return faster_rcnn.FasterRCNN(_fpn_backbone(), **rcnn_parts(), **_det_kw())

    def maskrcnn():
        return mask_rcnn.MaskRCNN(_fpn_backbone(), **rcnn_parts(), mask_head=mask_rcnn.MaskRCNNHeads(16, [16, 16], 1),
                                  mask_predictor=mask_rcnn.MaskRCNNPredictor(16, 16, 3), **_det_kw())

    def keypointrcnn():
        return keypoint_rcnn.KeypointRCNN(
            _fpn_backbone(), **rcnn_parts(),
            keypoint_head=keypoint_rcnn.KeypointRCNNHeads(16, [16, 16]),
            keypoint_predictor=keypoint_rcnn.KeypointRCNNPredictor(16, 5), **_det_kw())

    def fasterrcnn_mobilenet():
        # What torchvision's _mobilenet_extractor builds, with 16 FPN channels instead of 256.
        from torchvision.models.detection.backbone_utils import BackboneWithFPN

        feats = torchvision.models.mobilenet_v3_large(width_mult=0.25, norm_layer=misc_ops.FrozenBatchNorm2d).features
        stage = [0] + [i for i, b in enumerate(feats) if getattr(b, "_is_cn", False)] + [len(feats) - 1]
        returned = [len(stage) - 2, len(stage) - 1]
        backbone = BackboneWithFPN(feats, {str(stage[k]): str(v) for v, k in enumerate(returned)},
                                   [feats[stage[i]].out_channels for i in returned], 16)
        anchor = anchor_utils.AnchorGenerator(((16, 32, 64),) * 3, ((0.5, 1.0, 2.0),) * 3)
        parts = rcnn_parts()
        parts["rpn_anchor_generator"] = anchor
        return faster_rcnn.FasterRCNN(backbone, **parts, **_det_kw())

    def retina():
        backbone = _fpn_backbone(extra_blocks=LastLevelP6P7(16, 16), returned=(2, 3))
        anchor = anchor_utils.AnchorGenerator(tuple((x, x * 2) for x in [16, 32, 64, 128]),
                                              ((0.5, 1.0, 2.0),) * 4)
        head = retinanet.RetinaNetHead(16, anchor.num_anchors_per_location()[0], 3)
        with torch.no_grad():
            # torchvision's init (std 0.01, prior-probability bias) scores every anchor 0.01 to
            # within float32 rounding, which would make the detections' order rounding noise.
            for mod in head.classification_head.modules():
                if isinstance(mod, nn.Conv2d):
                    nn.init.kaiming_normal_(mod.weight)
        return retinanet.RetinaNet(backbone, 3, anchor_generator=anchor, head=head, score_thresh=0.0,
                                   detections_per_img=10, topk_candidates=50, **_det_kw())

    def fcos_model():
        # FCOS's head normalizes with 32 groups: 32 FPN channels.
        backbone = _fpn_backbone(extra_blocks=LastLevelP6P7(32, 32), returned=(2, 3), out_channels=32)
        anchor = anchor_utils.AnchorGenerator(((8,), (16,), (32,), (64,)), ((1.0,),) * 4)
        head = fcos.FCOSHead(32, 1, 3, num_convs=1)
        return fcos.FCOS(backbone, 3, anchor_generator=anchor, head=head, score_thresh=0.0, detections_per_img=10,
                         topk_candidates=50, **_det_kw())

    def ssd_model():
        class Features(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 16, 3, 2, 1),
                                       nn.ReLU())
                self.b = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())

            def forward(self, x):
                a = self.a(x)
                return OrderedDict([("0", a), ("1", self.b(a))])

        anchor = anchor_utils.DefaultBoxGenerator([[2], [2, 3]])
        return ssd.SSD(Features(), anchor, (64, 64), 3, score_thresh=0.0, detections_per_img=10, topk_candidates=50)

    def ssdlite():
        # ssdlite320_mobilenet_v3_large's construction, with narrow extra layers and 96x96 images.
        from functools import partial

        from torchvision.models.detection import ssdlite as sl

        norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.03)
        feats = torchvision.models.mobilenet_v3_large(width_mult=0.25, norm_layer=norm, reduced_tail=True).features
        stage = [0] + [i for i, b in enumerate(feats) if getattr(b, "_is_cn", False)] + [len(feats) - 1]
        backbone = sl.SSDLiteFeatureExtractorMobileNet(feats, stage[-2], norm, width_mult=0.25)
        size = (96, 96)
        anchor = anchor_utils.DefaultBoxGenerator([[2, 3] for _ in range(6)], min_ratio=0.2, max_ratio=0.95)
        out_channels = detection._utils.retrieve_out_channels(backbone, size)
        head = sl.SSDLiteHead(out_channels, anchor.num_anchors_per_location(), 3, norm)
        return ssd.SSD(backbone, anchor, size, 3, head=head, score_thresh=0.0, detections_per_img=10,
                       topk_candidates=50, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])

    builds = [
        ("fasterrcnn_resnet_fpn", fasterrcnn, 64),
        ("fasterrcnn_mobilenet_v3_fpn", fasterrcnn_mobilenet, 64),
        ("maskrcnn_resnet_fpn", maskrcnn, 64),
        ("keypointrcnn_resnet_fpn", keypointrcnn, 64),
        ("retinanet_resnet_fpn", retina, 64),
        ("fcos_resnet_fpn", fcos_model, 64),
        ("ssd", ssd_model, 64),
        ("ssdlite_mobilenet_v3", ssdlite, 96),
    ]
    for name, build, size in builds:
        if not w.wanted(name):
            continue
        torch.manual_seed(_seed(name))
        m = build()
        randomize_frozen_bn(m, torch.Generator().manual_seed(_seed(name) + 7))
        calibrate_bn(m.backbone, lambda: (torch.rand(2, 3, size, size),))
        m.eval()
        imgs = [image(1, 3, size, size, _seed(name) + 1)[0], image(1, 3, size - 8, size + 8, _seed(name) + 2)[0]]
        s = torch.jit.script(m)
        w.case("models_detection", name, s, (imgs,), SCRIPTED, rtol=1e-3, atol=1e-3,
               notes="forward returns (losses, detections); score threshold 0 so detections are never empty")


def segmentation_models(w):
    from torchvision.models._utils import IntermediateLayerGetter
    from torchvision.models.segmentation import deeplabv3, fcn, lraspp

    def dilated_resnet():
        return small_resnet(torchvision.models.resnet.Bottleneck, (1, 1, 1, 1), width=8,
                            replace_stride_with_dilation=[False, True, True])

    def deeplab():
        body = IntermediateLayerGetter(dilated_resnet(), {"layer4": "out", "layer3": "aux"})
        head = nn.Sequential(deeplabv3.ASPP(256, [2, 4, 6], out_channels=16), nn.Conv2d(16, 16, 3, padding=1,
                                                                                         bias=False),
                             nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 4, 1))
        return deeplabv3.DeepLabV3(body, head, fcn.FCNHead(128, 4))

    def fcn_model():
        body = IntermediateLayerGetter(dilated_resnet(), {"layer4": "out"})
        return fcn.FCN(body, fcn.FCNHead(256, 4), None)

    def lraspp_model():
        mb = torchvision.models.mobilenet_v3_large(width_mult=0.25, dilated=True)
        feats = mb.features
        stage = [0] + [i for i, b in enumerate(feats) if getattr(b, "_is_cn", False)] + [len(feats) - 1]
        low, high = stage[-4], stage[-1]
        body = IntermediateLayerGetter(feats, {str(low): "low", str(high): "high"})
        return lraspp.LRASPP(body, feats[low].out_channels, feats[high].out_channels, 4, inter_channels=16)

    for name, build in [("deeplabv3_resnet", deeplab), ("fcn_resnet", fcn_model),
                        ("lraspp_mobilenet_v3", lraspp_model)]:
        if not w.wanted(name):
            continue
        torch.manual_seed(_seed(name))
        m = build()
        calibrate_bn(m, lambda: (torch.rand(2, 3, 48, 48),))
        x = image(1, 3, 48, 40, _seed(name) + 1)
        s = torch.jit.script(m)
        w.case("models_segmentation", name, s, (x,), SCRIPTED, rtol=1e-3, atol=1e-4)


# ----------------------------------------------------------------------------- transformers


class HFWrapper(nn.Module):
    """Calls a transformers model with keyword arguments (positional orders differ between
    models) and without a cache."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        kw = {"use_cache": False} if "use_cache" in self.model.config.to_dict() else {}
        return self.model(input_ids=input_ids, attention_mask=attention_mask, **kw)


def transformers_models(w):
    sys.modules.setdefault("torchaudio", None) if torchaudio is None else None
    import transformers as hf

    def ids(seed, n=2, length=8, vocab=100):
        g = torch.Generator().manual_seed(seed)
        return torch.randint(0, vocab, (n, length), generator=g)

    def mask(n=2, length=8):
        m = torch.ones(n, length, dtype=torch.long)
        m[1, length - 3:] = 0
        return m

    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    builds = [
        ("bert", lambda: hf.BertModel(hf.BertConfig(vocab_size=100, max_position_embeddings=64, **small,
                                                    torchscript=True)), True),
        ("distilbert", lambda: hf.DistilBertModel(hf.DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2,
                                                                      hidden_dim=64, max_position_embeddings=64,
                                                                      torchscript=True)), True),
        ("gpt2", lambda: hf.GPT2Model(hf.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64,
                                                    torchscript=True)), True),
        ("t5_encoder", lambda: hf.T5EncoderModel(hf.T5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64,
                                                             num_layers=2, num_heads=2, torchscript=True)), True),
    ]
    for name, build, with_mask in builds:
        if not w.wanted(name):
            continue
        torch.manual_seed(_seed(name))
        m = HFWrapper(build().eval())
        x = ids(_seed(name))
        args = (x, mask()) if with_mask else (x,)
        with torch.no_grad():
            s = torch.jit.trace(m, args, strict=False)
        w.case("models_transformers", name, s, args, TRACED, rtol=1e-4, atol=1e-4)
    if w.wanted("vit_hf"):
        torch.manual_seed(_seed("vit_hf"))
        m = hf.ViTModel(hf.ViTConfig(image_size=32, patch_size=8, num_channels=3, **small, torchscript=True)).eval()
        x = image(2, 3, 32, 32, 5)
        with torch.no_grad():
            s = torch.jit.trace(m, (x,), strict=False)
        w.case("models_transformers", "vit_hf", s, (x,), TRACED, rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- torchaudio


def audio_models(w):
    if torchaudio is None:
        print("skipping torchaudio models: torchaudio does not import", file=sys.stderr)
        return
    from torchaudio import models as am
    from torchaudio import transforms as T

    g = torch.Generator().manual_seed(3)
    if w.wanted("melspectrogram"):
        m = T.MelSpectrogram(sample_rate=8000, n_fft=64, hop_length=16, n_mels=8)
        x = torch.randn(2, 400, generator=g)
        w.case("models_audio", "melspectrogram", torch.jit.script(m), (x,), SCRIPTED, rtol=1e-4, atol=1e-4)
    if w.wanted("wav2vec2"):
        torch.manual_seed(11)
        m = am.wav2vec2_model(
            extractor_mode="group_norm", extractor_conv_layer_config=[(8, 10, 5), (8, 3, 2), (8, 2, 2)],
            extractor_conv_bias=False, encoder_embed_dim=16, encoder_projection_dropout=0.0,
            encoder_pos_conv_kernel=8, encoder_pos_conv_groups=4, encoder_num_layers=2, encoder_num_heads=2,
            encoder_attention_dropout=0.0, encoder_ff_interm_features=32, encoder_ff_interm_dropout=0.0,
            encoder_dropout=0.0, encoder_layer_norm_first=False, encoder_layer_drop=0.0, aux_num_out=5).eval()
        x = torch.randn(2, 800, generator=g)
        lengths = torch.tensor([800, 600])
        w.case("models_audio", "wav2vec2", torch.jit.script(m), (x, lengths), SCRIPTED, rtol=1e-3, atol=1e-4)
    if w.wanted("conformer"):
        torch.manual_seed(12)
        m = am.Conformer(input_dim=16, num_heads=2, ffn_dim=32, num_layers=2, depthwise_conv_kernel_size=3)
        calibrate_bn(m, lambda: (torch.randn(2, 10, 16), torch.tensor([10, 10])))
        x = torch.randn(2, 10, 16, generator=g)
        w.case("models_audio", "conformer", torch.jit.script(m), (x, torch.tensor([10, 7])), SCRIPTED, rtol=1e-3,
               atol=1e-4)
    if w.wanted("emformer"):
        torch.manual_seed(13)
        m = am.Emformer(input_dim=16, num_heads=2, ffn_dim=32, num_layers=2, segment_length=4,
                        right_context_length=1).eval()
        x = torch.randn(2, 13, 16, generator=g)
        w.case("models_audio", "emformer", torch.jit.script(m), (x, torch.tensor([13, 9])), SCRIPTED, rtol=1e-3,
               atol=1e-4)


# ----------------------------------------------------------------------------- nn blocks, frozen


class EncoderWithMask(nn.Module):
    def __init__(self, enc):
        super().__init__()
        self.enc = enc

    def forward(self, x, pad: torch.Tensor):
        return self.enc(x, src_key_padding_mask=pad)


class MHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, q, k, pad: torch.Tensor):
        out, w = self.attn(q, k, k, key_padding_mask=pad)
        return out, w


class RNN(nn.Module):
    """A scripted nn.LSTM has forward overloads but no `forward` method of its own to call."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)


def nn_blocks(w):
    g = torch.Generator().manual_seed(4)
    if w.wanted("lstm"):
        torch.manual_seed(21)
        m = nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True).eval()
        x = torch.randn(2, 5, 8, generator=g)
        w.case("models_nn", "lstm", torch.jit.script(RNN(m)), (x,), SCRIPTED)
    if w.wanted("gru"):
        torch.manual_seed(22)
        m = nn.GRU(8, 16, num_layers=2).eval()
        x = torch.randn(5, 2, 8, generator=g)
        w.case("models_nn", "gru", torch.jit.script(RNN(m)), (x,), SCRIPTED)

    def encoder(norm_first=False):
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=norm_first)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).eval()

    x = torch.randn(2, 6, 16, generator=g)
    pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    if w.wanted("transformer_encoder"):
        torch.manual_seed(23)
        w.case("models_nn", "transformer_encoder", torch.jit.script(encoder()), (x,), SCRIPTED)
    if w.wanted("transformer_encoder_mask"):
        torch.manual_seed(24)
        w.case("models_nn", "transformer_encoder_mask", torch.jit.script(EncoderWithMask(encoder())), (x, pad),
               SCRIPTED, notes="parameters require grad: the slow path")
    for norm_first in (False, True):
        name = "transformer_encoder_fastpath" + ("_norm_first" if norm_first else "")
        if not w.wanted(name):
            continue
        torch.manual_seed(25 + norm_first)
        m = EncoderWithMask(encoder(norm_first))
        for p in m.parameters():
            p.requires_grad_(False)
        w.case("models_nn", name, torch.jit.script(m), (x, pad), SCRIPTED,
               notes="no parameter requires grad: the fast path (nested tensor from the padding mask)")
        name = name.replace("fastpath", "traced_fastpath")
        if w.wanted(name):
            with torch.no_grad():
                t = torch.jit.trace(m, (x, pad))
            w.case("models_nn", name, t, (x, pad), TRACED,
                   notes="traced without grad: _nested_tensor_from_mask, _transformer_encoder_layer_fwd")
    if w.wanted("multihead_attention"):
        torch.manual_seed(27)
        q = torch.randn(2, 4, 16, generator=g)
        k = torch.randn(2, 6, 16, generator=g)
        w.case("models_nn", "multihead_attention", torch.jit.script(MHA().eval()), (q, k, pad), SCRIPTED)
    if w.wanted("multihead_attention_fastpath"):
        torch.manual_seed(28)
        m = MHA().eval()
        for p in m.parameters():
            p.requires_grad_(False)
        q = torch.randn(2, 6, 16, generator=g)
        w.case("models_nn", "multihead_attention_fastpath", torch.jit.script(m), (q, q, pad), SCRIPTED,
               notes="self-attention without grad: _native_multi_head_attention")
    if w.wanted("frozen_resnet"):
        torch.manual_seed(29)
        m = calibrate_bn(small_resnet(), lambda: (torch.randn(4, 3, 32, 32),))
        f = torch.jit.freeze(torch.jit.script(m))
        w.case("models_frozen", "frozen_resnet", f, (image(2, 3, 32, 32, 1),), FROZEN)
    if w.wanted("frozen_mobilenet_v2"):
        torch.manual_seed(30)
        m = calibrate_bn(torchvision.models.MobileNetV2(num_classes=10, width_mult=0.25),
                         lambda: (torch.randn(4, 3, 32, 32),))
        f = torch.jit.freeze(torch.jit.script(m))
        w.case("models_frozen", "frozen_mobilenet_v2", f, (image(2, 3, 32, 32, 2),), FROZEN)
    if w.wanted("frozen_transformer_encoder"):
        torch.manual_seed(31)
        f = torch.jit.freeze(torch.jit.script(EncoderWithMask(encoder()).eval()))
        w.case("models_frozen", "frozen_transformer_encoder", f, (x, pad), FROZEN)


# ----------------------------------------------------------------------------- quantized


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        q = torch.ao.quantization
        self.quant = q.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.skip = nn.quantized.FloatFunctional()
        self.avg = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)
        self.dequant = q.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.bn1(self.conv1(x)))
        y = self.relu2(self.conv2(x))
        x = self.skip.add(x, y)
        x = self.pool(x)
        x = self.avg(x).flatten(1)
        return self.dequant(self.fc(x))


class LinearStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.out(y)


def quantized_models(w):
    q = torch.ao.quantization
    torch.backends.quantized.engine = "fbgemm"
    g = torch.Generator().manual_seed(5)
    if w.wanted("quant_static_cnn"):
        torch.manual_seed(41)
        m = calibrate_bn(SmallCNN(), lambda: (torch.randn(4, 3, 16, 16),))
        m = q.fuse_modules(m, [["conv1", "bn1", "relu1"], ["conv2", "relu2"]])
        m.qconfig = q.get_default_qconfig("fbgemm")
        q.prepare(m, inplace=True)
        for _ in range(4):
            m(torch.randn(4, 3, 16, 16))
        q.convert(m, inplace=True)
        x = torch.randn(2, 3, 16, 16, generator=g)
        w.case("models_quantized", "quant_static_cnn", torch.jit.script(m), (x,), SCRIPTED, rtol=1e-4, atol=1e-4)
    for arch in ("mobilenet_v2", "mobilenet_v3_large"):
        name = "quant_static_" + arch
        if not w.wanted(name):
            continue
        torch.manual_seed(_seed(name))
        from torchvision.models import quantization as tq

        if arch == "mobilenet_v2":
            m = tq.QuantizableMobileNetV2(num_classes=10, width_mult=0.25, block=tq.mobilenetv2.QuantizableInvertedResidual)
        else:
            setting, last = torchvision.models.mobilenetv3._mobilenet_v3_conf(arch, width_mult=0.25, reduced_tail=True)
            m = tq.QuantizableMobileNetV3(setting, 64, num_classes=10, block=tq.mobilenetv3.QuantizableInvertedResidual)
        tq.utils._replace_relu(m)  # as torchvision's quantizable builders do
        calibrate_bn(m, lambda: (torch.randn(4, 3, 32, 32),))
        m.fuse_model()
        m.qconfig = q.get_default_qconfig("fbgemm")
        q.prepare(m, inplace=True)
        for _ in range(4):
            m(torch.randn(4, 3, 32, 32))
        q.convert(m, inplace=True)
        x = torch.randn(2, 3, 32, 32, generator=g)
        w.case("models_quantized", name, torch.jit.script(m), (x,), SCRIPTED, rtol=1e-4, atol=1e-4)
    if w.wanted("quant_dynamic_linear"):
        torch.manual_seed(43)
        m = q.quantize_dynamic(LinearStack().eval(), {nn.Linear}, dtype=torch.qint8)
        x = torch.randn(3, 16, generator=g)
        w.case("models_quantized", "quant_dynamic_linear", torch.jit.script(m), (x,), SCRIPTED, rtol=1e-4, atol=1e-4)
    if w.wanted("quant_dynamic_lstm"):
        torch.manual_seed(44)
        m = q.quantize_dynamic(LSTMTagger().eval(), {nn.LSTM, nn.Linear}, dtype=torch.qint8)
        x = torch.randn(2, 5, 8, generator=g)
        w.case("models_quantized", "quant_dynamic_lstm", torch.jit.script(m), (x,), SCRIPTED, rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- main

GROUPS = [classification, detection_models, segmentation_models, transformers_models, audio_models, nn_blocks,
          quantized_models]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "models"))
    ap.add_argument("--only", default=None, help="only cases whose name contains this")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    w = Writer(os.path.abspath(args.out), args.only)
    for group in GROUPS:
        group(w)
    total = sum(s for _, s in w.written)
    print("%d cases, %.1f MB" % (len(w.written), total / 1e6))


if __name__ == "__main__":
    main()
