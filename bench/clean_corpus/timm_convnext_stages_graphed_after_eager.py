"""timm ConvNeXt-Atto trained eagerly through a learning-rate warmup, then with only its stages (the bulk of the
compute) replaced by torch.cuda.make_graphed_callables while the stem, the head and the loss stay eager.

Covers: graphing one submodule of a model in the middle of a run: the first WARMUP_STEPS steps run the whole model
eagerly (the lr ramps up, set on the optimizer between steps), then `model.stages` is graphed with a sample input
that requires grad (the stem's output does: gradients flow back through the graph into the eager stem) and training
goes on in the same loop with the same optimizer. make_graphed_callables returns the module with its forward
replaced, so `model(x)` runs stem (eager) -> stages (graph) -> head (eager).

Why it is correct: no autograd graph of an eager step is alive at the capture (`del loss`: kept, the parameters'
AccumulateGrad nodes would keep the default stream of the eager steps, and the backward capture fails on the legacy
stream, as PyTorch's "AccumulateGrad node's stream does not match" warning says); the sample input has the stem
output's shape, dtype and requires_grad; the stages have no hooks and keep train() mode; timm's ConvNeXt stages draw
no random numbers at drop_path_rate 0 and keep no running statistics (LayerNorm); SGD steps eagerly on every
parameter; grads set to None before each backward.
"""
import math
import sys

import timm
import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "timm_convnext_stages_graphed_after_eager"
BATCH = 16
WARMUP_STEPS = 6
STEPS = 24
LR = 0.005


def main():
    torch.manual_seed(0)
    model = timm.create_model("convnext_atto", pretrained=False, num_classes=10).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, weight_decay=5e-4)
    batches = [(torch.randn(BATCH, 3, 64, 64, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]
    oracle.start(model.parameters())

    losses = []
    for step in range(STEPS):
        if step == WARMUP_STEPS:  # the lr has ramped up: graph the stages from here on
            with torch.no_grad():
                stem_out = model.stem(batches[0][0])
            sample = stem_out.clone().requires_grad_(True)
            # The last eager step's loss still holds its autograd graph, and with it the AccumulateGrad nodes of the
            # stages' parameters, made on the default stream: the backward capture would wait on that stream (906).
            del loss
            model.stages = oracle.make_graphed_callables(model.stages, (sample,))
            print(f"graphed model.stages at step {step} on input {tuple(sample.shape)}", flush=True)
        for group in optimizer.param_groups:
            group["lr"] = LR * min(1.0, (step + 1) / WARMUP_STEPS)
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        torch.cuda.nvtx.range_pop()

    losses = torch.stack(losses).tolist()
    print("losses " + " ".join(f"{v:.3f}" for v in losses[::3]), flush=True)
    if not all(math.isfinite(v) for v in losses):
        sys.exit(f"FAIL {NAME}: a loss is not finite: {losses}")
    if not all(p.grad is not None for p in model.stages.parameters()):
        sys.exit(f"FAIL {NAME}: a parameter of the graphed stages got no gradient")
    oracle.save(NAME, loss=losses[-1], parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
