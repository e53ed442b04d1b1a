"""DistributedDataParallel (NCCL, one rank, started without torchrun) whose whole training step is captured with
torch.cuda.graph, by the seeds' DDP recipe.

Covers: DDP's gradient all-reduce captured inside a CUDA graph and replayed. The recipe: DDP is constructed under a
side stream (its constructor creates the parameters' AccumulateGrad nodes, which run on the stream current at their
creation; built on the default stream they would make the captured backward touch the legacy stream); 11 eager
warmup iterations on that side stream (DDP's reducer times its first 10 iterations with CUDA events and rebuilds its
buckets at the second forward, both forbidden inside a capture); then forward, loss, backward (with the all-reduce)
and Adam(capturable=True) step captured once and replayed on new batches copied into the static tensors.

Why it is correct: the recipe above; TORCH_NCCL_ASYNC_ERROR_HANDLING=0 (unless the environment sets it) keeps NCCL's
watchdog thread from querying events during the global-mode capture; at the end the graph and the static tensors
are deleted before destroy_process_group() (a live graph holding NCCL work would block the destroy).
"""
import math
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import _oracle as oracle

NAME = "ddp_one_rank_recipe"
BATCH = 64
WARMUP = 11
STEPS = 20


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0")
    device = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=torch.device("cuda", device))

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    loss_fn = torch.nn.CrossEntropyLoss()
    batches = [(torch.randn(BATCH, 256, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]
    static_x = torch.empty(BATCH, 256, device="cuda")
    static_y = torch.empty(BATCH, dtype=torch.long, device="cuda")
    static_x.copy_(batches[0][0])
    static_y.copy_(batches[0][1])

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        ddp = DistributedDataParallel(model, device_ids=[device])
    optimizer = torch.optim.Adam(ddp.parameters(), lr=1e-3, capturable=True)

    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP):
            torch.cuda.nvtx.range_push("step")
            optimizer.zero_grad(set_to_none=True)
            warm_loss = loss_fn(ddp(static_x), static_y)
            warm_loss.backward()
            optimizer.step()
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(side)

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss

    oracle.start(model.parameters())
    if oracle.GRAPHS:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = train_step()

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        static_x.copy_(x)
        static_y.copy_(y)
        if oracle.GRAPHS:
            graph.replay()
        else:
            static_loss = train_step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = static_loss.item()
    print(f"final loss {final:.4f} after {STEPS} replays", flush=True)
    oracle.save(NAME, loss=final, parameters=model.parameters())
    # The graph holds NCCL work: free it (and what it wrote into) before the process group goes.
    if oracle.GRAPHS:
        del graph
    del static_loss, static_x, static_y
    torch.cuda.synchronize()
    dist.destroy_process_group()
    assert math.isfinite(final), final
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
