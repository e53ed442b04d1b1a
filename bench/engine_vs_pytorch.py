"""graphcheck's C++ MakeGraphedCallables against PyTorch's Python torch.cuda.make_graphed_callables, on the same
TorchScript module and inputs (run on a GPU machine):

    python3 bench/engine_vs_pytorch.py BUILD_DIR [--repeats 5] [--steps 50]

For the built-in mlp and transformer, exported to TorchScript from examples/programs/export_torchscript.py, it times
one training step (forward, loss = mean of squared outputs, backward, fused SGD with momentum) four ways:
eager C++ and graphed C++ (graphcheck-engine, no recorder), eager Python and graphed Python
(make_graphed_callables on torch.jit.load of the same file). Each figure is the median over `--repeats` runs of the
median step time of `--steps` steps, from CUDA events. It then times `graphcheck check builtin:transformer` end to
end and reports the tool's own time beyond the model's work (metric check.tool_overhead_ms).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "programs"))
import export_torchscript  # noqa: E402


def python_step_times(path, spec, graphed, steps):
    name, dims, _ = spec.split(":")
    shape = [int(d) for d in dims.split("x")]
    module = torch.jit.load(path, map_location="cuda")
    module.train()
    batches = [torch.randn(shape, device="cuda") for _ in range(4)]
    model = module
    if graphed:
        model = torch.cuda.make_graphed_callables(module, (batches[0].clone(),))
    optimizer = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9, fused=True)
    events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    for i in range(steps + 1):
        if i > 0:
            events[i - 1].record()
        optimizer.zero_grad(set_to_none=True)
        loss = model(batches[i % 4]).float().square().mean()
        loss.backward()
        optimizer.step()
    events[steps].record()
    torch.cuda.synchronize()
    return statistics.median(events[i - 1].elapsed_time(events[i]) * 1000 for i in range(1, steps + 1))


def engine_step_times(build, path, spec, steps):
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        subprocess.run([os.path.join(build, "graphcheck-engine"), path, "--input", spec, "--replays", str(steps),
                        "--result", result.name], check=True)
        metrics = {m["name"]: m["value"] for m in json.load(open(result.name))["metrics"]}
    return metrics["check.eager_step_us"], metrics["check.graphed_step_us"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, {args.repeats} runs x {args.steps} steps, "
          "medians of per-run median step times (us)")
    print("| model | eager C++ | graphed C++ (MakeGraphedCallables) | eager Python | graphed Python "
          "(make_graphed_callables) | C++ speedup | graphed C++ / graphed Python |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in ("mlp", "transformer"):
            path = os.path.join(folder, f"{name}.pt")
            torch.manual_seed(0)
            torch.jit.save(torch.jit.script(export_torchscript.build(name)), path)
            spec = export_torchscript.INPUTS[name]
            cpp_eager, cpp_graphed, py_eager, py_graphed = [], [], [], []
            for _ in range(args.repeats):
                eager, graphed = engine_step_times(args.build, path, spec, args.steps)
                cpp_eager.append(eager)
                cpp_graphed.append(graphed)
                py_eager.append(python_step_times(path, spec, False, args.steps))
                py_graphed.append(python_step_times(path, spec, True, args.steps))
            ce, cg, pe, pg = (statistics.median(v) for v in (cpp_eager, cpp_graphed, py_eager, py_graphed))
            print(f"| {name} | {ce:.1f} | {cg:.1f} | {pe:.1f} | {pg:.1f} | x{ce / cg:.2f} | {cg / pg:.3f} |")
            print(f"<!-- {name} per run: C++ graphed {[round(v, 1) for v in cpp_graphed]}, "
                  f"Python graphed {[round(v, 1) for v in py_graphed]} -->")

    overheads, totals = [], []
    for _ in range(args.repeats):
        with tempfile.NamedTemporaryFile(suffix=".json") as report:
            subprocess.run([os.path.join(args.build, "graphcheck"), "check", "builtin:transformer", "--format", "json",
                            "-o", report.name, "--fail-on", "never"], check=True)
            metrics = {m["name"]: m["value"] for m in json.load(open(report.name))["metrics"]}
        overheads.append(metrics["check.tool_overhead_ms"])
        totals.append(metrics["check.total_ms"])
    print(f"\ngraphcheck check builtin:transformer: total {statistics.median(totals):.0f} ms, tool overhead "
          f"{statistics.median(overheads):.0f} ms (median of {args.repeats}; runs {[round(v) for v in overheads]})")


if __name__ == "__main__":
    main()
