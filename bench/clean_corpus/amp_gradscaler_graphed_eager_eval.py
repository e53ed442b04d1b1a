"""An MLP classifier (BatchNorm1d, dropout) trained in fp16 with torch.amp.GradScaler, its forward and backward graphed
by torch.cuda.make_graphed_callables, with an eager evaluation every few steps through the same module in eval mode.

Covers: GradScaler done graph-safely: the graphed callable holds only the model's forward and backward; the loss,
scaler.scale(loss).backward() (the scaled gradient enters the graphed backward as its static grad output),
scaler.unscale_(), gradient clipping, scaler.step() (which reads found_inf on the host and may skip the step) and
scaler.update() all run eagerly between replays. The evaluation calls the same module after model.eval():
make_graphed_callables' forward falls back to the module's own eager forward when the training flag differs from
the one it was captured in, so evaluation runs eagerly (BatchNorm on its running statistics, no dropout).

Why it is correct: the capture and the loop use the same autocast (fp16, cache off); the sample input has the
batches' shape and dtype; nothing the scaler decides on the host is baked into a graph; model.train() is restored
before training resumes, so every replay is in the mode it was captured in.
"""
import math
import sys

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "amp_gradscaler_graphed_eager_eval"
BATCH = 128
FEATURES = 96
STEPS = 30
EVAL_EVERY = 10


def fp16_autocast():
    return torch.autocast("cuda", dtype=torch.float16, cache_enabled=False)


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 512), torch.nn.BatchNorm1d(512), torch.nn.ReLU(),
                                torch.nn.Dropout(0.1), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 16)).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", growth_interval=8)
    batches = [(torch.randn(BATCH, FEATURES, device="cuda"), torch.randint(0, 16, (BATCH,), device="cuda"))
               for _ in range(6)]
    val = [(torch.randn(256, FEATURES, device="cuda"), torch.randint(0, 16, (256,), device="cuda")) for _ in range(2)]
    oracle.start(model.parameters())
    with fp16_autocast():
        graphed = oracle.make_graphed_callables(model, (torch.randn(BATCH, FEATURES, device="cuda"),))

    evals = []
    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        with fp16_autocast():
            logits = graphed(x)
        loss = F.cross_entropy(logits.float(), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        torch.cuda.nvtx.range_pop()
        if (step + 1) % EVAL_EVERY == 0:
            model.eval()
            with torch.no_grad(), fp16_autocast():
                outs = [graphed(vx).float() for vx, _ in val]  # eval mode: the module's own eager forward
            model.train()
            acc = sum((o.argmax(1) == vy).float().mean() for o, (_, vy) in zip(outs, val)) / len(val)
            evals.append(torch.cat(outs))
            print(f"step {step + 1}: loss {loss.item():.4f} scale {scaler.get_scale():.0f} val acc {acc.item():.3f}",
                  flush=True)

    final = loss.item()
    if not math.isfinite(final):
        sys.exit(f"FAIL {NAME}: final loss {final}")
    if len(evals) != STEPS // EVAL_EVERY:
        sys.exit(f"FAIL {NAME}: {len(evals)} evaluations")
    oracle.save(NAME, loss=final, parameters=model.parameters(), outputs=evals)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
