"""graphcheck's Python probe end to end on a machine without a GPU: a program under the probe (PYTHONPATH, as
`graphcheck run` sets it) with the injection library initialised against CUDA's stub driver, and a stand-in torch
(fake_torch/) with the shape of what the probe hooks. The probe must write its events into the recorder's trace, the
analysis must turn them into findings at the program's lines, the program's own sitecustomize must still run, and a
program that makes no capture must run exactly as without the probe.

usage: python_probe_test.py INJECT_LIBRARY GRAPHCHECK PROBE_DIR STUB_DRIVER_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

inject, graphcheck, probe_dir, stub_dir = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
failures = []


def dump(trace, limit=100):
    """`graphcheck trace dump`'s text for `trace`, its first `limit` records of each kind."""
    return subprocess.run([graphcheck, "trace", "dump", trace, "--limit", str(limit)], capture_output=True,
                          text=True).stdout


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + str(detail)))
    if not condition:
        failures.append(name)


PROGRAM = textwrap.dedent('''\
    import ctypes, os
    ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()  # what cuInit does under graphcheck run
    import torch
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            raise RuntimeError("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned.")
    except RuntimeError:
        pass  # caught: the program goes on, as frameworks do
    refused = torch.cuda.CUDAGraph()
    refused.on_default_stream = True
    try:
        refused.capture_begin()
    except RuntimeError:
        pass
    graphed = torch.cuda.make_graphed_callables(lambda x: x, (1,))
    graphed(1)
    graphed(2)
    import torch.autograd
    torch.autograd.backward(None, reentrant=True)
    from torch._inductor import cudagraph_trees
    manager = cudagraph_trees.CUDAGraphTreeManager()
    node = cudagraph_trees.CUDAGraphNode(5)
    node._record(lambda inputs: None, [])
    cudagraph_trees.log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to mutated inputs (1 instances)")
    held = node.outputs
    held.append(cudagraph_trees._Output())
    manager.current_node = node
    manager.dealloc_current_path_weakrefs()
    print("sitecustomize chained:", os.environ.get("CHAINED_SITECUSTOMIZE"))
    raise RuntimeError("Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run.")
''')
PROGRAM_LINES = {name: PROGRAM.splitlines().index(line) + 1 for name, line in (
    ("pageable", '        raise RuntimeError("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the '
                 'CPU tensor is pinned.")'),
    ("uncaught", 'raise RuntimeError("Error: accessing tensor output of CUDAGraphs that has been overwritten by a '
                 'subsequent run.")'),
    ("refused", '    refused.capture_begin()'))}

# Tensors a graph reads, moved after capture: a parameter of a graphed module rebound, a manual capture's static input
# rebound, its output kept across replays; and the same without the defects. The probe needs of a tensor only
# is_cuda and data_ptr, of a module named_parameters, named_buffers and forward.
STATE_PROGRAM = textwrap.dedent('''\
    import ctypes, os
    ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
    import torch
    addresses = [0x7f0000000000]
    class Tensor:
        is_cuda = True
        def __init__(self):
            addresses[0] += 0x1000
            self.address = addresses[0]
        def data_ptr(self):
            return self.address
    class Linear:
        def __init__(self):
            self.weight, self.bias, self.running = Tensor(), Tensor(), Tensor()
        def named_parameters(self):
            return [("weight", self.weight), ("bias", self.bias)]
        def named_buffers(self):
            return [("running", self.running)]
        def forward(self, x):
            return x
        def __call__(self, *args):
            return self.forward(*args)
    def compute(x):
        return Tensor()
    model = torch.cuda.make_graphed_callables(Linear(), (Tensor(),))
    model(Tensor())
    model.weight = Tensor()
    model(Tensor())
    model(Tensor())
    clean = torch.cuda.make_graphed_callables(Linear(), (Tensor(),))
    for _ in range(20):
        clean(Tensor())
    def manual(defects):
        g = torch.cuda.CUDAGraph()
        static_x = Tensor()
        with torch.cuda.graph(g):
            static_y = compute(static_x)
        kept = []
        for step in range(12):
            if defects and step == 3:
                static_x = Tensor()
            else:
                static_x.address = static_x.address  # refilled in place
            g.replay()
            kept.append(static_y if defects else compute(static_y))
    manual(defects=True)
    manual(defects=False)
    def recaptured():  # a new static input, captured again into the same graph: nothing rebound
        g = torch.cuda.CUDAGraph()
        for _ in range(2):
            static_x = Tensor()
            with torch.cuda.graph(g):
                static_y = compute(static_x)
            for _ in range(3):
                g.replay()
    recaptured()
    print("done")
''')
STATE_LINES = {name: STATE_PROGRAM.splitlines().index(line) + 1 for name, line in (
    ("drift", "model.weight = Tensor()"), ("replay", "        g.replay()"))}
