"""The piece network (PyTorch, training only): a small CNN whose last layer is a cosine
classifier, so that an embedding's class means can stand in for its weights when adapting to
the players' own set."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

EMBED_DIM = 64
COSINE_SCALE = 16.0
MID = 6  # features[:MID] ends at the 12 x 8 maps (the second max pool)


def _conv(i: int, o: int, stride: int = 1, bn: bool = True) -> nn.Sequential:
    if not bn:  # the exported graph's form: batch norm folded into the convolution
        return nn.Sequential(nn.Conv2d(i, o, 3, stride, 1), nn.ReLU(inplace=True))
    return nn.Sequential(nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o),
                         nn.ReLU(inplace=True))


class PieceNet(nn.Module):
    """Input N x 3 x 96 x 64 (BGR, 0..1). Outputs logits (N x classes), the L2-normalised
    embedding (N x EMBED_DIM), the normalised class prototypes (classes x EMBED_DIM) and the
    pooled features of the last two stages (`pooled_features`)."""

    def __init__(self, n_classes: int, widths: tuple[int, ...] = (16, 32, 64, 96),
                 bn: bool = True):
        super().__init__()
        w1, w2, w3, w4 = widths
        self.features = nn.Sequential(
            _conv(3, w1, 2, bn),  # 48 x 32: a strided first layer keeps inference cheap
            _conv(w1, w2, 1, bn), nn.MaxPool2d(2),  # 24 x 16
            _conv(w2, w3, 1, bn), _conv(w3, w3, 1, bn), nn.MaxPool2d(2),  # 12 x 8
            _conv(w3, w4, 1, bn), _conv(w4, w4, 1, bn), nn.MaxPool2d(2),  # 6 x 4
        )
        self.embed = nn.Linear(w4, EMBED_DIM)
        self.prototypes = nn.Parameter(torch.randn(n_classes, EMBED_DIM) * 0.1)

    def forward(self, x: torch.Tensor):
        mid = self.features[:MID]((x - 0.5) * 4.0)
        top = self.features[MID:](mid)
        f = top.mean((2, 3))
        e = F.normalize(self.embed(f), dim=1)
        p = F.normalize(self.prototypes, dim=1)
        return COSINE_SCALE * e @ p.t(), e, p, pooled_features(mid, top)


def pooled_features(mid: torch.Tensor, top: torch.Tensor) -> torch.Tensor:
    """The last two stages' maps, mean and max pooled (N x 2 (w3 + w4)): what adapting to a
    players' set learns from. Trained on renders alone, the mid-level maps carry over to real
    photographs far better than the embedding (the model card's adaptation figures)."""
    return torch.cat([top.mean((2, 3)), top.amax((2, 3)), mid.mean((2, 3)), mid.amax((2, 3))], 1)


def from_onnx(path, n_classes: int) -> PieceNet:
    """A trainable net (batch norm folded, as exported) holding an exported model's weights,
    to continue training from it."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(str(path))
    init = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in m.graph.initializer}
    net = PieceNet(n_classes, bn=False)
    convs = [mod for mod in net.features.modules() if isinstance(mod, nn.Conv2d)]
    nodes = [n for n in m.graph.node if n.op_type == "Conv"]
    if len(nodes) != len(convs):
        raise ValueError(f"{path}: {len(nodes)} convolutions, expected {len(convs)}")
    with torch.no_grad():
        for conv, node in zip(convs, nodes, strict=True):
            conv.weight.copy_(init[node.input[1]])
            conv.bias.copy_(init[node.input[2]])
        net.embed.weight.copy_(init["embed.weight"])
        net.embed.bias.copy_(init["embed.bias"])
        proto = next(v for k, v in init.items() if k.startswith("prototypes"))
        net.prototypes.copy_(proto)
    return net
