"""Tests of PythonStackReader (capture/python_stack.h) inside a real interpreter, through the ctypes-loaded test library
tests/capture/python_stack_testlib.cc. Every case compares the reader's frames with what Python itself says at the same
place: traceback.extract_stack()'s file and line, and the function's co_qualname (3.11+) or co_name (3.10), innermost
first. Each case runs twice: through ctypes.CDLL, which releases the GIL during the call as PyTorch does under
Tensor.item(), and through ctypes.PyDLL, which holds it.

usage: python3.X tests/capture/python_stack_test.py PATH/TO/libpython_stack_testlib.so [unittest options]"""
import asyncio
import ctypes
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import traceback
import unittest

LIBRARY = None  # the test library's path, from the command line
MAX_FRAMES = 256
BUFFER_SIZE = 1 << 20


def load(loader):
    lib = loader(LIBRARY)
    lib.pystack_capture.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.pystack_capture_native_thread.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.pystack_ns_per_capture.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.pystack_ns_per_capture.restype = ctypes.c_double
    return lib


def decode(count, buffer):
    """The frames the library wrote, as (file, line, function) tuples."""
    if count < 0:
        raise AssertionError("pystack call failed: %d" % count)
    frames = [tuple(record.split("\x1f")) for record in buffer.value.decode("utf-8").split("\x1e") if record]
    assert len(frames) == count, (count, frames)
    return [(file, int(line), function) for file, line, function in frames]


def expected_stack(frame):
    """What the reader should report for `frame` and its callers, innermost first."""
    summaries = list(reversed(traceback.extract_stack(frame)))
    frames = [f for f, _ in traceback.walk_stack(frame)]
    assert len(summaries) == len(frames)
    result = []
    for summary, f in zip(summaries, frames):
        assert summary.name == f.f_code.co_name
        # The reader writes "?" for a lone surrogate, as str.encode("utf-8", "replace") does.
        file = summary.filename.encode("utf-8", "replace").decode("utf-8")
        result.append((file, summary.lineno or 0, getattr(f.f_code, "co_qualname", f.f_code.co_name)))
    return result


def capture(lib, max_frames=MAX_FRAMES):
    """(the reader's frames, Python's frames) of this very call; both are taken on the same line, so they agree."""
    buffer = ctypes.create_string_buffer(BUFFER_SIZE)
    count, want = lib.pystack_capture(max_frames, buffer, len(buffer)), expected_stack(sys._getframe())
    return decode(count, buffer), want


def recurse(depth, callback):
    return callback() if depth == 0 else recurse(depth - 1, callback)


class Outer:
    def method(self, lib):
        def inner():
            return capture(lib)

        return inner()

    @staticmethod
    def static(lib):
        return capture(lib)


class Constructed:
    def __init__(self, lib):
        self.result = capture(lib)


NON_ASCII_MODULES = {
    # Latin-1 (one-byte kind) file and function names.
    "módulo_ñ.py": """
        def función(callback):
            return callback()
        """,
    # Two-byte (Ω, 函) and four-byte (𠀀, U+20000) kinds.
    "模块_𠀀.py": """
        class Ωmega:
            def 函数(self, callback):
                return callback()

        def 𠀀(callback):
            return Ωmega().函数(callback)
        """,
}


