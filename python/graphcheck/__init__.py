"""graphcheck, installed with pip: the command-line tool (`graphcheck`, `python -m graphcheck`) and its binaries in
`bin/`. Everything it does is the C++ tool's; this package only finds the libraries of the environment's torch, CUDA
runtime and CUPTI for it (see _launcher.py)."""

__version__ = "0.1.0"
