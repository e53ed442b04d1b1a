"""torchvision ResNet-18: the whole training step (forward, loss, backward, Adam step) captured with torch.cuda.graph,
exactly as PyTorch's CUDA-graph documentation ("Whole-network capture") does it.

Covers: the documented recipe: static input and target tensors; 3 warmup iterations on a side stream that joins the
current stream before and after; optimizer.zero_grad(set_to_none=True) right before the capture so backward allocates
the .grad tensors from the graph's private pool; torch.optim.Adam(capturable=True), whose step keeps its state and step
count on the GPU; then for each batch `static.copy_(new)` and `g.replay()`. BatchNorm updates its running statistics
and num_batches_tracked in place inside the graph.

Why it is correct: nothing in the captured region synchronizes or allocates outside the graph's pool; the static
tensors are never rebound; the loss is read with .item() only every 10 steps, outside the graph (the value of the
latest replay, which is what is wanted). As in the documentation, the last warmup loss stays alive into the capture,
so torch 2.11 prints its "AccumulateGrad node's stream does not match" warning there: harmless, the nodes' stream is
the side stream, not the default stream (the other whole-step programs `del` that loss and print nothing).
"""
import math

import torch
import torchvision

import _oracle as oracle

NAME = "torchvision_resnet18_whole_step"
BATCH = 16
STEPS = 30


def main():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10).cuda().train()
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    batches = [(torch.randn(BATCH, 3, 64, 64, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]

    static_x = torch.empty(BATCH, 3, 64, 64, device="cuda")
    static_y = torch.empty(BATCH, dtype=torch.long, device="cuda")
    static_x.copy_(batches[0][0])
    static_y.copy_(batches[0][1])

    # Warmup on a side stream (cuDNN/cuBLAS handles, optimizer state, allocator), as the documentation does.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            torch.cuda.nvtx.range_push("step")
            optimizer.zero_grad(set_to_none=True)
            warm_loss = loss_fn(model(static_x), static_y)
            warm_loss.backward()
            optimizer.step()
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(s)

    def train_step():
        # Grads set to None so that backward allocates them from the graph's private pool (inside the capture).
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        return loss

    oracle.start(model.parameters())
    if oracle.GRAPHS:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_loss = train_step()

    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        static_x.copy_(x)
        static_y.copy_(y)
        if oracle.GRAPHS:
            g.replay()
        else:
            static_loss = train_step()
        torch.cuda.nvtx.range_pop()
        if (step + 1) % 10 == 0:
            print(f"step {step + 1} loss {static_loss.item():.4f}", flush=True)

    torch.cuda.synchronize()
    final = static_loss.item()
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
