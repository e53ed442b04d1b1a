"""What the Python probe costs, on a GPU machine, under `graphcheck run`:

  graphcheck run -- python3 bench/probe_cost.py                     (probe loaded: prints all three figures)
  graphcheck run --no-python-probe -- python3 bench/probe_cost.py   (replay figure without the probe)

- watched_replay_us: a graph of one tiny kernel replayed WATCHED times back to back, host time per replay: the probe
  wraps the first 4096 replays of each graph it watches (it looks at a few of them for rebound inputs and outputs
  held across replays);
- replay_us: N more replays of the same graph, after the probe removed its wrapper: this must not move;
- event_us: the probe's own emit, N times: a ctypes call into the injection library, which takes the calling
  thread's Python stack and writes one record (what each capture begin, end, exception or torch.compile skip costs);
- import_ms: importing torch (the probe's import hook sees every import).
Prints one JSON line."""
import json
import sys
import time

N = 20000
WATCHED = 4096  # graphcheck_probe._LAST_LOOK

start = time.perf_counter()
import torch  # noqa: E402

import_ms = (time.perf_counter() - start) * 1e3

x = torch.zeros(256, device="cuda")
stream = torch.cuda.Stream()
stream.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(stream):
    x.add_(1)
torch.cuda.current_stream().wait_stream(stream)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    x.add_(1)


def replays_us(count):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(count):
        graph.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / count * 1e6


watched_replay_us = replays_us(WATCHED)
replay_us = replays_us(N)
result = {"probe": "graphcheck_probe" in sys.modules, "replays": N, "replay_us": round(replay_us, 3),
          "watched_replay_us": round(watched_replay_us, 3), "import_ms": round(import_ms, 1)}
if result["probe"]:
    import graphcheck_probe

    emit = graphcheck_probe._recorder.emit
    start = time.perf_counter()
    for _ in range(N):
        emit(graphcheck_probe.COMPILE_SKIP, text="probe_cost")
    result["event_us"] = round((time.perf_counter() - start) / N * 1e6, 3)
print(json.dumps(result), flush=True)
