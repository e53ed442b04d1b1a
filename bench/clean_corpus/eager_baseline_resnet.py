"""torchvision ResNet-18 trained eagerly (no CUDA graphs at all), AdamW: the corpus's control program.

Covers: an ordinary eager training loop with NVTX step ranges, so the tool sees steps but no capture. graphcheck may
print a performance note for it (launch-bound: what graphs would save); notes are expected, warnings and errors
are not.

Why it is correct: nothing about graphs to get wrong, and the loop keeps the habits graphs need anyway: fixed batch
shape, data already on the GPU, no host synchronization inside the loop (the loss is read once, after it).
"""
import math

import torch
import torchvision

NAME = "eager_baseline_resnet"
BATCH = 16
STEPS = 20


def main():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10).cuda().train()
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(torch.randn(BATCH, 3, 64, 64, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = loss.item()
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
