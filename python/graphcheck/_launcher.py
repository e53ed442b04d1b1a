"""The `graphcheck` console script: runs the packaged C++ tool (bin/graphcheck) with the environment's own libraries.

The binaries link torch (the engine), the CUDA runtime and CUPTI (the recorder) but carry none of them: they are the
ones pip installed beside torch (torch/lib, nvidia/*/lib), found here without importing torch, and put first on
LD_LIBRARY_PATH, which the recorded program inherits too. `graphcheck check` runs the engine, which loads torch's C++
libraries: a torch other than the one it was built against is refused before it starts, with one line.
"""
import importlib.util
import os
import re
import sys
from pathlib import Path

from graphcheck import _build_info

BIN_DIR = Path(__file__).resolve().parent / "bin"
# Exit code of a usage or environment error, as the C++ tool's (core/exit_code.h).
EXIT_USAGE = 2


def _package_dir(name):
    """The folder of an installed top-level package, found without importing it (importing torch takes seconds)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return [Path(p) for p in spec.submodule_search_locations]
    return [Path(spec.origin).parent] if spec.origin else None


def library_dirs():
    """torch/lib and every nvidia/*/lib of the environment (cu13/lib holds libcudart and libcupti in CUDA 13 wheels)."""
    dirs = []
    for torch_dir in _package_dir("torch") or []:
        if (torch_dir / "lib").is_dir():
            dirs.append(torch_dir / "lib")
    for nvidia_dir in _package_dir("nvidia") or []:
        dirs.extend(sorted(d for d in nvidia_dir.glob("*/lib") if d.is_dir()))
    return [str(d) for d in dirs]


def installed_torch():
    """(version, cuda) of the environment's torch from its version.py, or None when there is none."""
    for torch_dir in _package_dir("torch") or []:
        try:
            text = (torch_dir / "version.py").read_text()
        except OSError:
            continue
        version = re.search(r"^__version__\s*(?::\s*str\s*)?=\s*['\"]([^'\"]+)", text, re.M)
        cuda = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)", text, re.M)
        if version:
            return version.group(1), cuda.group(1) if cuda else None
    return None


def _major_minor(version):
    return tuple(version.split("+")[0].split(".")[:2])


def torch_problem():
    """Why the packaged engine cannot load the environment's torch, or None when it can."""
    built = f"torch {_build_info.TORCH_VERSION} (CUDA {_build_info.CUDA_MAJOR})"
    found = installed_torch()
    if found is None:
        return f"graphcheck check needs {built} in this Python environment, and it has no torch"
    version, cuda = found
    if _major_minor(version) != _major_minor(_build_info.TORCH_VERSION):
        return f"this graphcheck was built against {built}; this environment has torch {version}"
    if cuda is None or cuda.split(".")[0] != _build_info.CUDA_MAJOR:
        return f"this graphcheck was built against {built}; this environment's torch {version} is built for " + (
            f"CUDA {cuda}" if cuda else "no CUDA (a CPU-only build)")
    return None


def _subcommand(args):
    return next((a for a in args if not a.startswith("-")), None)


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    if _subcommand(args) == "check" and "--engine" not in args:
        problem = torch_problem()
        if problem:
            print(f"graphcheck: error: {problem}: install torch=={_build_info.TORCH_VERSION} or build graphcheck "
                  "against yours (pip install --no-build-isolation .)", file=sys.stderr)
            return EXIT_USAGE
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(library_dirs() + [p for p in env.get("LD_LIBRARY_PATH", "").split(
        os.pathsep) if p])
    executable = BIN_DIR / "graphcheck"
    try:
        os.execve(executable, [str(executable)] + args, env)
    except OSError as error:
        print(f"graphcheck: error: cannot run {executable}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
