"""Loaded by Python at start-up because `graphcheck run` puts this folder first on PYTHONPATH: it starts graphcheck's
Python probe (the graphcheck_probe package beside this file), then runs the sitecustomize the program would have run without
graphcheck (the next one on sys.path), so nothing the environment sets up there is lost."""
import os
import sys


def _start_probe():
    try:
        import graphcheck_probe

        graphcheck_probe.install()
    except Exception as error:  # the probe never stops the program
        sys.stderr.write("graphcheck: Python probe not started: %s\n" % (error,))


def _run_next_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_start_probe()
_run_next_sitecustomize()
