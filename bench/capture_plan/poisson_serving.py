"""The GPU check of `graphcheck plan` (issue 47): a serving loop whose batch sizes come from Poisson arrivals, batched
up to 64, through a small Hugging Face GPT-2 (2 layers, built from its config, eval, no_grad).

  record [DUMP]     the eager loop, three times over the requests: run it under `graphcheck run --plan`
  timing            per call: the loop as recorded, its calls without a synchronize each, the synchronizes alone
                    (where a recorder's cost on the loop goes)
  verify PLAN.json [DUMP]
                    captures the plan's balanced bucket set (largest first, one shared pool, 3 warmup calls each),
                    replays the same requests padded to their buckets, and measures what the plan forecast: the saving
                    per call (the eager loop against the graphed loop, a synchronize after each call as a server
                    returns each batch; the medians of 5 passes of each, taken in turn; the plan's side is this
                    eager time less the plan's graphed time), the padding (a graph of each exact size: its bucket's
                    replay GPU time against its own; its share of the calls' GPU busy time, kernels only, as the
                    plan's),
                    the pool memory (the segments of the graphs' pools, shared and one pool per bucket) and
                    the start-up time. Prints one JSON object: plan, measured, and their ratio per figure.
  DUMP              a JSON file for each pass's model call times, to compare estimators of the eager time offline
"""
import gc
import json
import math
import sys
import time

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

SEQ, VOCAB, MAX_BATCH, CALLS = 32, 1000, 64, 600
RECORDED_PASSES = 3
VERIFY_PASSES = 5


def requests():
    """Batch sizes: arrivals per tick are Poisson with a rate that swings between 8 and 48, queued and served up to 64
    at a time."""
    rng = np.random.default_rng(0)
    sizes, queue, tick = [], 0, 0
    while len(sizes) < CALLS:
        rate = 8 + 40 * (1 + math.sin(2 * math.pi * tick / 100)) / 2
        queue += int(rng.poisson(rate))
        tick += 1
        if queue == 0:
            continue
        batch = min(queue, MAX_BATCH)
        queue -= batch
        sizes.append(batch)
    return sizes


def build():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=VOCAB, n_positions=SEQ)
    model = GPT2LMHeadModel(config).cuda().eval()
    ids = torch.randint(0, VOCAB, (MAX_BATCH, SEQ), device="cuda")
    return model, ids


def eager_loop(model, ids, sizes, forward_s=None):
    """Serves the requests; appends each model call's host time to `forward_s` when given (what the plan's eager time
    per call measures: the outermost module call, without the argmax and the synchronize)."""
    for b in sizes:
        started = time.perf_counter()
        logits = model(ids[:b]).logits
        if forward_s is not None:
            forward_s.append(time.perf_counter() - started)
        logits.argmax(-1)
        torch.cuda.synchronize()


def forward_us_per_call(sizes, forward_s):
    """Each size's median model call, weighted by its calls: the plan's eager time per call, from the program."""
    by_size = {}
    for b, seconds in zip(sizes, forward_s):
        by_size.setdefault(b, []).append(seconds)
    return sum(len(v) * float(np.median(v)) for v in by_size.values()) / len(sizes) * 1e6


def record(dump=None, passes=RECORDED_PASSES):
    """The eager loop over the requests, `passes` times: the plan takes each size's median call, and a recording of a
    server's first second alone is its cold start (seen on an H100: one pass ran 27% slower than the warm loop).
    `dump`: a file for each pass's model call times (us), to compare estimators of the eager time offline."""
    model, ids = build()
    sizes = requests()
    per_pass, forward_per_pass = [], []  # us per call of each pass: are a recording's later passes as fast as warm?
    calls_us = []
    with torch.no_grad():
        for _ in range(passes):
            forward_s = []
            per_pass.append(pass_us(lambda s: eager_loop(model, ids, s, forward_s), sizes))
            forward_per_pass.append(forward_us_per_call(sizes, forward_s))
            calls_us.append([round(seconds * 1e6, 1) for seconds in forward_s])
    print("eager loop: %.1f us per call over %d calls (per pass: %s; model call, per-size medians: %s)" %
          (sum(per_pass) / passes, passes * len(sizes), ", ".join("%.1f" % us for us in per_pass),
           ", ".join("%.1f" % us for us in forward_per_pass)), flush=True)
    if dump:
        with open(dump, "w") as f:
            json.dump({"sizes": sizes, "loop_us": per_pass, "model_call_us": calls_us}, f)
    print("OK record", flush=True)


