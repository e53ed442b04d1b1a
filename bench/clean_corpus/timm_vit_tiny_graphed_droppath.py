"""timm ViT-Tiny (64x64 images, 16 patches) with dropout, attention dropout and stochastic depth, trained through
torch.cuda.make_graphed_callables under bf16 autocast, AdamW eager.

Covers: make_graphed_callables of a transformer whose forward draws random numbers in three ways: nn.Dropout,
dropout inside scaled_dot_product_attention (flash attention's own philox state) and DropPath
(`x.new_empty(...).bernoulli_()`). All of them draw from the default CUDA generator on the GPU, which PyTorch
registers with every capture, so every replay draws fresh masks.

Why it is correct: capture and training loop use the same autocast (cache off); loss and optimizer run eagerly
outside the graphed module; each new batch is copied by the graphed forward into its static input; the loop never
synchronizes with the host.
"""
import math

import timm
import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "timm_vit_tiny_graphed_droppath"
BATCH = 16
STEPS = 30


def bf16_autocast():
    return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)


def main():
    torch.manual_seed(0)
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=64, num_classes=10,
                              drop_rate=0.1, proj_drop_rate=0.1, attn_drop_rate=0.1,
                              drop_path_rate=0.1).cuda().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
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
