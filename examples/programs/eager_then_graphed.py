"""Eager steps, then the same training step captured once and replayed: every step in an NVTX range 'train_step', so
graphcheck measures eager and graphed steps of one program side by side (graphed.speedup) and the HTML report draws
one of each on its timeline."""
import torch
import torch.cuda.nvtx as nvtx

torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU()) for _ in range(8)],
                            torch.nn.Linear(256, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
static_x = torch.randn(32, 256, device="cuda")
static_target = torch.randint(0, 10, (32,), device="cuda")


def step():
    optimizer.zero_grad(set_to_none=False)
    loss = torch.nn.functional.cross_entropy(model(static_x), static_target)
    loss.backward()
    optimizer.step()
    return loss


for _ in range(12):  # eager steps, the first ones warm up
    nvtx.range_push("train_step")
    static_x.copy_(torch.randn(32, 256, device="cuda"))
    step()
    nvtx.range_pop()
torch.cuda.synchronize()

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        step()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_loss = step()

for _ in range(12):  # graphed steps
    nvtx.range_push("train_step")
    static_x.copy_(torch.randn(32, 256, device="cuda"))
    graph.replay()
    nvtx.range_pop()
torch.cuda.synchronize()
print("final loss", static_loss.item())
