"""A keyword-spotting style 1-D convolutional classifier (BatchNorm1d, eval mode) benchmarked the way users do: an
eager inference loop first (reference outputs and time), then the same model through
torch.compile(mode="reduce-overhead") on the same batches, outputs compared and both times printed.

Covers: an eager inference loop and a torch.compile CUDA-graph (cudagraph trees) loop over the same module in one
run; three untimed compiled calls compile, warm up and record, then the timed compiled loop replays. Each timed loop is
timed with torch.cuda.synchronize() and time.perf_counter() around it, outside the steps.

Why it is correct: torch.compiler.cudagraph_mark_step_begin() starts each compiled step; each output kept past its
step is cloned (the next replay overwrites it); the batch shape never changes (no re-recording); eval mode under
torch.no_grad(), nothing random; results are compared after the loops. The speedup is printed, not asserted.
"""
import sys
import time

import torch

import _oracle as oracle

NAME = "compile_infer_after_eager_bench"
BATCH = 32
SAMPLES = 4000  # 0.25 s of 16 kHz audio
STEPS = 20


def block(cin, cout, stride):
    return torch.nn.Sequential(torch.nn.Conv1d(cin, cout, 9, stride=stride, padding=4), torch.nn.BatchNorm1d(cout),
                               torch.nn.ReLU())


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(block(1, 32, 4), block(32, 64, 2), block(64, 64, 2), block(64, 128, 2),
                                torch.nn.AdaptiveAvgPool1d(1), torch.nn.Flatten(), torch.nn.Linear(128, 12))
    with torch.no_grad():  # running statistics of a trained model, not the defaults
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm1d):
                module.running_mean.uniform_(-0.2, 0.2)
                module.running_var.uniform_(0.5, 1.5)
    model = model.cuda().eval()
    batches = [torch.randn(BATCH, 1, SAMPLES, device="cuda") for _ in range(4)]
    oracle.start()

    with torch.no_grad():
        torch.cuda.synchronize()
        start = time.perf_counter()
        reference = []
        for step in range(STEPS):
            torch.cuda.nvtx.range_push("step")
            reference.append(model(batches[step % len(batches)]))
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        eager_s = time.perf_counter() - start

        compiled = torch.compile(model, mode=oracle.compile_mode("reduce-overhead"))
        for step in range(3):  # compile, warm up and record: not timed
            torch.cuda.nvtx.range_push("step")
            torch.compiler.cudagraph_mark_step_begin()
            compiled(batches[step % len(batches)])
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        start = time.perf_counter()
        kept = []
        for step in range(STEPS):
            torch.cuda.nvtx.range_push("step")
            torch.compiler.cudagraph_mark_step_begin()
            out = compiled(batches[step % len(batches)])
            kept.append(out.clone())  # the next replay overwrites `out`
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        compiled_s = time.perf_counter() - start

    print(f"{STEPS} batches: eager {eager_s * 1e3:.1f} ms, compiled {compiled_s * 1e3:.1f} ms "
          f"(x{eager_s / max(compiled_s, 1e-9):.2f})", flush=True)
    scale = max(float(r.abs().max()) for r in reference)
    worst = max(float((k - r).abs().max()) for k, r in zip(kept, reference)) / max(scale, 1e-8)
    print(f"compiled outputs within {worst:.2g} of eager (relative to max |logit| {scale:.3g})", flush=True)
    if not worst <= 1e-3:
        sys.exit(f"FAIL {NAME}: compiled outputs differ from eager by {worst:.3g} (relative)")
    oracle.save(NAME, outputs=kept)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