STATE_LINES["drift"] += 1  # reported at the next call

with tempfile.TemporaryDirectory() as work:
    program = os.path.join(work, "train.py")
    with open(program, "w") as f:
        f.write(PROGRAM)
    own_site = os.path.join(work, "own_site")
    os.mkdir(own_site)
    with open(os.path.join(own_site, "sitecustomize.py"), "w") as f:
        f.write("import os\nos.environ['CHAINED_SITECUSTOMIZE'] = 'yes'\n")
    traces = os.path.join(work, "traces")
    os.mkdir(traces)
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": os.pathsep.join([probe_dir, os.path.join(here, "fake_torch"), own_site]),
        "CUDA_INJECTION64_PATH": inject,
        "GRAPHCHECK_TRACE_DIR": traces,
        "LD_LIBRARY_PATH": stub_dir + os.pathsep + env.get("LD_LIBRARY_PATH", ""),
    })

    def run_program(name, source, run_env=env, timeout=60):
        """Writes `source` to NAME in the work folder and runs it: the run, and the traces it wrote."""
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(source)
        before = set(os.listdir(traces))
        ran = subprocess.run([sys.executable, path], env=run_env, capture_output=True, text=True, timeout=timeout)
        return ran, sorted(os.path.join(traces, n) for n in os.listdir(traces) if n not in before)

    run = subprocess.run([sys.executable, program], env=env, capture_output=True, text=True, timeout=120)
    check("the program ran to its uncaught exception", run.returncode == 1, run.stderr)
    check("the program's own sitecustomize ran after the probe's", "sitecustomize chained: yes" in run.stdout,
          run.stdout + run.stderr)
    check("the probe said nothing on stderr", "graphcheck: Python probe" not in run.stderr, run.stderr)
    files = [os.path.join(traces, name) for name in os.listdir(traces)]
    check("one trace", len(files) == 1, files)

    dumped = dump(files[0])
    events = [line.split() for line in dumped.splitlines() if " origin " in line]
    kinds = [e[3] for e in events]
    begins = {e[5] for e in events if e[3] == "capture-begin"}
    check("capture begins of every origin", begins == {"user", "make_graphed_callables", "cudagraph-trees-init",
                                                       "cudagraph-trees"}, dumped)
    check("capture begins", kinds.count("capture-begin") == 5, kinds)
    trees = [e for e in events if e[3] == "capture-begin" and e[5] == "cudagraph-trees"]
    check("the compiled function's id", trees and trees[0][11] == "6", trees)
    modes = [e[12] for e in events if e[3] == "capture-begin"]
    check("capture modes", modes.count("thread_local") == 2 and modes.count("global") == 3, modes)
    check("no event per replay", "replay" not in kinds, kinds)
    check("the allocator's history: its allocation and completed free, at exit",
          "allocator history: 1 allocation, 1 free" in dumped, dumped[-2000:])
    check("capture ends with their pool", [e[9] for e in events if e[3] == "capture-end"][:1] == ["7"], events)
    check("the exceptions", kinds.count("capture-exception") == 2 and kinds.count("uncaught-exception") == 1, kinds)
    check("the outermost backward() only, begun and ended",
          kinds.count("backward-begin") == 1 and kinds.count("backward-end") == 1, kinds)
    check("the skip reason and the invalidated outputs",
          kinds.count("compile-skip") == 1 and kinds.count("outputs-invalidated") == 1, kinds)

    report = subprocess.run([graphcheck, "analyze", files[0], "--format", "json", "--fail-on", "never"],
                            capture_output=True, text=True)
    findings = json.loads(report.stdout)["findings"]

    def where(finding):
        user = [f for f in finding["where"].get("python", []) if f.get("user")]
        return (os.path.basename(user[0]["file"]), user[0]["line"]) if user else None

    def user_frames(finding):
        return [(os.path.basename(f["file"]), f["line"]) for f in finding["where"].get("python", []) if f.get("user")]

    by_id = {f["check_id"]: f for f in findings}
    check("pageable-memcpy at the raising line", "pageable-memcpy" in by_id and
          where(by_id["pageable-memcpy"]) == ("train.py", PROGRAM_LINES["pageable"]), findings)
    check("a refused capture_begin at the calling line", "legacy-stream-in-capture" in by_id and
          where(by_id["legacy-stream-in-capture"]) == ("train.py", PROGRAM_LINES["refused"]), findings)
    check("output-overwritten at the reading line", "output-overwritten" in by_id and
          where(by_id["output-overwritten"]) == ("train.py", PROGRAM_LINES["uncaught"]), findings)
    check("output-overwritten counts the invalidated output",
          any("freed 1 output " in e for e in by_id.get("output-overwritten", {}).get("evidence", [])), findings)
    check("compile-cudagraph-skipped with the reason",
          "mutated inputs" in by_id.get("compile-cudagraph-skipped", {}).get("message", ""), findings)
    # cupti-busy: on the stub driver CUPTI cannot subscribe, and the trace says so.
    check("nothing else", sorted(by_id) == ["compile-cudagraph-skipped", "cupti-busy", "legacy-stream-in-capture",
                                            "output-overwritten", "pageable-memcpy"], sorted(by_id))

    # State moved after capture: one finding each, at the call or replay that first read stale memory.
    ran, state_trace = run_program("state.py", STATE_PROGRAM, timeout=120)
    check("the state program ran", ran.returncode == 0 and ran.stdout == "done\n", ran.stdout + ran.stderr)
    check("the state program's trace", len(state_trace) == 1, state_trace)
    report = subprocess.run([graphcheck, "analyze", state_trace[0], "--format", "json", "--fail-on", "never"],
                            capture_output=True, text=True)
    state_findings = [f for f in json.loads(report.stdout)["findings"] if f["check_id"] != "cupti-busy"]
    state_by_id = {}
    for finding in state_findings:
        state_by_id.setdefault(finding["check_id"], []).append(finding)
    check("state: one finding per defect", sorted(state_by_id) == ["address-drift", "output-overwritten",
                                                                   "static-input-rebound"]
          and all(len(v) == 1 for v in state_by_id.values()), state_findings)
    drift = state_by_id.get("address-drift", [{}])[0]
    # The fake module's __call__ is the program's code (torch's nn.Module.__call__ is not): the line is its caller's.
    check("address-drift names the parameter, at the next call", "The parameter weight " in drift.get("message", "")
          and ("state.py", STATE_LINES["drift"]) in user_frames(drift), drift)
    rebound = state_by_id.get("static-input-rebound", [{}])[0]
    check("static-input-rebound names the variable, at the replay", "`static_x`" in rebound.get("message", "")
          and where(rebound) == ("state.py", STATE_LINES["replay"]), rebound)
    held = state_by_id.get("output-overwritten", [{}])[0]
    check("output-overwritten names the kept output", "`static_y`" in held.get("message", "")
          and where(held) == ("state.py", STATE_LINES["replay"]), held)
    tensors = [line for line in dump(state_trace[0], 1000).splitlines() if "graph-tensors" in line]
    check("a manual capture's manifest names its static input and output before the capture ends",
          any("static-input" in line and "static_x" in line and "static-output" in line and "static_y" in line
              for line in tensors), tensors)

    # The program's steps: an optimizer stepped in a loop of 6 passes, then in another of 5. Each pass is one
    # program-step event, phase by loop, and the analysis cuts the steps at the busier loop.
    ran, loop_traces = run_program("loops.py",
                                   "import ctypes, os\n"
                                   "ctypes.CDLL(os.environ['CUDA_INJECTION64_PATH']).InitializeInjection()\n"
                                   "import torch.optim\n"
                                   "def main():\n"
                                   "    optimizer = torch.optim.Optimizer([])\n"
                                   "    for step in range(6):\n"
                                   "        optimizer.step()\n"
                                   "    for step in range(5):\n"
                                   "        optimizer.step()\n"
                                   "    print('trained')\n"
                                   "main()\n")
    check("the loops program ran", ran.returncode == 0 and ran.stdout == "trained\n", ran.stdout + ran.stderr)
    dumped = dump(loop_traces[0])
    marks = [line for line in dumped.splitlines() if "program-step" in line]
    check("one program-step event per pass", len(marks) == 11 and sum("loops.py:6 in main" in m for m in marks) == 6
          and sum("loops.py:8 in main" in m for m in marks) == 5, dumped[-3000:])
    report = subprocess.run([graphcheck, "analyze", loop_traces[0], "--format", "json", "--fail-on", "never"],
                            capture_output=True, text=True)
    scope = json.loads(report.stdout).get("coverage", {}).get("scope", "") if report.returncode == 0 else ""
    # No kernel runs on the stub driver: the coverage counts the steps only, the first loop's 5 less the first.
    check("the steps are the busiest loop's passes", "(eager steps 1-4)" in scope, report.stdout[-2000:] + report.stderr)

    # Captures begun by Transformer Engine's and Megatron Core's graph code (stand-ins at their real module paths): the
    # probe names who began them.
    ran, framework_traces = run_program("frameworks.py",
                                        "import ctypes, os\n"
                                        "ctypes.CDLL(os.environ['CUDA_INJECTION64_PATH']).InitializeInjection()\n"
                                        "from transformer_engine.pytorch import graph as te_graph\n"
                                        "from megatron.core.transformer import cuda_graphs\n"
                                        "te_graph.make_graphed_callables(lambda x: x, (1,))\n"
                                        "cuda_graphs.create_cudagraphs([lambda: None, lambda: None])\n"
                                        "print('captured')\n")
    check("the frameworks program ran", ran.returncode == 0 and ran.stdout == "captured\n", ran.stdout + ran.stderr)
    dumped = dump(framework_traces[0])
    origins = [e.split()[5] for e in dumped.splitlines() if " origin " in e and e.split()[3] == "capture-begin"]
    check("captures begun by Transformer Engine and Megatron", origins == ["transformer-engine", "megatron",
                                                                         "megatron"], dumped)

    # Megatron Core refusing a call none of a layer's graphs matches names no mismatch; the probe asks the runners, and
    # the exception the trace keeps says how the call differs.
    ran, refused_traces = run_program("refused.py",
                                      "import ctypes, os\n"
                                      "ctypes.CDLL(os.environ['CUDA_INJECTION64_PATH']).InitializeInjection()\n"
                                      "from megatron.core.transformer import cuda_graphs\n"
                                      "manager = cuda_graphs.CudaGraphManager([(64, 4, 128), (32, 4, 128)])\n"
                                      "manager.get_runner(((48, 4, 128),), {})\n")
    check("the refused call ends the program", ran.returncode == 1 and "no matching cudagraph runners" in ran.stderr,
          ran.stdout + ran.stderr)
    refused_stderr = os.path.join(work, "refused.stderr")
    with open(refused_stderr, "w") as f:
        f.write(ran.stderr)
    refused_report = os.path.join(work, "refused.json")
    subprocess.run([graphcheck, "analyze", refused_traces[0], "--stderr", refused_stderr, "--format", "json", "-o",
                    refused_report, "--fail-on", "never"], capture_output=True, text=True)
    with open(refused_report) as f:
        shape = [x for x in json.load(f)["findings"] if x["check_id"] == "dynamic-shape"]
    evidence = shape[0]["evidence"] if shape else []
    check("dynamic-shape quotes the runners' mismatches, at the refused call's line",
          "runner 1 of 2:" in evidence and
          "- Tensor mismatch at args[0]: Received shape (48, 4, 128) but expected (64, 4, 128)" in evidence and
          "- Tensor mismatch at args[0]: Received shape (48, 4, 128) but expected (32, 4, 128)" in evidence and
          ("refused.py", 5) in user_frames(shape[0]), shape)

    # A graph the program deletes is freed at once, under --shadow and --hang-timeout too: the probe holds no reference
    # to it (a snapshot of the capturing function's variables held one, and NCCL's teardown waited on the graph for
    # ever on two H100s).
    watched_env = dict(env, GRAPHCHECK_SHADOW="2", GRAPHCHECK_HANG_TIMEOUT_MS="60000")
    ran, _ = run_program("deleted.py", textwrap.dedent('''\
            import ctypes, os, weakref
            ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
            import torch
            def main():
                graph = torch.cuda.CUDAGraph()
                static_x = [1]
                with torch.cuda.graph(graph):
                    static_y = static_x
                for _ in range(3):
                    graph.replay()
                ref = weakref.ref(graph)
                del graph
                print("freed" if ref() is None else "alive")
            main()
        '''), run_env=watched_env)
    check("a graph the program deletes is freed", ran.stdout.strip() == "freed", ran.stdout + ran.stderr)

    # A graph the program resets is no longer announced alive before destroy_process_group: it holds no NCCL work
    # (Megatron's local graphs, reset before the teardown on two H200s).
    ran, _ = run_program("reset.py", textwrap.dedent('''\
            import ctypes, os
            ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
            import torch
            from graphcheck_probe import waits
            kept, reset = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
            for graph in (kept, reset):
                with torch.cuda.graph(graph):
                    pass
            reset.reset()
            print(kept in waits.live_graphs, reset in waits.live_graphs)
        '''), run_env=watched_env)
    check("a reset graph is not announced alive", ran.stdout.strip() == "True False", ran.stdout + ran.stderr)

    # A setting set by hand that is not as graphcheck writes it: neither the recorder nor the probe starts, each says
    # which variable and why, and the program runs on as without them.
    ran, bad_setting_traces = run_program("bad_setting.py", textwrap.dedent('''\
            import ctypes, os
            print(ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection())
            import torch
        '''), run_env=dict(env, GRAPHCHECK_SHADOW="two"))
    bad_setting = 'GRAPHCHECK_SHADOW is "two": not a whole number from 0 to 4294967295'
    check("a bad setting starts neither the recorder nor the probe, and says so",
          ran.returncode == 0 and ran.stdout == "0\n" and not bad_setting_traces and
          "graphcheck: recorder not started: " + bad_setting in ran.stderr and
          "graphcheck: Python probe not started: " + bad_setting in ran.stderr, ran.stdout + ran.stderr)

    # A program that makes no capture: the same output with and without the probe, and no probe event.
    quiet = os.path.join(work, "quiet.py")
    with open(quiet, "w") as f:
        f.write("import ctypes, os, json\n"
                "ctypes.CDLL(os.environ['CUDA_INJECTION64_PATH']).InitializeInjection()\n"
                "import torch\nprint(sum(range(10)), json.dumps({'a': 1}))\n")
    before = set(os.listdir(traces))
    with_probe = subprocess.run([sys.executable, quiet], env=env, capture_output=True, text=True, timeout=60)
    plain_env = dict(env, PYTHONPATH=os.path.join(here, "fake_torch"))
    without = subprocess.run([sys.executable, quiet], env=plain_env, capture_output=True, text=True, timeout=60)
    check("no capture: the same output", (with_probe.returncode, with_probe.stdout) == (without.returncode,
                                                                                        without.stdout))
    quiet_traces = sorted(os.path.join(traces, n) for n in os.listdir(traces) if n not in before)
    quiet_dump = dump(quiet_traces[0], 10)
    check("no capture: no probe event", "python probe events (first 0 of 0)" in quiet_dump, quiet_dump)
    check("no CUDA use: no allocator history", "allocator history: 0 allocations, 0 frees" in quiet_dump, quiet_dump)

    # CUDA_INJECTION64_PATH naming another tool's library (Nsight's, say): the probe records nothing and never raises.
    ran, _ = run_program("other.py",
                         "import ctypes\nctypes.CDLL('libm.so.6')\nimport torch\n"
                         "g = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    pass\nprint('captured')\n",
                         run_env=dict(env, CUDA_INJECTION64_PATH="libm.so.6"))
    check("another tool's injection library: the program runs untouched",
          ran.returncode == 0 and ran.stdout == "captured\n" and ran.stderr == "", ran.stdout + ran.stderr)

print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
