"""A small transformer encoder (two nn.TransformerEncoderLayer, dropout 0) with a classification head, trained through
torch.cuda.make_graphed_callables under bf16 autocast, AdamW eager.

Covers: make_graphed_callables of a deterministic forward (no dropout), so that `graphcheck run --shadow N` has calls
it can really compare (a forward that draws random numbers is only counted as `shadow.calls_random`): attention
through scaled_dot_product_attention, LayerNorm (float32 under autocast), GELU, mean pooling.

Why it is correct: capture and loop under the same autocast, cache off; loss and optimizer eager outside the graphed
module; new batches copied into the static input by the graphed forward; no host synchronization in the loop.
"""
import math

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "graphed_encoder_bf16_nodrop"
BATCH = 16
SEQ = 32
DIM = 128
STEPS = 30


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(64, DIM)
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(DIM, nhead=4, dim_feedforward=256, dropout=0.0, activation="gelu",
                                             batch_first=True) for _ in range(2))
        self.head = torch.nn.Linear(DIM, 10)

    def forward(self, x):
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(h.mean(dim=1))


def bf16_autocast():
    return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)


def main():
    torch.manual_seed(0)
    model = Encoder().cuda().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(torch.randn(BATCH, SEQ, 64, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]

    sample_x = torch.randn(BATCH, SEQ, 64, device="cuda")
    oracle.start(model.parameters())
    with bf16_autocast():
        graphed = oracle.make_graphed_callables(model, (sample_x,))

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        with bf16_autocast():
            logits = graphed(x)
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = loss.item()
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
