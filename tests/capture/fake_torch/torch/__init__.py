"""A stand-in for torch with the shape of the parts graphcheck's Python probe hooks (torch 2.11), for
tests/capture/python_probe_test.py on machines without a GPU or torch. Nothing here touches CUDA."""
from . import cuda  # noqa: F401


def is_grad_enabled():
    return True
