"""PyTorch programs whose graphs capture fine and then train wrong, each with a clean twin, for the replay audit's GPU
tests (tests/gpu/python_probe_gpu_test.cc), one per mode (argv[1]). Lines the tests expect a finding at end in
"# defect: MODE".

  frozen-lr        whole step captured with Adam(capturable=True) and a float lr; a StepLR lowers it between replays
  tensor-lr        clean: the same with lr a CUDA tensor (the scheduler updates it in place)
  grads-none       forward and backward captured, SGD stepping eagerly, zero_grad() (set_to_none) between replays
  grads-zeroed     clean: the same with zero_grad(set_to_none=False)
  last-batch       make_graphed_callables on a batch of 32; the DataLoader keeps a last batch of 8 (dies in torch)
  drop-last        clean: the same with drop_last=True
  batch-of-one     the graphed module called on a batch of 1, which PyTorch broadcasts into the static input
  host-rand        a graphed forward that draws a noise scale on the CPU generator (run with --shadow)
  cuda-rand        clean: the same noise drawn on the GPU (run with --shadow: compared, and equal)
  region-scale     whole step `with torch.cuda.graph(g): train_step()` whose loss reads a Python global the program
                   changes every step (run with --shadow)
  region-clean     clean: the same step without the global (run with --shadow: compared, and equal)
  region-two       clean: the same capture with a body of two statements (run with --shadow: compared, and equal)
  region-pg        clean: region-clean with a process group initialized (gloo, one rank): --shadow says in a note that
                   it did not compare the replays (the body may issue collectives)
"""
import sys

import torch
import torch.cuda.nvtx as nvtx


def side_stream_warmup(fn, iterations=3):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda()


def whole_step(tensor_lr, steps=12):
    model = mlp()
    lr = torch.tensor(0.01, device="cuda") if tensor_lr else 0.01
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, capturable=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.01)
    static_x = torch.randn(32, 64, device="cuda")
    static_y = torch.randn(32, 8, device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss

    side_stream_warmup(step)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = step()
    for i in range(steps):
        nvtx.range_push("step")
        static_x.copy_(torch.randn(32, 64, device="cuda"))
        graph.replay()
        if tensor_lr:
            scheduler.step()
        else:
            scheduler.step()  # defect: frozen-lr
        nvtx.range_pop()
    torch.cuda.synchronize()
    print("loss", float(static_loss), "lr", float(optimizer.param_groups[0]["lr"]), flush=True)


def forward_backward(set_to_none, steps=10):
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    static_x = torch.randn(32, 64, device="cuda")
    side_stream_warmup(lambda: model(static_x).square().mean().backward())
    model.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = model(static_x).square().mean()
        static_loss.backward()
    for _ in range(steps):
        nvtx.range_push("step")
        static_x.copy_(torch.randn(32, 64, device="cuda"))
        graph.replay()
        optimizer.step()
        if set_to_none:
            optimizer.zero_grad()  # defect: grads-none
        else:
            optimizer.zero_grad(set_to_none=False)
        nvtx.range_pop()
    torch.cuda.synchronize()
    print("loss", float(static_loss), flush=True)


def graphed_loader(drop_last, batch_of_one=False):
    model = mlp()
    graphed = torch.cuda.make_graphed_callables(model, (torch.randn(32, 64, device="cuda"),))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.utils.data.TensorDataset(torch.randn(72, 64), torch.randn(72, 8))
    loader = torch.utils.data.DataLoader(data, batch_size=32, drop_last=drop_last)
    for _ in range(2):
        for x, y in loader:
            nvtx.range_push("step")
            x, y = x.cuda(), y.cuda()
            optimizer.zero_grad(set_to_none=True)
            out = graphed(x)  # defect: last-batch
            torch.nn.functional.mse_loss(out, y).backward()
            optimizer.step()
            nvtx.range_pop()
    if batch_of_one:
        out = graphed(torch.randn(1, 64, device="cuda"))  # defect: batch-of-one
        print("a batch of one gave", tuple(out.shape), flush=True)
    torch.cuda.synchronize()


class Noisy(torch.nn.Module):
    def __init__(self, on_gpu):
        super().__init__()
        self.linear = torch.nn.Linear(64, 64)
        self.on_gpu = on_gpu

    def forward(self, x):
        if self.on_gpu:
            return self.linear(x) * (1 + 0.1 * torch.rand(1, device=x.device))
        return self.linear(x) * (1 + 0.1 * float(torch.rand(1)))  # drawn on the host, frozen  # defect: host-rand


def noisy(on_gpu, steps=6):
    torch.manual_seed(0)
    model = Noisy(on_gpu).cuda()
    graphed = torch.cuda.make_graphed_callables(model, (torch.randn(16, 64, device="cuda"),))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        out = graphed(torch.randn(16, 64, device="cuda"))
        out.square().mean().backward()
        optimizer.step()
        nvtx.range_pop()
    torch.cuda.synchronize()


SCALE = 1.0


def region(scaled, two_statements=False, steps=8):
    global SCALE
    model = mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(1e-3, device="cuda"), capturable=True)
    static_x = torch.randn(32, 64, device="cuda")
    static_y = torch.randn(32, 8, device="cuda")

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(static_x), static_y) * (SCALE if scaled else 1.0)
        loss.backward()
        optimizer.step()
        return loss

    side_stream_warmup(train_step)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    if two_statements:
        with torch.cuda.graph(graph):
            static_loss = train_step()
            static_loss = static_loss * 1
    else:
        with torch.cuda.graph(graph):
            static_loss = train_step()
    for step in range(steps):
        nvtx.range_push("step")
        # train_step reads SCALE in Python: the graph keeps the 1.0 it had at capture.
        SCALE = 1.0 + step  # defect: region-scale
        static_x.copy_(torch.randn(32, 64, device="cuda"))
        graph.replay()
        nvtx.range_pop()
    torch.cuda.synchronize()
    print("loss", float(static_loss), flush=True)


def with_process_group(run):
    import socket

    import torch.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=0, world_size=1)
    try:
        run()
    finally:
        dist.destroy_process_group()


MODES = {
    "frozen-lr": lambda: whole_step(tensor_lr=False),
    "tensor-lr": lambda: whole_step(tensor_lr=True),
    "grads-none": lambda: forward_backward(set_to_none=True),
    "grads-zeroed": lambda: forward_backward(set_to_none=False),
    "last-batch": lambda: graphed_loader(drop_last=False),
    "drop-last": lambda: graphed_loader(drop_last=True),
    "batch-of-one": lambda: graphed_loader(drop_last=True, batch_of_one=True),
    "host-rand": lambda: noisy(on_gpu=False),
    "cuda-rand": lambda: noisy(on_gpu=True),
    "region-scale": lambda: region(scaled=True),
    "region-clean": lambda: region(scaled=False),
    "region-two": lambda: region(scaled=False, two_statements=True),
    "region-pg": lambda: with_process_group(lambda: region(scaled=False)),
}

if __name__ == "__main__":
    MODES[sys.argv[1]]()