def timing():
    """Where a recorder's cost on the eager loop goes: per call, the loop as recorded (a synchronize after each
    call), the same calls with one synchronize at the end, and the synchronizes alone."""
    model, ids = build()
    sizes = requests()
    with torch.no_grad():
        eager_loop(model, ids, sizes[:20])

        def unsynchronized(requested):
            for b in requested:
                model(ids[:b]).logits.argmax(-1)

        def synchronizes(requested):
            for _ in requested:
                torch.cuda.synchronize()

        figures = {"synchronized": loop_us(lambda s: eager_loop(model, ids, s), sizes),
                   "unsynchronized": loop_us(unsynchronized, sizes), "synchronize alone": loop_us(synchronizes, sizes)}
    print("timing: " + ", ".join("%s %.1f us per call" % item for item in figures.items()), flush=True)


def pool_bytes(pools):
    """The bytes of the segments of these graph memory pools, by the caching allocator's own account. (The reserved
    bytes before and after the captures say less: torch.cuda.graph empties the allocator's cache as it enters, so
    what the warm-up left cached is given back while the pool grows.)"""
    total = 0
    for pool in pools:
        for segment in torch.cuda.memory.memory_snapshot(mempool_id=pool, include_traces=False):
            total += int(segment["total_size"])
    return total


def capture(model, ids, sizes, shared):
    """Graphs of the sizes, largest first: warmup (3 calls on a side stream) for all, then the captures, into one pool
    when `shared`, on a capture stream of their own. Returns the graphs, the bytes of their pools and the seconds it
    all took, and each capture's seconds. (cuBLAS keeps a workspace per handle and stream, allocated where it is first used: a fresh stream puts
    it in the first graph's pool, as in a program that captures one bucket set.)"""
    torch.cuda.synchronize()
    started = time.perf_counter()
    static = {b: ids[:b].clone() for b in sizes}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for b in sorted(sizes, reverse=True):
            for _ in range(3):
                model(static[b])
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    warm = time.perf_counter()
    pool = torch.cuda.graph_pool_handle() if shared else None
    stream = torch.cuda.Stream()
    graphs, each = {}, []
    for b in sorted(sizes, reverse=True):
        graph = torch.cuda.CUDAGraph()
        began = time.perf_counter()
        with torch.cuda.graph(graph, pool=pool, stream=stream):
            out = model(static[b]).logits
        each.append(time.perf_counter() - began)
        graphs[b] = (graph, static[b], out)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - started
    pools = [graph.pool() for graph, _, _ in graphs.values()]
    if shared:
        pools = pools[:1]  # every graph names the one shared pool
    return graphs, pool_bytes(pools), elapsed, warm - started, each


def large_blocks(pool, least=8 << 20):
    """The blocks of at least `least` bytes in a graph memory pool, MiB and state, largest first (a cuBLAS workspace
    shows as one 32 MiB active block on compute capability 9.0)."""
    blocks = []
    for segment in torch.cuda.memory.memory_snapshot(mempool_id=pool, include_traces=False):
        blocks += [(b["size"], b["state"]) for b in segment["blocks"] if b["size"] >= least]
    return ["%.1f MiB %s" % (size / 2**20, state) for size, state in sorted(blocks, reverse=True)]


def replay_gpu_us(graph, replays=20):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    graph.replay()
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / replays


def replay_busy_us(graph, replays=5):
    """The GPU busy time of one replay of `graph`, as the plan measures an eager call's (the union of its kernels'
    intervals, gaps between kernels left out), from the CUDA activity of `replays` replays, each waited for."""
    from torch.profiler import ProfilerActivity, profile

    graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as profiler:
        for _ in range(replays):
            graph.replay()
            torch.cuda.synchronize()
    intervals = sorted((e.time_range.start, e.time_range.end) for e in profiler.events()
                       if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.end > e.time_range.start)
    busy, end = 0.0, float("-inf")
    for start, stop in intervals:
        busy += max(0.0, stop - max(start, end))
        end = max(end, stop)
    return busy / replays


