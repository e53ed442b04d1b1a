"""The shape of Megatron Core's megatron/core/transformer/cuda_graphs.py: create_cudagraphs captures each recorded
runner's graph."""
import torch


def create_cudagraphs(runners):
    for runner in runners:
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            runner()
