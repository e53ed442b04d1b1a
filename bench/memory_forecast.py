"""How close graphcheck's memory forecast comes to what CUDA graphs really hold (issue 32, item 3).

For each program, two runs on the GPU:
- eager, under `graphcheck run --region step`: each step in an NVTX range "step" (the buckets program marks each
  bucket's forward in "graphcheck:graphable" ranges inside it); the report's `memory.forecast_*` metrics are the
  forecast, from the caching allocator's history;
- graphed, without graphcheck: the same region captured the way PyTorch's docs do it (warmup on a side stream, then
  torch.cuda.graph), measured as the segments of the graph's pool in torch.cuda.memory._snapshot() (not as the growth
  of memory_reserved(): torch.cuda.graph empties the allocator's cache before it captures), with the pool's largest
  live blocks.

Prints one table (forecast, measured, error) and writes it as JSON.

usage: memory_forecast.py --graphcheck BUILD/graphcheck --out DIR [--only NAME ...]
       memory_forecast.py --run NAME eager|graphed        (one program run; what the driver starts)
"""
import argparse
import json
import os
import subprocess
import sys
import time

MiB = 1024 * 1024
STEPS = 8


def mlp():
    import torch

    layers = []
    for _ in range(6):
        layers += [torch.nn.Linear(2048, 2048), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(2048, 10)).cuda()
    return model, torch.randn(256, 2048, device="cuda"), torch.randint(0, 10, (256,), device="cuda")


def torchvision_resnet18():
    import torch
    import torchvision

    model = torchvision.models.resnet18(num_classes=100).cuda()
    return model, torch.randn(32, 3, 128, 128, device="cuda"), torch.randint(0, 100, (32,), device="cuda")


def timm_vit_tiny():
    import timm
    import torch

    model = timm.create_model("vit_tiny_patch16_224", num_classes=100, drop_rate=0.0).cuda()
    return model, torch.randn(32, 3, 224, 224, device="cuda"), torch.randint(0, 100, (32,), device="cuda")


def timm_resnet50():
    import timm
    import torch

    model = timm.create_model("resnet50", num_classes=100).cuda()
    return model, torch.randn(16, 3, 160, 160, device="cuda"), torch.randint(0, 100, (16,), device="cuda")


def hf_gpt2():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=4, n_head=8, n_embd=512, vocab_size=8000, n_positions=256, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = GPT2LMHeadModel(config)

        def forward(self, ids):
            return self.m(input_ids=ids, use_cache=False).logits.flatten(0, 1)

    ids = torch.randint(0, 8000, (8, 256), device="cuda")
    return Logits().cuda(), ids, torch.randint(0, 8000, (8 * 256,), device="cuda")


WHOLE_STEP = {"mlp": mlp, "torchvision_resnet18": torchvision_resnet18, "timm_vit_tiny": timm_vit_tiny,
              "timm_resnet50": timm_resnet50, "hf_gpt2": hf_gpt2}
BUCKETS = (64, 32, 16)  # the buckets program: one inference graph per batch size, largest first


def pool_segments(pool):
    """The bytes of the segments of memory pool `pool` (a graph's pool() or a graph_pool_handle()) and the sizes of
    its largest live blocks."""
    import torch

    total, live = 0, []
    for segment in torch.cuda.memory._snapshot()["segments"]:
        if tuple(segment.get("segment_pool_id", ())) == tuple(pool):
            total += segment["total_size"]
            live += [b["size"] for b in segment["blocks"] if b["state"] == "active_allocated"]
    return total, sorted(live, reverse=True)[:6]


