"""What the probe's capture contract costs a program: milliseconds per capture and microseconds per replay, on a
launch-bound training loop (a whole step of a 4-layer MLP, batch 32) and on a Hugging Face GPT-2 whole step (2
layers). Run it alone, under `graphcheck run --no-python-probe` and under `graphcheck run`: the differences are the
probe's. Each model is captured CAPTURES times (a new graph each time, the last kept) and its graph replayed REPLAYS
times in batches of BATCH replays, each batch timed with a synchronize; the median batch gives the time per replay,
and the median time to enqueue a batch (before its synchronize) the host's time per replay, which the probe's replay
hook adds to.

usage: python3 replay_cost.py mlp|gpt2   (prints `COST MODEL capture_ms C replay_us R host_us_per_replay H`)
"""
import statistics
import sys
import time

import torch

CAPTURES = 5
REPLAYS = 4000
BATCH = 200


def mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU()) for _ in range(4)])
    model = model.cuda()
    x = torch.randn(32, 256, device="cuda")
    return model, lambda: model(x).square().mean()


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=512, n_positions=128, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config).cuda()
    ids = torch.randint(0, 512, (8, 64), device="cuda")
    return model, lambda: model(input_ids=ids, labels=ids).loss


def main():
    model, loss_of = {"mlp": mlp, "gpt2": gpt2}[sys.argv[1]]()
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(1e-4, device="cuda"), capturable=True)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        optimizer.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    captures = []
    for _ in range(CAPTURES):
        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.cuda.graph(graph):
            step()
        torch.cuda.synchronize()
        captures.append((time.perf_counter() - start) * 1e3)
    batches, enqueues = [], []
    for _ in range(REPLAYS // BATCH):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(BATCH):
            graph.replay()
        enqueued = time.perf_counter()
        torch.cuda.synchronize()
        enqueues.append((enqueued - start) * 1e6 / BATCH)
        batches.append((time.perf_counter() - start) * 1e6 / BATCH)
    print("COST %s capture_ms %.2f replay_us %.2f host_us_per_replay %.2f" % (
        sys.argv[1], statistics.median(captures), statistics.median(batches), statistics.median(enqueues)),
        flush=True)


if __name__ == "__main__":
    main()
