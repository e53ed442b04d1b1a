"""timm ResNet-18 (dropout before the head) trained through torch.cuda.make_graphed_callables under bf16 autocast.

Covers: make_graphed_callables of a whole timm model with BatchNorm (running statistics updated in place by the
graphs) and dropout (drawn from the default CUDA generator, which PyTorch registers with every capture, so each replay
draws a fresh mask).

Why it is correct: the graphs are captured under the same autocast the training loop uses, with the autocast weight
cache off (make_graphed_callables refuses it on); the loss and the SGD step run eagerly outside the graphed module;
zero_grad(set_to_none=True) is fine because make_graphed_callables' AccumulateGrad runs eagerly; new batches are
plain tensors that the graphed forward copies into its static input; nothing synchronizes inside the loop.
"""
import math

import timm
import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "timm_resnet18_graphed_bf16"
BATCH = 16
STEPS = 30


def bf16_autocast():
    return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)


def main():
    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=10, drop_rate=0.2).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    batches = [(torch.randn(BATCH, 3, 64, 64, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]

    sample_x = torch.randn(BATCH, 3, 64, 64, device="cuda")
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
