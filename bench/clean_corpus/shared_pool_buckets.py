"""An MLP served through three CUDA graphs, one per batch-size bucket (32, 16, 8), captured with torch.cuda.graph into
one shared memory pool, then a stream of requests of those sizes, each answered by replaying its bucket's graph.

Covers: the serving pattern of inference engines (vLLM's decode graphs): one graph per batch size, all in one pool
(torch.cuda.graph_pool_handle()), the largest captured first so that the smaller ones reuse its freed blocks instead
of reserving their own.

Why it is correct: every bucket is warmed up on a side stream before its capture; each bucket's static input is
allocated before any capture (outside the pool) and refilled in place; the graphs run one at a time on one stream,
and each replay's output is cloned right after the replay, before any other graph of the pool runs. So whatever a
later-captured graph shares with an earlier one (intermediates, its output's blocks) is dead by the time the other
graph runs: the order of the requests does not matter. Inference runs under torch.no_grad(). The program checks the
answers against the eager model at the end.
"""
import random

import torch

import _oracle as oracle

NAME = "shared_pool_buckets"
BUCKETS = (32, 16, 8)  # capture order: largest first
REQUESTS = 40
FEATURES = 256


def capture_bucket(model, static_x, pool):
    """Side-stream warmup, then one capture into the shared pool; returns the graph and its static output."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=pool):
        static_out = model(static_x)
    return graph, static_out


def serve(bucket, request, model):
    """Copies the request into the bucket's static input, replays, returns a copy of the output (with the graphs
    removed, runs the model on it)."""
    graph, static_x, static_out = bucket
    static_x.copy_(request)
    if not oracle.GRAPHS:
        return model(static_x).clone()
    graph.replay()
    return static_out.clone()


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024),
                                torch.nn.GELU(), torch.nn.Linear(1024, FEATURES)).cuda().eval()
    # Static inputs first, outside any capture: they live in the ordinary allocator, not in the graphs' pool.
    static_inputs = {size: torch.zeros(size, FEATURES, device="cuda") for size in BUCKETS}
    pool = torch.cuda.graph_pool_handle()
    buckets = {}
    with torch.no_grad():
        for size in BUCKETS:
            graph, static_out = capture_bucket(model, static_inputs[size], pool) if oracle.GRAPHS else (None, None)
            buckets[size] = (graph, static_inputs[size], static_out)

    rng = random.Random(0)
    sizes = [rng.choice(BUCKETS) for _ in range(REQUESTS)]
    requests = [torch.randn(size, FEATURES, device="cuda") for size in sizes]
    oracle.start()

    answers = []
    with torch.no_grad():
        for request in requests:
            torch.cuda.nvtx.range_push("step")
            answers.append(serve(buckets[request.shape[0]], request, model))
            torch.cuda.nvtx.range_pop()

        torch.cuda.synchronize()
        for request, answer in zip(requests, answers):
            torch.testing.assert_close(answer, model(request), rtol=1e-3, atol=1e-3)
    oracle.save(NAME, outputs=answers)
    counts = {size: sizes.count(size) for size in BUCKETS}
    print(f"served {len(answers)} requests per bucket {counts}; answers match eager", flush=True)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
