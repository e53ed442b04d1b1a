"""Generates capture/internal/cpython_layouts.h: the field offsets and constants of CPython's frame, thread-state,
code and str structures that capture/python_stack.cc reads without the GIL, one table per supported minor version.

The offsets come from the interpreter's own headers: a small C program is compiled against each version's include
directory (internal headers too, with Py_BUILD_CORE defined) and prints offsetof()/sizeof() values and the bit masks
of the str `state` bitfield. Nothing links libpython. The generated header is committed, so building graphcheck never
needs these headers; run this again only to add or re-check a version.

usage: python3 scripts/gen_cpython_layouts.py [PYENV_VERSIONS_DIR]   (default: ~/.pyenv/versions)
Needs one installed 3.10.x, 3.11.x, 3.12.x and 3.13.x under that directory (the newest patch release of each is used)
and a C compiler (cc, or $CC)."""
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.join(HERE, "..", "capture", "internal", "cpython_layouts.h")
MINORS = (10, 11, 12, 13)

# Every field the reader uses: (name, what it is). -1 marks a field the version does not have.
FIELDS = [
    ("minor", "the 3.x minor version this table describes"),
    ("object_type", "PyObject.ob_type"),
    ("var_object_size", "PyVarObject.ob_size"),
    ("type_name", "PyTypeObject.tp_name"),
    ("tstate_frame", "PyThreadState.frame (3.10, a PyFrameObject*) or .current_frame (3.13, an interpreter frame)"),
    ("tstate_cframe", "PyThreadState.cframe (3.11, 3.12)"),
    ("cframe_current_frame", "_PyCFrame.current_frame (3.11, 3.12)"),
    ("frame_back", "PyFrameObject.f_back (3.10)"),
    ("frame_code", "PyFrameObject.f_code (3.10)"),
    ("frame_lasti", "PyFrameObject.f_lasti (3.10), in code units"),
    ("frame_lineno", "PyFrameObject.f_lineno"),
    ("iframe_code", "_PyInterpreterFrame.f_code (3.11, 3.12) or .f_executable (3.13)"),
    ("iframe_previous", "_PyInterpreterFrame.previous"),
    ("iframe_frame_obj", "_PyInterpreterFrame.frame_obj"),
    ("iframe_instr", "_PyInterpreterFrame.prev_instr (3.11, 3.12) or .instr_ptr (3.13)"),
    ("iframe_owner", "_PyInterpreterFrame.owner (a char)"),
    ("owned_by_generator", "FRAME_OWNED_BY_GENERATOR"),
    ("owned_by_cstack", "FRAME_OWNED_BY_CSTACK (3.12+)"),
    ("code_unit_size", "sizeof(_Py_CODEUNIT)"),
    ("code_filename", "PyCodeObject.co_filename"),
    ("code_name", "PyCodeObject.co_name"),
    ("code_qualname", "PyCodeObject.co_qualname (3.11+)"),
    ("code_firstlineno", "PyCodeObject.co_firstlineno"),
    ("code_linetable", "PyCodeObject.co_linetable"),
    ("code_firsttraceable", "PyCodeObject._co_firsttraceable (3.11+)"),
    ("code_adaptive", "PyCodeObject.co_code_adaptive, the start of the bytecode (3.11+)"),
    ("bytes_sval", "PyBytesObject.ob_sval"),
    ("range_size", "sizeof(PyCodeAddressRange)"),
    ("range_ar_start", "PyCodeAddressRange.ar_start"),
    ("range_ar_end", "PyCodeAddressRange.ar_end"),
    ("range_ar_line", "PyCodeAddressRange.ar_line"),
    ("range_computed_line", "PyCodeAddressRange.opaque.computed_line"),
    ("range_lo_next", "PyCodeAddressRange.opaque.lo_next"),
    ("range_limit", "PyCodeAddressRange.opaque.limit"),
    ("unicode_length", "PyASCIIObject.length"),
    ("unicode_state", "PyASCIIObject.state, read as a 32-bit word"),
    ("state_kind_mask", "bits of state.kind in that word"),
    ("state_compact_mask", "bit of state.compact"),
    ("state_ascii_mask", "bit of state.ascii"),
    ("ascii_object_size", "sizeof(PyASCIIObject): compact ASCII data follows it"),
    ("compact_object_size", "sizeof(PyCompactUnicodeObject): other compact data follows it"),
]