class ReaderTest:
    """The cases; subclasses say how the library is loaded."""

    loader = None

    @classmethod
    def setUpClass(cls):
        cls.lib = load(cls.loader)

    def assertCaptured(self, result, min_frames=2):
        got, want = result
        self.assertGreaterEqual(len(got), min_frames)
        self.assertEqual(got, want)
        return got

    def test_detects_running_version(self):
        self.assertEqual(self.lib.pystack_minor_version(), sys.version_info.minor)

    def test_plain_call(self):
        got = self.assertCaptured(capture(self.lib))
        self.assertEqual(got[0][0], os.path.abspath(__file__).encode("utf-8", "replace").decode("utf-8"))
        self.assertEqual(got[0][2], "capture")

    def test_nested_function_and_methods(self):
        got = self.assertCaptured(Outer().method(self.lib))
        names = [function for _, _, function in got[:3]]
        if sys.version_info >= (3, 11):
            self.assertEqual(names, ["capture", "Outer.method.<locals>.inner", "Outer.method"])
        else:
            self.assertEqual(names, ["capture", "inner", "method"])
        got = self.assertCaptured(Outer.static(self.lib))
        self.assertEqual(got[1][2], "Outer.static" if sys.version_info >= (3, 11) else "static")

    def test_constructor(self):
        # 3.12+ runs __init__ under an interpreter shim frame, which must not show.
        # Repeated, so that the adaptive interpreter (3.11+) specializes the call and enters __init__ directly.
        for _ in range(20):
            got = self.assertCaptured(Constructed(self.lib).result)
            self.assertEqual(got[1][2], "Constructed.__init__" if sys.version_info >= (3, 11) else "__init__")

    def test_through_c_code(self):
        # map() and list() are C: the chain crosses interpreter entries (shim frames on 3.12+).
        self.assertCaptured(list(map(lambda _: capture(self.lib), [0]))[0])
        self.assertCaptured(sorted([(0, capture(self.lib))], key=lambda item: item[0])[0][1])

    def test_generator(self):
        def generator():
            yield capture(self.lib)

        def delegating():
            yield from generator()

        got = self.assertCaptured(next(generator()))
        self.assertTrue(got[1][2].endswith("generator"))
        got = self.assertCaptured(next(delegating()))
        self.assertTrue(got[2][2].endswith("delegating"))

    def test_coroutine(self):
        async def inner():
            await asyncio.sleep(0)
            return capture(self.lib)

        async def outer():
            return await inner()

        got = self.assertCaptured(asyncio.run(outer()))
        self.assertTrue(got[1][2].endswith("inner"))
        self.assertTrue(got[2][2].endswith("outer"))

    def test_thread(self):
        results = []
        thread = threading.Thread(target=lambda: results.append(recurse(3, lambda: capture(self.lib))))
        thread.start()
        thread.join()
        got = self.assertCaptured(results[0])
        self.assertTrue(any(function.endswith("run") for _, _, function in got))  # threading.Thread.run

    def test_non_ascii_names(self):
        with tempfile.TemporaryDirectory() as directory:
            modules = {}
            for name, source in NON_ASCII_MODULES.items():
                path = os.path.join(directory, name)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(textwrap.dedent(source))
                spec = importlib.util.spec_from_file_location(name[:-3], path)
                modules[name] = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(modules[name])
            got = self.assertCaptured(modules["módulo_ñ.py"].función(lambda: capture(self.lib)))
            self.assertEqual(got[2][2], "función")
            self.assertTrue(got[2][0].endswith("/módulo_ñ.py"))
            got = self.assertCaptured(getattr(modules["模块_𠀀.py"], "𠀀")(lambda: capture(self.lib)))
            self.assertEqual([function for _, _, function in got[2:4]],
                             ["Ωmega.函数", "𠀀"] if sys.version_info >= (3, 11) else ["函数", "𠀀"])
            self.assertTrue(got[2][0].endswith("/模块_𠀀.py"))

    def test_unencodable_file_name(self):
        # A file name decoded with surrogateescape holds lone surrogates, which have no UTF-8 form.
        namespace = {}
        exec(compile("def f(callback):\n    return callback()\n", "/tmp/bad_\udcff.py", "exec"), namespace)
        got = self.assertCaptured(namespace["f"](lambda: capture(self.lib)))
        self.assertEqual(got[2][0], "/tmp/bad_?.py")

    def test_inside_trace_function(self):
        # While a tracer runs, CPython reports the traced frame's f_lineno (set for the event) as its line; the reader
        # does the same. Every event of a function with a loop, branches and an exception.
        results = []

        def traced():
            total = 0
            for i in range(3):
                if i % 2:
                    total += i
                else:
                    total -= 1
            try:
                raise ValueError
            except ValueError:
                total += 1
            return total

        def tracer(frame, event, arg):
            if frame.f_code is traced.__code__:
                results.append((event, capture(self.lib)))
            return tracer

        sys.settrace(tracer)
        try:
            traced()
        finally:
            sys.settrace(None)
        self.assertEqual({event for event, _ in results}, {"call", "line", "exception", "return"})
        for event, result in results:
            with self.subTest(event=event):
                got = self.assertCaptured(result)
                self.assertTrue(got[2][2].endswith("traced"))

    def test_after_tracer_jump(self):
        # A tracer that sets f_lineno jumps; the reader must give the new line while the tracer still runs.
        results = []

        def jumped():
            x = 1
            x = 2
            return x

        first = jumped.__code__.co_firstlineno

        def tracer(frame, event, arg):
            if frame.f_code is jumped.__code__ and event == "line" and frame.f_lineno == first + 2:
                frame.f_lineno = first + 3
                results.append(capture(self.lib))
            return tracer

        sys.settrace(tracer)
        try:
            self.assertEqual(jumped(), 1)
        finally:
            sys.settrace(None)
        got = self.assertCaptured(results[0])
        self.assertEqual(got[2][1], first + 3)
        self.assertTrue(got[2][2].endswith("jumped"))

    def test_native_thread_has_no_frames(self):
        buffer = ctypes.create_string_buffer(BUFFER_SIZE)
        self.assertEqual(decode(self.lib.pystack_capture_native_thread(MAX_FRAMES, buffer, len(buffer)), buffer), [])

    def test_deep_recursion_keeps_innermost(self):
        got, want = recurse(300, lambda: capture(self.lib, max_frames=64))
        self.assertGreater(len(want), 300)
        self.assertEqual(len(got), 64)
        self.assertEqual(got, want[:64])

    def test_zero_max(self):
        got, _ = capture(self.lib, max_frames=0)
        self.assertEqual(got, [])


