"""Two or more ranks that may share one GPU (gloo only for rendezvous and the barrier, so no NCCL rule forbids two
ranks on one device): every rank captures a matmul; with DIVERGE=1 (the default) rank 1 also captures a ReLU, so its
graph holds one kernel node more. For recorder_gpu_test's rank-divergent-capture test, under torchrun."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
x = torch.randn(1024, 1024, device="cuda")
w = torch.randn(1024, 1024, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        y = x @ w
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    y = x @ w
    if rank == 1 and os.environ.get("DIVERGE", "1") == "1":
        y = y.relu()
for _ in range(20):
    graph.replay()
torch.cuda.synchronize()
dist.barrier()
dist.destroy_process_group()
print("rank %d done" % rank, flush=True)
