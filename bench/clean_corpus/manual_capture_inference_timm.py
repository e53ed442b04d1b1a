"""timm EfficientNet-B0 (random weights) in eval mode: inference captured once with torch.cuda.graph and replayed on
new batches.

Covers: the manual inference recipe: a static input tensor, side-stream warmup (cuDNN handles, algorithm choice,
allocator), one capture under torch.no_grad(), then for each batch `static_x.copy_(batch)`, `g.replay()` and
`static_out.clone()`. EfficientNet brings depthwise convolutions, squeeze-and-excitation (global pooling and a
sigmoid gate), SiLU and BatchNorm in eval mode (running statistics read, never written).

Why it is correct: the static input is refilled in place and never rebound; each output is cloned before the next
replay overwrites it; the program checks at the end that the graph's outputs equal the eager model's on the same
batches.
"""
import torch
import timm

import _oracle as oracle

NAME = "manual_capture_inference_timm"
BATCH = 8
STEPS = 30


def main():
    torch.manual_seed(0)
    model = timm.create_model("efficientnet_b0", pretrained=False, num_classes=10).cuda().eval()
    batches = [torch.randn(BATCH, 3, 64, 64, device="cuda") for _ in range(4)]
    static_x = torch.empty(BATCH, 3, 64, 64, device="cuda")
    static_x.copy_(batches[0])

    kept = []
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                torch.cuda.nvtx.range_push("step")
                model(static_x)
                torch.cuda.nvtx.range_pop()
        torch.cuda.current_stream().wait_stream(s)

        oracle.start()
        if oracle.GRAPHS:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_out = model(static_x)

        for step in range(STEPS):
            torch.cuda.nvtx.range_push("step")
            static_x.copy_(batches[step % len(batches)])
            if oracle.GRAPHS:
                g.replay()
            else:
                static_out = model(static_x)
            kept.append(static_out.clone())  # the next replay overwrites static_out
            torch.cuda.nvtx.range_pop()

        torch.cuda.synchronize()
        # The graph computes what the eager model computes, batch by batch.
        for i, batch in enumerate(batches):
            torch.testing.assert_close(kept[i], model(batch), rtol=1e-3, atol=1e-3)
    print(f"outputs {len(kept)} x {tuple(kept[0].shape)} match eager", flush=True)
    oracle.save(NAME, outputs=kept)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