class ReleasedGilTest(ReaderTest, unittest.TestCase):
    loader = ctypes.CDLL


class HeldGilTest(ReaderTest, unittest.TestCase):
    loader = ctypes.PyDLL


class LifecycleTest(unittest.TestCase):
    def test_empty_while_finalizing(self):
        # An object's __del__ run by interpreter shutdown (module teardown) captures nothing: the thread states may
        # already be going away.
        program = textwrap.dedent("""
            import ctypes, os, sys
            lib = ctypes.CDLL(sys.argv[1])
            lib.pystack_capture.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
            class Late:
                def __del__(self, lib=lib, write=os.write, buffer=ctypes.create_string_buffer(1 << 16)):
                    write(1, b"at exit: %d\\n" % lib.pystack_capture(64, buffer, len(buffer)))
            late = Late()
            buffer = ctypes.create_string_buffer(1 << 16)
            print("running: %d" % lib.pystack_capture(64, buffer, len(buffer)), flush=True)
            """)
        output = subprocess.run([sys.executable, "-c", program, LIBRARY], check=True, capture_output=True,
                                text=True).stdout
        self.assertEqual(output, "running: 1\nat exit: 0\n")


class CostTest(unittest.TestCase):
    def test_cost_of_a_twenty_frame_capture(self):
        lib = load(ctypes.CDLL)
        frames = ctypes.c_int()

        def measure():
            depth = len(traceback.extract_stack())
            return depth, lib.pystack_ns_per_capture(64, 20000, ctypes.byref(frames))

        depth, ns = recurse(20 - len(traceback.extract_stack()) - 2, measure)
        self.assertEqual(frames.value, depth)
        print("\nPython %s: %.0f ns per Capture() of a %d-frame stack" % (sys.version.split()[0], ns, frames.value),
              file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    LIBRARY = sys.argv.pop(1)
    unittest.main(verbosity=2)