PROGRAM = r"""
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#endif

#define NONE (-1L)
#define P(name, value) printf("%s %ld\n", #name, (long)(value))

/* The bits a bitfield of PyASCIIObject.state occupies in the 32-bit word at offsetof(PyASCIIObject, state). */
#define STATE_MASK(field, ones)                                     \
  do {                                                              \
    PyASCIIObject o;                                                \
    unsigned int word;                                              \
    memset(&o, 0, sizeof(o));                                       \
    o.state.field = ones;                                           \
    memcpy(&word, (char*)&o + offsetof(PyASCIIObject, state), 4);   \
    printf("state_" #field "_mask %ld\n", (long)word);              \
  } while (0)

int main(void) {
  P(minor, PY_MINOR_VERSION);
  P(object_type, offsetof(PyObject, ob_type));
  P(var_object_size, offsetof(PyVarObject, ob_size));
  P(type_name, offsetof(PyTypeObject, tp_name));
#if PY_MINOR_VERSION == 10
  P(tstate_frame, offsetof(PyThreadState, frame));
  P(tstate_cframe, NONE);
  P(cframe_current_frame, NONE);
  P(frame_back, offsetof(PyFrameObject, f_back));
  P(frame_code, offsetof(PyFrameObject, f_code));
  P(frame_lasti, offsetof(PyFrameObject, f_lasti));
  P(frame_lineno, offsetof(PyFrameObject, f_lineno));
  P(iframe_code, NONE);
  P(iframe_previous, NONE);
  P(iframe_frame_obj, NONE);
  P(iframe_instr, NONE);
  P(iframe_owner, NONE);
  P(owned_by_generator, NONE);
  P(owned_by_cstack, NONE);
#else
#if PY_MINOR_VERSION >= 13
  P(tstate_frame, offsetof(PyThreadState, current_frame));
  P(tstate_cframe, NONE);
  P(cframe_current_frame, NONE);
#else
  P(tstate_frame, NONE);
  P(tstate_cframe, offsetof(PyThreadState, cframe));
  P(cframe_current_frame, offsetof(_PyCFrame, current_frame));
#endif
  P(frame_back, NONE);
  P(frame_code, NONE);
  P(frame_lasti, NONE);
  P(frame_lineno, offsetof(PyFrameObject, f_lineno));
#if PY_MINOR_VERSION >= 13
  P(iframe_code, offsetof(_PyInterpreterFrame, f_executable));
  P(iframe_instr, offsetof(_PyInterpreterFrame, instr_ptr));
#else
  P(iframe_code, offsetof(_PyInterpreterFrame, f_code));
  P(iframe_instr, offsetof(_PyInterpreterFrame, prev_instr));
#endif
  P(iframe_previous, offsetof(_PyInterpreterFrame, previous));
  P(iframe_frame_obj, offsetof(_PyInterpreterFrame, frame_obj));
  P(iframe_owner, offsetof(_PyInterpreterFrame, owner));
  P(owned_by_generator, FRAME_OWNED_BY_GENERATOR);
#if PY_MINOR_VERSION >= 12
  P(owned_by_cstack, FRAME_OWNED_BY_CSTACK);
#else
  P(owned_by_cstack, NONE);
#endif
#endif
  P(code_unit_size, sizeof(_Py_CODEUNIT));
  P(code_filename, offsetof(PyCodeObject, co_filename));
  P(code_name, offsetof(PyCodeObject, co_name));
#if PY_MINOR_VERSION >= 11
  P(code_qualname, offsetof(PyCodeObject, co_qualname));
#else
  P(code_qualname, NONE);
#endif
  P(code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
  P(code_linetable, offsetof(PyCodeObject, co_linetable));
#if PY_MINOR_VERSION >= 11
  P(code_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
  P(code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
#else
  P(code_firsttraceable, NONE);
  P(code_adaptive, NONE);
#endif
  P(bytes_sval, offsetof(PyBytesObject, ob_sval));
  P(range_size, sizeof(PyCodeAddressRange));
  P(range_ar_start, offsetof(PyCodeAddressRange, ar_start));
  P(range_ar_end, offsetof(PyCodeAddressRange, ar_end));
  P(range_ar_line, offsetof(PyCodeAddressRange, ar_line));
  P(range_computed_line, offsetof(PyCodeAddressRange, opaque.computed_line));
  P(range_lo_next, offsetof(PyCodeAddressRange, opaque.lo_next));
  P(range_limit, offsetof(PyCodeAddressRange, opaque.limit));
  P(unicode_length, offsetof(PyASCIIObject, length));
  P(unicode_state, offsetof(PyASCIIObject, state));
  STATE_MASK(kind, 7);
  STATE_MASK(compact, 1);
  STATE_MASK(ascii, 1);
  P(ascii_object_size, sizeof(PyASCIIObject));
  P(compact_object_size, sizeof(PyCompactUnicodeObject));
  return 0;
}
"""


