"""What the Python probe's capture contract costs on the host, measured with real torch on the CPU (no GPU needed):
the capture's forward with the contract's forward hook and profile function on against off, building a graph's
contract and its named-tensor list at capture end, and one audited replay's look. After the audit window (the first
8 replays, then powers of two up to the 4096th) the replay hook is gone and a replay costs nothing extra; a line checks
that on a stand-in graph. The last line gives what the probe's Module.__setattr__ adds to an attribute set outside
captures (it notes a parameter or buffer replaced inside one, and a number a live graph baked in).

usage: PYTHONPATH=build/probe:.deps/site python3 bench/contract_cost.py [--layers 12] [--repeat 20]
Prints one line per figure (median of --repeat, in microseconds).
"""
import argparse
import statistics
import sys
import time

import torch

from graphcheck_probe import bridge, contract, watches
from graphcheck_probe.bridge import Origin


class Graph:
    def pool(self):
        raise RuntimeError("no pool on a CPU")

    def replay(self):
        pass


def median_us(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - start) / 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    contract.on_device = lambda tensor: True  # CPU tensors stand for the device's
    bridge.recorder = bridge._Silent()
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.1, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, args.layers, enable_nested_tensor=False).train()
    x = torch.randn(2, 16, 256)
    parameters = sum(1 for _ in model.parameters())
    modules = sum(1 for _ in model.modules())

    def forward():
        with torch.no_grad():
            model(x)

    def captured_forward():
        graph = Graph()
        contract.capture_started(graph, Origin.USER)
        forward()
        contract.stop_capture()

    plain = median_us(forward, args.repeat)
    hooked = median_us(captured_forward, args.repeat)
    graph = Graph()

    def build(times=None):
        contract.capture_started(graph, Origin.USER)
        forward()
        taken = contract.stop_capture()
        started = time.perf_counter_ns()
        terms = contract.capture_ended(graph, taken, sys._getframe(0), 0, [])
        if times is not None:
            times.append((time.perf_counter_ns() - started) / 1e3)
        return terms

    terms = build()
    times = []
    for _ in range(args.repeat):
        build(times)
    ended_us = statistics.median(times)
    look = median_us(terms.look, args.repeat * 10)
    print(f"model: TransformerEncoder, {args.layers} layers, {modules} modules, {parameters} parameters (CPU)")
    print(f"forward inside a capture: {plain:.0f} us without the contract, {hooked:.0f} us with its forward hook and "
          f"profile function (+{hooked - plain:.0f} us, once per capture)")
    print(f"contract and named-tensor list at capture end: {ended_us:.0f} us per capture "
          f"({len(terms.modes)} training flags, {len(terms.attributes)} numbers, {len(terms.tensors)} tensors)")
    print(f"one audited replay's look (modes, tensors, numbers): {look:.1f} us")
    watches.graph_watch(graph).contract = terms
    watches.watch_replays(graph, None)
    for _ in range(watches.LAST_LOOK):
        graph.replay()
    print(f"replay hook after {watches.LAST_LOOK} replays: {'gone' if 'replay' not in graph.__dict__ else 'STILL THERE'}")
    setattr_ns = setattr_cost(args.repeat)
    print(f"Module.__setattr__ outside captures: {setattr_ns[0]:.0f} ns unpatched, {setattr_ns[1]:.0f} ns under the "
          f"probe (+{setattr_ns[1] - setattr_ns[0]:.0f} ns per attribute set)")


def setattr_cost(repeat):
    """ns per Module.__setattr__ before and after the probe patches it (then it stays patched)."""
    from graphcheck_probe import patches

    module = torch.nn.Linear(4, 4)

    def set_attributes():
        for _ in range(1000):
            module.scale = 1.0

    before = median_us(set_attributes, repeat)
    patches.apply(patches._patch_module, sys.modules["torch.nn.modules.module"])
    return before, median_us(set_attributes, repeat)  # us per 1000 sets: ns per set


if __name__ == "__main__":
    main()
