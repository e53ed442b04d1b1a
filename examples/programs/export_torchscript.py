"""Exports graphcheck's built-in models, written again in Python, as TorchScript archives.

    python3 export_torchscript.py mlp|transformer|convnet OUT.pt

The architectures match engine/models.cc, so `graphcheck check OUT.pt --input ...` checks the same model as
`graphcheck check builtin:NAME`, and bench/engine_vs_pytorch.py can time PyTorch's own make_graphed_callables on the
very module graphcheck graphs.
"""
import sys

import torch
from torch import nn

INPUTS = {  # the --input spec graphcheck check needs for each
    "mlp": "x:64x1024:float32",
    "transformer": "x:128x8x256:float32",
    "convnet": "x:32x3x32x32:float32",
}


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(1024, 1024) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        return x


def transformer():
    layer = nn.TransformerEncoderLayer(256, 8, dim_feedforward=1024, dropout=0.1)
    return nn.TransformerEncoder(layer, 4, norm=nn.LayerNorm(256), enable_nested_tensor=False)


class Convnet(nn.Module):
    def __init__(self):
        super().__init__()
        blocks, channels = [], 3
        for out in (32, 64, 128):
            blocks += [nn.Conv2d(channels, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(),
                       nn.MaxPool2d(2)]
            channels = out
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(channels, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x).mean((2, 3)))


def build(name):
    return {"mlp": Mlp, "transformer": transformer, "convnet": Convnet}[name]()


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in INPUTS:
        sys.exit("usage: export_torchscript.py mlp|transformer|convnet OUT.pt")
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(build(sys.argv[1])), sys.argv[2])
    print(f"wrote {sys.argv[2]}; check it with: graphcheck check {sys.argv[2]} --input {INPUTS[sys.argv[1]]}")


if __name__ == "__main__":
    main()
