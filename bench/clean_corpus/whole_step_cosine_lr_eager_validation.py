"""A small CNN (BatchNorm, dropout) trained in epochs by replaying a captured whole training step, with an eager
validation pass under model.eval() and torch.no_grad() after every epoch, and a cosine learning-rate schedule that
the program writes into a CUDA tensor before each replay.

Covers: graphed training epochs and eager evaluation loops alternating in one run, on the same module: the graph was
captured in train() mode and only ever replays in it (the program switches back to train() before each epoch); the
eager evaluation reads the BatchNorm running statistics the replays update in place. AdamW(capturable=True) with the
lr as a 0-dim CUDA tensor, set with `lr.fill_(value)` each step (the captured kernels read it at every replay).
Validation accuracy and loss are accumulated on the GPU and read with .item() once per epoch, outside the steps.

Why it is correct: the documented whole-step recipe (side-stream warmup, grads set to None inside the captured
step, static tensors refilled with copy_); the lr is never rebound, only written in place; dropout draws from the
CUDA generator inside the graph (each replay draws what the same step run eagerly would); the evaluation runs no
graph and draws nothing. The program checks that the lr followed the schedule and that validation ran each epoch.
"""
import math
import sys

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "whole_step_cosine_lr_eager_validation"
BATCH = 32
EPOCHS = 3
STEPS_PER_EPOCH = 10
BASE_LR = 2e-3


def conv(cin, cout, stride):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                               torch.nn.BatchNorm2d(cout), torch.nn.ReLU())


def cosine(step, total):
    return 0.5 * BASE_LR * (1 + math.cos(math.pi * step / total))


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(conv(3, 32, 1), conv(32, 64, 2), conv(64, 64, 2), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Dropout(0.2), torch.nn.Linear(64, 10)).cuda().train()
    lr = torch.tensor(BASE_LR, device="cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05, capturable=True)
    train_set = [(torch.randn(BATCH, 3, 32, 32, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
                 for _ in range(STEPS_PER_EPOCH)]
    val_set = [(torch.randn(64, 3, 32, 32, device="cuda"), torch.randint(0, 10, (64,), device="cuda"))
               for _ in range(3)]
    static_x = train_set[0][0].clone()
    static_y = train_set[0][1].clone()

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch.cuda.nvtx.range_push("step")
            train_step()
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(side)
    oracle.start(model.parameters())
    if oracle.GRAPHS:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = train_step()

    total = EPOCHS * STEPS_PER_EPOCH
    history, val_logits = [], []
    for epoch in range(EPOCHS):
        model.train()
        for i, (x, y) in enumerate(train_set):
            step = epoch * STEPS_PER_EPOCH + i
            torch.cuda.nvtx.range_push("step")
            lr.fill_(cosine(step, total))
            static_x.copy_(x)
            static_y.copy_(y)
            if oracle.GRAPHS:
                graph.replay()
            else:
                static_loss = train_step()
            torch.cuda.nvtx.range_pop()
        model.eval()
        correct = torch.zeros((), device="cuda")
        val_loss = torch.zeros((), device="cuda")
        val_logits = []
        with torch.no_grad():
            for x, y in val_set:
                logits = model(x)
                val_logits.append(logits)
                val_loss += F.cross_entropy(logits, y, reduction="sum")
                correct += (logits.argmax(1) == y).sum()
        seen = sum(len(y) for _, y in val_set)
        history.append((static_loss.item(), val_loss.item() / seen, correct.item() / seen))
        print(f"epoch {epoch}: train loss {history[-1][0]:.4f} val loss {history[-1][1]:.4f} "
              f"val acc {history[-1][2]:.3f} lr {lr.item():.3g}", flush=True)

    expected = cosine(total - 1, total)
    if abs(lr.item() - expected) > 1e-6 * BASE_LR:
        sys.exit(f"FAIL {NAME}: lr {lr.item():.6g}, the schedule says {expected:.6g}")
    if len(history) != EPOCHS or not all(math.isfinite(v) for h in history for v in h):
        sys.exit(f"FAIL {NAME}: epochs {history}")
    oracle.save(NAME, loss=history[-1][0], parameters=model.parameters(), outputs=val_logits)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
