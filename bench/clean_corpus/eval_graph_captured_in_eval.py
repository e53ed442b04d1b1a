"""timm ResNet-18 (batch norm, dropout before the head) trained eagerly, evaluated every few steps through an
inference graph captured after model.eval().

Covers: the clean twin of training-mode-frozen: the program switches between train() and eval() around each
evaluation, and the graph only replays in the mode it was captured in (eval: no dropout, batch norm on its running
statistics). The optimizer updates the parameters in place, so each evaluation replays with the current weights.

Why it is correct: every replay runs in eval mode, as the capture did; the static input is refilled with copy_; the
outputs are cloned before the next replay (the oracle compares them with eager evaluation).
"""
import timm
import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "eval_graph_captured_in_eval"
BATCH = 16
ROUNDS = 4
TRAIN_STEPS = 5


def main():
    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=10, drop_rate=0.2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batches = [(torch.randn(BATCH, 3, 64, 64, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda"))
               for _ in range(4)]
    static_x = torch.zeros(BATCH, 3, 64, 64, device="cuda")
    oracle.start(model.parameters())

    graph, static_out, evaluated = None, None, []
    for round_ in range(ROUNDS):
        model.train()
        for step in range(TRAIN_STEPS):
            x, y = batches[step % len(batches)]
            torch.cuda.nvtx.range_push("step")
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            torch.cuda.nvtx.range_pop()
        model.eval()
        with torch.no_grad():
            if graph is None and oracle.GRAPHS:
                static_x.copy_(batches[0][0])
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        model(static_x)
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    static_out = model(static_x)
            for x, _ in batches:
                static_x.copy_(x)
                if oracle.GRAPHS:
                    graph.replay()
                else:
                    static_out = model(static_x)
                evaluated.append(static_out.clone())

    torch.cuda.synchronize()
    final = loss.item()
    print(f"final loss {final:.4f}, {len(evaluated)} evaluated batches", flush=True)
    oracle.save(NAME, loss=final, parameters=model.parameters(), outputs=evaluated)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