def ratio(measured, planned):
    return None if not planned else measured / planned


def pass_us(fn, sizes):
    """One run of fn over the requests, per call."""
    torch.cuda.synchronize()
    started = time.perf_counter()
    fn(sizes)
    torch.cuda.synchronize()
    return (time.perf_counter() - started) / len(sizes) * 1e6


def loop_us(fn, sizes, passes=3):
    """The fastest of `passes` runs of fn over the requests, per call."""
    return min(pass_us(fn, sizes) for _ in range(passes))


def verify(path, dump=None):
    plan = json.load(open(path))
    region = plan["regions"][0]
    chosen = next(s for s in region["sets"] if "balanced" in s["name"])
    buckets = sorted(chosen["buckets"])
    sizes = requests()
    model, ids = build()
    with torch.no_grad():
        eager_loop(model, ids, sizes[:20])  # libraries loaded, kernels chosen
        graphs, shared_bytes, capture_s, warmup_s, capture_each_s = capture(model, ids, buckets, shared=True)

        def bucket_of(b):
            return next((k for k in buckets if k >= b), None)

        def graphed_loop(requested):
            for b in requested:
                k = bucket_of(b)
                if k is None:
                    model(ids[:b]).logits.argmax(-1)
                else:
                    graph, static, out = graphs[k]
                    static[:b].copy_(ids[:b])
                    graph.replay()
                    out[:b].argmax(-1)
                torch.cuda.synchronize()

        # Eager and graphed passes taken in turn, so that both see the host's slow and fast spells (one process's
        # passes seconds apart differed by 36% on an H200's host).
        eager_passes, graphed_passes, calls_us = [], [], []
        for _ in range(VERIFY_PASSES):
            forward_s = []
            eager_passes.append(pass_us(lambda s: eager_loop(model, ids, s, forward_s), sizes))
            calls_us.append([round(seconds * 1e6, 1) for seconds in forward_s])
            graphed_passes.append(pass_us(graphed_loop, sizes))
        # Medians, as the plan takes each size's median call.
        eager_us, graphed_us = float(np.median(eager_passes)), float(np.median(graphed_passes))
        eager_forward_us = forward_us_per_call(sizes * len(calls_us), [us / 1e6 for c in calls_us for us in c])
        if dump:
            with open(dump, "w") as f:
                json.dump({"sizes": sizes, "eager_loop_us": eager_passes, "graphed_loop_us": graphed_passes,
                           "model_call_us": calls_us}, f)
        shared_blocks = large_blocks(graphs[buckets[-1]][0].pool())
        bucket_gpu = {k: replay_gpu_us(graphs[k][0]) for k in buckets}
        private_graphs, private_bytes, _, _, _ = capture(model, ids, buckets, shared=False)
        del private_graphs
        exact_graphs, _, _, _, exact_each_s = capture(model, ids, sorted(set(sizes)), shared=True)
        gc_started = time.perf_counter()
        gc.collect()
        gc_s = time.perf_counter() - gc_started
        exact_gpu = {b: replay_gpu_us(exact_graphs[b][0]) for b in exact_graphs}
        exact_busy = {b: replay_busy_us(exact_graphs[b][0]) for b in exact_graphs}
    covered = [b for b in sizes if bucket_of(b) is not None]
    # Both sides from the exact-size graphs (each bucket is a size seen): one size's graph replayed 6% faster from the
    # bucket set's pool than from the exact set's on an H200 (220.6 against 233.6 us at 44), which the padding must
    # not take for padding.
    padding_us = sum(exact_gpu[bucket_of(b)] - exact_gpu[b] for b in covered)
    # The share as the plan figures it: of the calls' own GPU busy time (kernels only, the gaps between a replay's
    # kernels left out: a replay's elapsed GPU time is about 20% above it, which made the share 0.77 of the plan's).
    busy_padding_us = sum(exact_busy[bucket_of(b)] - exact_busy[b] for b in covered)
    own_busy_us = sum(exact_busy[b] for b in covered)
    measured = {
        "saving_per_call_us": eager_us - graphed_us,
        # The padding as the plan figures it, extra GPU time per call.
        "padding_gpu_us_per_call": padding_us / len(sizes),
        "padding_share": busy_padding_us / own_busy_us,
        "shared_pool_bytes": shared_bytes,
        "private_pools_bytes": private_bytes,
        "capture_us": capture_s * 1e6,
        "calls_covered": len(covered) / len(sizes),
    }
    planned = {k: chosen[k] for k in measured if k in chosen}
    planned["padding_gpu_us_per_call"] = chosen["padding_gpu_us"] / region["calls"]
    planned_eager = sum(s["calls"] * s["eager_us"] for s in region["sizes"]) / region["calls"]
    # What the plan forecasts is the graphed time per call; its eager time is what the recorded process took, which
    # ran 0.6-1.4x this process's in sessions 19-30 (host speed, recording). The saving is compared on this process's
    # eager time: the plan's graphed time against the one measured.
    planned["saving_per_call_us"] = eager_us - (planned_eager - chosen["saving_per_call_us"])
    planned_busy = {s["size"]: s["gpu_busy_us"] for s in region["sizes"]}
    result = {
        "gpu": torch.cuda.get_device_name(),
        "plan_eager_us_per_call": planned_eager,
        # The same figure measured here, warm: each size's median model call over the passes, weighted by its calls.
        "eager_model_call_us_per_call": eager_forward_us,
        "plan_graphed_us_per_call": planned_eager - chosen["saving_per_call_us"],
        "plan_saving_per_call_us_as_recorded": chosen["saving_per_call_us"],
        "buckets": buckets,
        "calls": len(sizes),
        "sizes": len(set(sizes)),
        "eager_us_per_call": eager_us,
        "graphed_us_per_call": graphed_us,
        "eager_us_per_call_passes": [round(us, 1) for us in eager_passes],
        "graphed_us_per_call_passes": [round(us, 1) for us in graphed_passes],
        "warmup_s": warmup_s,
        # Where the start-up goes: each capture of the bucket set (largest first; torch.cuda.graph's entry runs
        # gc.collect() and empties the cache), the median capture of the exact-size set, and one gc.collect() here.
        "capture_each_ms": [round(seconds * 1e3, 2) for seconds in capture_each_s],
        "exact_capture_median_ms": round(float(np.median(exact_each_s)) * 1e3, 2),
        "gc_collect_ms": round(gc_s * 1e3, 2),
        # Where the graphed time goes: each bucket's replay GPU time against the recorded eager GPU busy time of its
        # size, and the graphed loop's time per call beyond the replays' GPU time (copy in, launch, argmax, sync).
        "bucket_replay_gpu_us_vs_plan_busy": {k: [round(bucket_gpu[k], 1), planned_busy.get(k)] for k in buckets},
        # Per size seen: a graph of exactly that size's replay GPU time against the plan's eager GPU busy time (what
        # the padding is measured and planned from).
        "exact_replay_gpu_us_vs_plan_busy": {b: [round(exact_gpu[b], 1), planned_busy.get(b)] for b in sorted(exact_gpu)},
        # ... and its GPU busy time (the padding share's denominator, as the plan's).
        "exact_replay_busy_us_vs_plan_busy": {b: [round(exact_busy[b], 1), planned_busy.get(b)]
                                              for b in sorted(exact_busy)},
        "shared_pool_blocks_of_8_mib_or_more": shared_blocks,
        "graphed_beyond_replay_gpu_us": graphed_us - sum(bucket_gpu[bucket_of(b)] for b in covered) / len(sizes),
        "plan": planned,
        "measured": measured,
        "measured_over_plan": {k: ratio(measured[k], planned[k]) for k in measured},
    }
    print(json.dumps(result, indent=2), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(*sys.argv[2:3])
    elif sys.argv[1] == "timing":
        timing()
    else:
        verify(*sys.argv[2:4])