def newest_install(versions_dir, minor):
    """The newest 3.<minor>.<patch> install under versions_dir, as (patch version string, include dir)."""
    found = []
    for path in glob.glob(os.path.join(versions_dir, "3.%d.*" % minor)):
        match = re.fullmatch(r"3\.%d\.(\d+)" % minor, os.path.basename(path))
        include = os.path.join(path, "include", "python3.%d" % minor)
        if match and os.path.isdir(include):
            found.append((int(match.group(1)), os.path.basename(path), include))
    if not found:
        sys.exit("gen_cpython_layouts: no 3.%d.x with headers under %s" % (minor, versions_dir))
    return max(found)[1:]


def measure(include, workdir):
    source = os.path.join(workdir, "layout.c")
    binary = os.path.join(workdir, "layout")
    with open(source, "w") as f:
        f.write(PROGRAM)
    compiler = os.environ.get("CC", "cc")
    subprocess.run([compiler, "-std=c11", "-I", include, "-I", os.path.join(include, "internal"), source, "-o", binary],
                   check=True)
    values = {}
    for line in subprocess.run([binary], check=True, capture_output=True, text=True).stdout.splitlines():
        name, value = line.split()
        values[name] = int(value)
    missing = [name for name, _ in FIELDS if name not in values]
    if missing or len(values) != len(FIELDS):
        sys.exit("gen_cpython_layouts: field list and C program disagree: %s" % (missing or sorted(values)))
    return values


def main():
    versions_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.pyenv/versions")
    tables = []
    with tempfile.TemporaryDirectory() as workdir:
        for minor in MINORS:
            version, include = newest_install(versions_dir, minor)
            tables.append((version, measure(include, workdir)))
    lines = [
        "// GENERATED by scripts/gen_cpython_layouts.py from the headers of CPython %s; do not edit." %
        ", ".join(v for v, _ in tables),
        "//",
        "// Field offsets (bytes) and constants of the CPython structures capture/python_stack.cc reads, one table per",
        "// supported 3.x. Each was printed by a C program compiled against that version's own headers (internal ones",
        "// with Py_BUILD_CORE), on x86-64 Linux; aarch64 Linux lays these structures out the same (LP64, same",
        "// alignment and bitfield rules). A table is taken to hold for every patch release of its minor version, as",
        "// CPython does not change these structures within one (Debian's 3.11.2 headers give the same 3.11 table as",
        "// 3.11.7's); the reader still checks the type of every object it reaches. Only default builds are described:",
        "// free-threaded and Py_TRACE_REFS builds move ob_type, and PythonStackReader::Detect refuses them.",
        "#ifndef GRAPHCHECK_CAPTURE_INTERNAL_CPYTHON_LAYOUTS_H_",
        "#define GRAPHCHECK_CAPTURE_INTERNAL_CPYTHON_LAYOUTS_H_",
        "",
        "#include <cstdint>",
        "",
        "namespace graphcheck::capture::internal {",
        "",
        "// -1: the version has no such field.",
        "struct CPythonLayout {",
    ]
    for name, doc in FIELDS:
        kind = "uint32_t" if name.endswith("_mask") else "int"
        lines.append("  %s %s;  // %s" % (kind, name, doc))
    lines += ["};", "", "inline constexpr CPythonLayout kCPythonLayouts[] = {"]
    for version, values in tables:
        lines.append("    // CPython %s" % version)
        lines.append("    {")
        for name, _ in FIELDS:
            value = values[name]
            lines.append("        /*%s=*/%s," % (name, "0x%x" % value if name.endswith("_mask") else value))
        lines.append("    },")
    lines += ["};", "", "}  // namespace graphcheck::capture::internal", "",
              "#endif  // GRAPHCHECK_CAPTURE_INTERNAL_CPYTHON_LAYOUTS_H_", ""]
    text = "\n".join(lines)
    # The repository's clang-format style, so that the committed file is what a format check expects.
    try:
        text = subprocess.run(["clang-format", "--style=file", "--assume-filename=" + OUTPUT], input=text, check=True,
                              capture_output=True, text=True, cwd=HERE).stdout
    except FileNotFoundError:
        print("gen_cpython_layouts: clang-format not found; writing the table unformatted", file=sys.stderr)
    os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
    with open(OUTPUT, "w") as f:
        f.write(text)
    print("wrote %s (%s)" % (os.path.normpath(OUTPUT), ", ".join(v for v, _ in tables)))


if __name__ == "__main__":
    main()
