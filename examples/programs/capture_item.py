"""A training step whose capture fails: the loss is read with .item() inside torch.cuda.graph (a planted defect).
graphcheck run points at aten::_local_scalar_dense (Tensor.item()) inside the capture region."""
import torch
import torch.cuda.nvtx as nvtx

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 512, device="cuda")
target = torch.randint(0, 10, (64,), device="cuda")


def step():
    optimizer.zero_grad(set_to_none=False)
    loss = torch.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()  # the defect: a host sync inside the captured step


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        nvtx.range_push("train_step")
        step()
        nvtx.range_pop()
torch.cuda.current_stream().wait_stream(side)

graph = torch.cuda.CUDAGraph()
try:
    nvtx.range_push("capture")
    with torch.cuda.graph(graph):
        step()
except RuntimeError as error:
    print("capture failed:", str(error).splitlines()[0])
finally:
    nvtx.range_pop()
