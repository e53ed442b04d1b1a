"""A DDP training loop for `torchrun --nproc_per_node 2`: every rank must get its own trace, labelled with its rank."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(256, 256).cuda())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 256, device="cuda")
for _ in range(5):
    optimizer.zero_grad()
    model(x).square().mean().backward()
    optimizer.step()
torch.cuda.synchronize()
dist.destroy_process_group()
print(f"rank {rank} done", flush=True)