def warm_up_on_side_stream(step, iterations=3):
    """PyTorch's recipe before a capture: the step run a few times on a side stream, then the GPU drained."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(iterations):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()


def run_whole_step(name, mode):
    """Forward, backward and a capturable Adam step, graphed whole: the pool holds activations, gradients, outputs."""
    import torch

    torch.manual_seed(0)
    model, x, y = WHOLE_STEP[name]()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, capturable=True)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    if mode == "eager":
        for _ in range(STEPS):
            with torch.cuda.nvtx.range("step"):
                step()
        torch.cuda.synchronize()
        return {}
    warm_up_on_side_stream(step)
    optimizer.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    pool, live = pool_segments(graph.pool())
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    return {"pool_bytes": pool, "largest_live_blocks": live}


def run_buckets(mode):
    """An MLP served at three batch sizes, one inference graph each: in private pools (mode graphed-private) or in one
    shared pool (graphed), each in a process of its own, so that both start with a capture stream that never ran
    cuBLAS."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096),
                                torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda().eval()
    inputs = {b: torch.randn(b, 1024, device="cuda") for b in BUCKETS}
    kept = {}
    if mode == "eager":
        with torch.no_grad():
            for _ in range(STEPS):
                with torch.cuda.nvtx.range("step"):
                    for b in BUCKETS:
                        with torch.cuda.nvtx.range("graphcheck:graphable"):
                            kept[b] = model(inputs[b])  # each bucket's output lives on, as a graph's would
        torch.cuda.synchronize()
        return {}

    def capture(b, pool):
        with torch.no_grad():
            warm_up_on_side_stream(lambda: model(inputs[b]))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool), torch.no_grad():
            out = model(inputs[b])
        torch.cuda.synchronize()
        return graph, out

    if mode == "graphed-private":
        private = [capture(b, None) for b in BUCKETS]
        pools = [pool_segments(graph.pool()) for graph, _ in private]
        return {"private_pools_bytes": sum(p[0] for p in pools), "private_largest_live_blocks": [p[1] for p in pools]}
    shared_pool = torch.cuda.graph_pool_handle()
    shared = [capture(b, shared_pool) for b in BUCKETS]  # noqa: F841 (the graphs hold the pool)
    pool, live = pool_segments(shared_pool)
    return {"pool_bytes": pool, "largest_live_blocks": live}


PROGRAMS = list(WHOLE_STEP) + ["buckets"]


def run_one(name, mode):
    result = run_buckets(mode) if name == "buckets" else run_whole_step(name, mode)
    print("RESULT " + json.dumps(result), flush=True)


def metric(report, name):
    for process in report.get("processes", [report]):
        for m in process.get("metrics", []):
            if m.get("name") == name:
                return m.get("value")
    return None


def drive(args):
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.only or PROGRAMS:
        report_path = os.path.join(args.out, name + "-eager.json")
        started = time.time()
        eager = subprocess.run([args.graphcheck, "run", "--region", "step", "--fail-on", "never", "--format", "json",
                                "--trace-dir", os.path.join(args.out, name + "-trace"),
                                "-o", report_path, "--", sys.executable, __file__, "--run", name, "eager"],
                               capture_output=True, text=True, timeout=300)
        measured = {}
        for mode in ("graphed", "graphed-private") if name == "buckets" else ("graphed",):
            graphed = subprocess.run([sys.executable, __file__, "--run", name, mode], capture_output=True, text=True,
                                     timeout=300)
            for line in graphed.stdout.splitlines():
                if line.startswith("RESULT "):
                    measured.update(json.loads(line[len("RESULT "):]))
        forecast = {}
        if os.path.exists(report_path):
            with open(report_path) as f:
                report = json.load(f)
            for key in ("pool_bytes", "private_pools_bytes", "live_peak_bytes", "outliving_bytes", "steps"):
                forecast[key] = metric(report, "memory.forecast_" + key)
        row = {"program": name, "forecast": forecast, "measured": measured, "seconds": round(time.time() - started, 1),
               "eager_exit": eager.returncode, "graphed_exit": graphed.returncode}
        if eager.returncode != 0 or graphed.returncode != 0 or not measured:
            row["stderr"] = (eager.stderr[-1500:], graphed.stderr[-1500:])
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(os.path.join(args.out, "memory_forecast.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n| program | pool | forecast MiB | measured MiB | error |")
    print("|---|---|---|---|---|")
    for row in rows:
        for key, label in (("pool_bytes", "one pool"), ("private_pools_bytes", "private pools")):
            f, m = row["forecast"].get(key), row["measured"].get(key)
            if f is None and m is None:
                continue
            error = "%+.1f%%" % (100.0 * (f - m) / m) if f is not None and m else "n/a"
            print("| %s | %s | %s | %s | %s |" % (row["program"], label, "n/a" if f is None else "%.1f" % (f / MiB),
                                                  "n/a" if m is None else "%.1f" % (m / MiB), error))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", nargs=2, metavar=("NAME", "MODE"))
    parser.add_argument("--graphcheck")
    parser.add_argument("--out", default="memory-forecast")
    parser.add_argument("--only", nargs="*", choices=PROGRAMS)
    args = parser.parse_args()
    if args.run:
        run_one(*args.run)
    else:
        drive(args)


if __name__ == "__main__":
    main()
