"""Exports the models the numerics GPU tests (tests/gpu/check_gpu_test.cc) check with `graphcheck check`, as
TorchScript archives, and prints one line per model: NAME PATH INPUT-SPEC.

    python3 export_numerics_models.py OUT_DIR

Clean models written elsewhere (torchvision's ResNet-18 and MobileNetV3-small, timm's ResNet-18) must pass the
numerics and state checks; the planted one (a step counter rebound in forward, `self.steps = self.steps + 1`) must be
flagged by state-elided. A model whose package is missing is left out, with a line on stderr.
"""
import os
import sys

import torch
from torch import nn


class StepCounterRebound(nn.Module):
    """A linear layer that counts its calls by rebinding a buffer: replays of a graph never advance it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(256, 256)
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps = self.steps + 1  # defect: buffer-rebound
        return self.fc(x)


def models():
    yield "defect-buffer-rebound", lambda: StepCounterRebound(), "x:64x256:float32"
    try:
        import torchvision

        yield "torchvision-resnet18", lambda: torchvision.models.resnet18(num_classes=10), "x:32x3x64x64:float32"
        yield ("torchvision-mobilenet-v3-small", lambda: torchvision.models.mobilenet_v3_small(num_classes=10),
               "x:32x3x64x64:float32")
    except ImportError as e:
        print(f"export_numerics_models: no torchvision ({e})", file=sys.stderr)
    try:
        import timm

        yield "timm-resnet18", lambda: timm.create_model("resnet18", num_classes=10), "x:32x3x64x64:float32"
    except ImportError as e:
        print(f"export_numerics_models: no timm ({e})", file=sys.stderr)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_numerics_models.py OUT_DIR")
    for name, build, spec in models():
        torch.manual_seed(0)
        path = os.path.join(sys.argv[1], name + ".pt")
        torch.jit.save(torch.jit.script(build()), path)
        print(name, path, spec)


if __name__ == "__main__":
    main()
