"""graphcheck's Python probe: records what only Python knows about CUDA graphs into the trace that graphcheck's
recorder writes for this process, on the recorder's clock. It records; graphcheck's checks judge.

- Captures (patches.py, origins.py): who began each one (the program, torch.cuda.make_graphed_callables, torch.compile's
  cudagraph trees and their pool-creating empty capture, Transformer Engine, Megatron Core), its graph, pool and
  capture mode, and the exception that left it (type, message, the frames of its traceback: frames.py), caught by the
  program or not; exceptions that end the program or a thread.
- torch.compile: the reasons inductor gives for running a function without CUDA graphs, and the outputs its cudagraph
  trees invalidate while the program still holds them.
- What a graph baked in, watched while it is replayed (watches.py, contract.py, graphed_calls.py): tensors moved or
  freed after capture (parameters, buffers, optimizer state, static inputs, pinned host buffers), outputs kept across
  replays, training modes and requires_grad flags, optimizer hyperparameters and gradients a capture baked in, .grad
  aliasing a graph's output, and calls with other input shapes than were captured; the numbers the capture's Python
  read wherever they live (host_reads.py, followed again by read_paths.py) and its host draws (host_draws.py),
  observed while it runs; whether it wrote only memory it allocated (capture_writes.py); and a replay in grad mode
  of a graph that computes without autograd, before a step that trains what it read (no_grad_replays.py).
- DistributedDataParallel: the stream each DDP module was constructed on, and each forward inside a capture.
- Memory (memory.py): the caching allocator's history of allocations and frees, read at exit, from which graphcheck
  forecasts what a graph of the program's step would hold.
- Under `graphcheck run --shadow N` (shadow.py): graphed calls and replays compared with their eager code.
- Under `graphcheck run --hang-timeout` (waits.py): the waits outside CUDA that can stall a job (process-group
  teardown, barriers, collectives, thread joins), announced so that the recorder bounds them too.

A program that makes no capture pays one dictionary lookup per import, a Python call per optimizer step and
zero_grad(); replays of graphs with nothing to watch pay a look for the program's loop until the first optimizer
step (steps.py), then nothing. Events reach the recorder through the injection
library (bridge.py), found once CUDA has loaded it; before that there is no capture to record.
"""
import os
import sys

from . import bridge, patches, settings


def install():
    """Starts the probe in this process (idempotent). Does nothing outside `graphcheck run`; ValueError, before
    anything is started, when a setting in the environment is not as graphcheck writes it (settings.read)."""
    library = os.environ.get("CUDA_INJECTION64_PATH")
    if isinstance(bridge.recorder, bridge.Recorder) or not library:
        return
    config = settings.read()  # first: a bad value leaves the probe unstarted, not half started
    bridge.recorder = bridge.Recorder(library)
    if config.shadow_calls > 0:
        from . import shadow

        patches.shadow = shadow.Shadow(config.shadow_calls)
    if config.module_calls > 0:
        from . import module_calls

        patch_module = patches.PATCHES["torch.nn.modules.module"]

        def patch_module_and_record_calls(module):
            patch_module(module)
            module_calls.install(module, sys.modules["torch"], config.module_calls)

        patches.PATCHES["torch.nn.modules.module"] = patch_module_and_record_calls
    if config.hang_timeout_ms > 0:
        from . import waits

        patches.PATCHES["torch.distributed.distributed_c10d"] = waits.patch_distributed
        patches.PATCHES["threading"] = waits.patch_threading
    for name, patch in patches.PATCHES.items():
        if name in sys.modules:  # imported before the probe (a sitecustomize that imports torch)
            patches.apply(patch, sys.modules[name])
    sys.meta_path.insert(0, patches.PatchOnImport())
    patches.hook_uncaught_exceptions()
