"""torchvision MobileNetV3-Small in eval mode, served through torch.compile(mode="reduce-overhead") under
torch.inference_mode().

Covers: torch.compile's CUDA graphs (cudagraph trees) for inference: one warmup run, one recording, then replays on
every new batch of the same shape (cudagraph trees copy each new input into the graph's static input).

Why it is correct: fixed batch shape (no re-recording); torch.compiler.cudagraph_mark_step_begin() at the start of
each step; every output that is kept past the step is cloned first (the graph overwrites its output memory on the
next replay); nothing synchronizes inside the loop; results are read after it.
"""
import math

import torch
import torchvision

import _oracle as oracle

NAME = "compile_reduce_overhead_infer"
BATCH = 8
STEPS = 30


def main():
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v3_small(weights=None, num_classes=10).cuda().eval()
    compiled = torch.compile(model, mode=oracle.compile_mode("reduce-overhead"))
    batches = [torch.randn(BATCH, 3, 64, 64, device="cuda") for _ in range(4)]
    oracle.start()

    kept = []
    with torch.inference_mode():
        for step in range(STEPS):
            torch.cuda.nvtx.range_push("step")
            torch.compiler.cudagraph_mark_step_begin()
            out = compiled(batches[step % len(batches)])
            kept.append(out.clone())  # the next replay overwrites `out`
            torch.cuda.nvtx.range_pop()

        torch.cuda.synchronize()
        preds = torch.stack(kept)
        # Two replays on the same batch give the same logits (eval mode, no randomness).
        n = len(batches)
        scale = preds.float().abs().max().item()
        same = torch.allclose(preds[n], preds[2 * n], rtol=1e-3, atol=1e-3 * scale)
    print(f"outputs {tuple(preds.shape)} max |logit| {scale:.3e} repeat-consistent {same}", flush=True)
    assert math.isfinite(scale) and same
    oracle.save(NAME, outputs=kept)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
