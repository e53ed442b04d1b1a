"""steps.py in each CPython the probe may meet (one ctest entry per interpreter): the loop around an optimizer.step()
is read from bytecode whose jumps changed between 3.10 and 3.13, and a frame's activation from its f_trace. Programs
are compiled under the names of a program's and a library's files; `step()` stands in for torch's Optimizer.step,
whose global pre-hook is steps.optimizer_stepping, and `replay()` for CUDAGraph.replay (steps.replaying), which marks
passes until the first optimizer step. No torch needed.

usage: program_steps_test.py PROBE_DIR
"""
import sys
import textwrap

sys.path.insert(0, sys.argv[1])
from graphcheck_probe import events, steps, watches  # noqa: E402

sent = []
events.program_step = lambda *, phase, loop, anchor: sent.append((phase, loop, anchor))
capturing = [False]
watches.capture_under_way = lambda: capturing[0]
failures = []


def step(*_):
    """Optimizer.step's stand-in, in a file of the probe's tests: its frame is torch's wrapper's."""
    steps.optimizer_stepping(None, (), {})


def replay(*_):
    """CUDAGraph.replay's stand-in: its frame is torch's."""
    steps.replaying(sys._getframe(1))


def load(source, path):
    """Runs `source` as the module at `path` and returns its namespace."""
    namespace = {"step": step, "replay": replay, "__name__": path}
    exec(compile(textwrap.dedent(source), path, "exec"), namespace)
    return namespace


def check(name, condition, detail):
    if not condition:
        failures.append("%s: %s" % (name, detail))


def run(name, function, *args):
    del sent[:]
    function(*args)
    return list(sent)


program = load("""
    def train_step():
        step()

    def twin_then_graphed(n):
        for i in range(n):        # line 6: the eager twin's loop
            train_step()
        for i in range(n):        # line 8: the graphed loop
            train_step()

    def two_optimizers(n):
        for i in range(n):        # line 12
            step()                # the discriminator's
            step()                # the generator's

    def accumulated(n, every):
        for i in range(n):        # line 17
            if (i + 1) % every == 0:
                step()

    def one_epoch(n):
        i = 0
        while i < n:              # line 23
            train_step()
            i += 1

    def epochs(count, n):
        for epoch in range(count):
            one_epoch(n)

    def no_loop():
        train_step()
        train_step()

    def inline_then_nested(n):
        for i in range(n):        # line 36
            for j in range(2):    # line 37: a loop inside the step is no step's loop ... when it runs the call
                pass
            step()

    def epochs_in_one_frame(count, n):
        for epoch in range(count):
            for batch, target in zip(range(n), range(n)):   # line 43
                step()
            evaluated = [i * 2 for i in range(3)]
    """, "/work/user/train.py")

# Before any optimizer step: a serving program's passes, marked at its replays.
serving = load("""
    def served_twice(n):
        for i in range(n):        # line 3: the warm-up loop, a replay each
            replay()
        for i in range(n):        # line 5: the served loop: a graphed module's call, two replays inside
            graphed_call()

    def graphed_call():
        replay()                  # the encoder's graph
        replay()                  # the decoder's

    def serve_prompts(generate, prompts):
        for prompt in prompts:    # line 13
            generate(8)
    """, "/work/user/serve.py")
decoder = load("""
    def generate(tokens):
        for token in range(tokens):   # line 3: the library's decode loop
            replay()
    """, "/usr/lib/python3/site-packages/decoder_lib/generation.py")
marks = run("replays: two loops", serving["served_twice"], 4)
check("replays: one mark per pass of each loop, named a replay's", [m[1:] for m in marks] ==
      [("/work/user/serve.py:3 in served_twice", events.StepAnchor.REPLAY)] * 4 +
      [("/work/user/serve.py:5 in served_twice", events.StepAnchor.REPLAY)] * 4, marks)
check("replays: two loops are two phases", len({m[0] for m in marks}) == 2, marks)
marks = run("replays: a library's decode loop", serving["serve_prompts"], decoder["generate"], range(3))
check("replays: a decode loop inside the program's loop is one pass", len(marks) == 3 and
      all(m[1].endswith("serve.py:13 in serve_prompts") for m in marks), marks)
stopped = []
steps.when_replays_stop(lambda: stopped.append(1))
marks = run("replays stop at the first optimizer step", program["twin_then_graphed"], 2)
check("the first optimizer step stops the replays' marks", stopped == [1] and not steps.replays_marked() and
      run("replays after", serving["served_twice"], 4) == [], (stopped, sent))

marks = run("two loops", program["twin_then_graphed"], 4)
check("two loops", [m[1:] for m in marks] ==
      [("/work/user/train.py:6 in twin_then_graphed", events.StepAnchor.OPTIMIZER_STEP)] * 4 +
      [("/work/user/train.py:8 in twin_then_graphed", events.StepAnchor.OPTIMIZER_STEP)] * 4, marks)
check("two loops are two phases", len({m[0] for m in marks[:4]}) == 1 and marks[0][0] != marks[4][0], marks)

marks = run("two optimizers", program["two_optimizers"], 5)
check("two optimizers in a pass: one mark per pass", len(marks) == 5 and len({m[0] for m in marks}) == 1, marks)

marks = run("accumulation", program["accumulated"], 12, 4)
check("accumulation: a mark per optimizer step", len(marks) == 3 and marks[0][1].endswith("train.py:17 in accumulated"),
      marks)

marks = run("epochs", program["epochs"], 3, 4)
check("epochs: a while loop", len(marks) == 12 and all(m[1].endswith(":23 in one_epoch") for m in marks), marks)
check("epochs: each call of the function is a phase", len({m[0] for m in marks}) == 3 and
      [m[0] for m in marks] == sorted(m[0] for m in marks), marks)

check("no loop: no mark", run("no loop", program["no_loop"]) == [], sent)

marks = run("nested loop that finished", program["inline_then_nested"], 3)
check("the loop running the call", len(marks) == 3 and all(m[1].endswith(":36 in inline_then_nested") for m in marks),
      marks)

marks = run("epochs of an inner loop", program["epochs_in_one_frame"], 3, 4)
check("an inner loop entered again in each epoch: a phase per epoch", len(marks) == 12 and
      all(m[1].endswith(":43 in epochs_in_one_frame") for m in marks) and len({m[0] for m in marks}) == 3, marks)

capturing[0] = True
check("inside a capture: no mark", run("capture", program["twin_then_graphed"], 3) == [], sent)
capturing[0] = False

# Under a tracer (a debugger, coverage) the activation is told by the frame's id: still one phase per loop.
sys.settrace(lambda frame, event, arg: None)
try:
    marks = run("traced", program["twin_then_graphed"], 3)
finally:
    sys.settrace(None)
check("under a tracer", len(marks) == 6 and len({m[0] for m in marks}) == 2, marks)

# A library's trainer runs the loop; the program only calls train(). The outermost library loop is the step's (not
# a chained optimizer's loop over its optimizers inside it).
library = load("""
    class Chained:
        def step(self):
            for inner in range(3):   # line 4: over the chained optimizers
                step()

    def train(n):
        chained = Chained()
        for iteration in range(n):   # line 9: the trainer's loop
            chained.step()
    """, "/usr/lib/python3/site-packages/trainer_lib/loop.py")
user = load("""
    def main(train):
        train(4)
    """, "/work/user/run.py")
marks = run("library loop", user["main"], library["train"])
check("a library's loop", len(marks) == 4 and all(m[1].endswith("loop.py:9 in train") for m in marks), marks)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("program steps: all cases pass on Python %d.%d" % sys.version_info[:2])
