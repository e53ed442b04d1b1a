"""A clean graphed training step: warmup on a side stream, capture forward+backward+optimizer step once, replay."""
import torch
import torch.cuda.nvtx as nvtx

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
static_x = torch.randn(64, 512, device="cuda")
static_target = torch.randint(0, 10, (64,), device="cuda")


def step():
    optimizer.zero_grad(set_to_none=False)
    loss = torch.nn.functional.cross_entropy(model(static_x), static_target)
    loss.backward()
    optimizer.step()
    return loss


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        step()
torch.cuda.current_stream().wait_stream(side)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_loss = step()

for i in range(10):
    nvtx.range_push("train_step")
    static_x.copy_(torch.randn(64, 512, device="cuda"))
    graph.replay()
    nvtx.range_pop()
torch.cuda.synchronize()
print("final loss", static_loss.item())
