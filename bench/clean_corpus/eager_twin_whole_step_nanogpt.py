"""A nanoGPT-style character model (own attention blocks on F.scaled_dot_product_attention) whose training step is
checked the way its author would: the same `train_step` function run eagerly on a twin for the whole schedule, then
warmed up, captured whole with torch.cuda.graph and replayed on the graphed model, the two loss curves compared.

Covers: an eager training loop followed by a whole-step capture in one run; AdamW(capturable=True) for both models
(the twin uses the same optimizer settings, so both follow the same arithmetic); the graphed model's three warmup
steps on a side stream are real training steps, and the twin takes the same three first (same batch).

Why it is correct: the documented whole-step recipe (side-stream warmup, grads set to None inside the captured step,
static ids and targets refilled with copy_, the loss cloned after each replay before the next one overwrites it);
train_step returns a detached loss, so no warmup autograd graph outlives the warmup; nothing synchronizes inside the
loops; the curves are read with .tolist() after them. The program fails if the curves or the weights part.
"""
import copy
import math
import sys

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "eager_twin_whole_step_nanogpt"
VOCAB = 96
SEQ = 64
BATCH = 16
DIM = 128
HEADS = 4
STEPS = 24
WARMUP = 3


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(DIM)
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.proj = torch.nn.Linear(DIM, DIM)
        self.ln2 = torch.nn.LayerNorm(DIM)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 4 * DIM), torch.nn.GELU(), torch.nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(DIM, dim=2)
        q, k, v = (z.view(b, t, HEADS, DIM // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, DIM))
        return x + self.mlp(self.ln2(x))


class TinyGPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, DIM)
        self.pos = torch.nn.Embedding(SEQ, DIM)
        self.blocks = torch.nn.Sequential(Block(), Block())
        self.ln = torch.nn.LayerNorm(DIM)
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer("positions", torch.arange(SEQ), persistent=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(self.positions[: ids.shape[1]])
        return self.head(self.ln(self.blocks(x)))


def make_optimizer(model):
    return torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1, capturable=True)


def train_step(model, optimizer, ids, targets):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(ids).view(-1, VOCAB), targets.view(-1))
    loss.backward()
    optimizer.step()
    return loss.detach()


def main():
    torch.manual_seed(0)
    model = TinyGPT().cuda().train()
    twin = copy.deepcopy(model)
    text = torch.randint(0, VOCAB, (BATCH * 8, SEQ + 1), device="cuda")
    batches = [(text[i * BATCH:(i + 1) * BATCH, :-1].contiguous(), text[i * BATCH:(i + 1) * BATCH, 1:].contiguous())
               for i in range(8)]
    oracle.start(model.parameters())  # before both loops: a planted run plants them alike

    # 1. The eager twin: the warmup steps' batch WARMUP times, then the schedule.
    twin_opt = make_optimizer(twin)
    twin_losses = []
    for step in range(WARMUP + STEPS):
        ids, targets = batches[0] if step < WARMUP else batches[(step - WARMUP) % len(batches)]
        torch.cuda.nvtx.range_push("step")
        twin_losses.append(train_step(twin, twin_opt, ids, targets))
        torch.cuda.nvtx.range_pop()
    twin_losses = torch.stack(twin_losses[WARMUP:]).tolist()

    # 2. The graphed model: side-stream warmup, capture of the whole step, replays.
    optimizer = make_optimizer(model)
    static_ids = batches[0][0].clone()
    static_targets = batches[0][1].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP):
            torch.cuda.nvtx.range_push("step")
            train_step(model, optimizer, static_ids, static_targets)
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(side)
    if oracle.GRAPHS:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = train_step(model, optimizer, static_ids, static_targets)
    losses = []
    for step in range(STEPS):
        ids, targets = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        static_ids.copy_(ids)
        static_targets.copy_(targets)
        if oracle.GRAPHS:
            graph.replay()
        else:
            static_loss = train_step(model, optimizer, static_ids, static_targets)
        losses.append(static_loss.clone())
        torch.cuda.nvtx.range_pop()
    losses = torch.stack(losses).tolist()

    print("eager   " + " ".join(f"{v:.4f}" for v in twin_losses[::4]), flush=True)
    print("graphed " + " ".join(f"{v:.4f}" for v in losses[::4]), flush=True)
    if not all(math.isfinite(v) for v in twin_losses + losses):
        sys.exit(f"FAIL {NAME}: a loss is not finite")
    worst = max(abs(a - b) / max(abs(a), 1e-6) for a, b in zip(twin_losses, losses))
    if worst > 1e-3:
        sys.exit(f"FAIL {NAME}: the graphed loss curve parts from the eager twin's by {worst:.3g} (relative)")
    with torch.no_grad():
        apart = max(float((p - q).abs().max()) for p, q in zip(model.parameters(), twin.parameters()))
    if apart > 1e-3:
        sys.exit(f"FAIL {NAME}: graphed weights part from the eager twin's by {apart:.3g}")
    print(f"curves agree within {worst:.2g}, weights within {apart:.2g}", flush=True)
    oracle.save(NAME, loss=losses[-1], parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
