"""Long functions are split into named steps: no function of the tool's own C++ (core/, trace/, analysis/, checks/,
report/, cli/, engine/, capture/) or of the Python probe is over 100 lines, and no probe module is over 600. A
function that long does several things that its reader has to find the seams of; the steps' names say them.

C++ is read by a brace-matching scan (comments, string and character literals and preprocessor lines blanked
first): a brace block opened at namespace or class scope whose head ends in a parameter list (with qualifiers or a
constructor's initializer list after it) is a function, measured from its name's line to its closing brace; lambdas
and every other block inside it are part of it. Python is read by the ast module (end_lineno - lineno + 1).

usage: function_length_test.py SOURCE_DIR
"""
import ast
import glob
import os
import re
import sys

MAX_FUNCTION_LINES = 100
MAX_PROBE_MODULE_LINES = 600
CPP_FOLDERS = ("core", "trace", "analysis", "checks", "report", "cli", "engine", "capture")


def strip_cpp(text):
    """Comments, preprocessor lines and the contents of string and character literals blanked."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # a directive, with its continuation lines
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = [" "] * (j - i)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        elif c == '"':
            raw = re.search(r'(?<!\w)(?:u8|u|U|L)?R$', text[max(0, i - 4):i])
            if raw:
                delimiter = text[i + 1:text.find("(", i)]
                j = text.find(")" + delimiter + '"', i) + len(delimiter) + 1
            else:
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
            out[i + 1:j] = [ch if ch == "\n" else " " for ch in text[i + 1:j]]
            i = j + 1
        elif c == "'" and not re.search(r"(?<![\w'])\d[\w']*$", text[max(0, i - 40):i]):  # not 1'000
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out[i + 1:j] = [" "] * (j - i - 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def top_level(head):
    """The head at depth 0, each bracket pair's contents removed ("f(int a) : b_{a}" is "f() : b_{}"), with the
    index in the head of each character kept."""
    depth, kept, where = 0, [], []
    for index, ch in enumerate(head):
        opening, closing = ch in "([{", ch in ")]}"
        depth -= closing
        if depth == 0:
            kept.append(ch)
            where.append(index)
        depth += opening
    return "".join(kept), where


# What may follow a function's parameter list before its body: cv and ref qualifiers, noexcept, virt-specifiers, a
# trailing return type.
QUALIFIERS = r"(?:\s|const\b|volatile\b|noexcept\b(?:\s*\(\))?|override\b|final\b|mutable\b|&|->[^;]*)*"
FUNCTION = re.compile(r"^(.*?\))" + QUALIFIERS + r"$", re.S)
CONSTRUCTOR = re.compile(r"^(.*?\))\s*(?:noexcept\b\s*)?:(?!:).*[)}]\s*$", re.S)
LAMBDA = re.compile(r"(\w+)\s*=\s*\[\]\s*(?:\(\))?" + QUALIFIERS + r"$", re.S)
NAME = re.compile(r"((?:[~\w]+\s*::\s*)*(?:operator\s*(?:\(\)|\[\]|[^\w\s(]+|[\w\s:<>*&]+?)|~?\w+))\s*$")


def classify(head):
    """What a brace opened at namespace or class scope opens, by the text before it (its head): ("scope", None) for
    a namespace or extern "C", ("class", None), ("function", (name, offset of the name in the head)), or (None,
    None) for an initializer and anything else, whose braces belong to the head, which goes on."""
    head = re.sub(r"\[\[.*?\]\]", lambda m: " " * len(m.group(0)), head, flags=re.S)  # attributes
    flat, where = top_level(head)
    flat = flat.rstrip()
    # Macro invocations at namespace scope need no semicolon (NLOHMANN_DEFINE_TYPE_...(T, a, b)).
    statement = re.sub(r"^\s*(?:[A-Z_][A-Z0-9_]*\s*\(\)\s*)*", "", flat)
    if re.match(r"(?:inline\s+)?namespace\b|extern\s*\"\s*\"\s*$", statement):
        return "scope", None
    lambda_ = LAMBDA.search(flat)
    if lambda_:
        return "function", (lambda_.group(1) + " (lambda)", where[lambda_.start(1)])
    parameters = CONSTRUCTOR.match(flat) or FUNCTION.match(flat)
    if parameters:
        opening = where[parameters.end(1) - 2]
        name = NAME.search(head[:opening])
        if name:
            return "function", (re.sub(r"\s+", "", name.group(1)), name.start(1))
    if re.match(r"(?:template\s*<.*>\s*)?(?:typedef\s+)?(?:class|struct|union|enum)\b", statement, re.S):
        return "class", None
    return None, None


def cpp_functions(source):
    """(name, first line, last line) of every function defined at namespace or class scope in C++ source text."""
    text = strip_cpp(source)
    functions = []
    # The open braces, innermost last: ("scope" | "class", None), ("function", (name, first line)) or ("other",
    # None) for any brace inside a function or an initializer's. A head gathers from the last ";", "{" or "}" at
    # namespace or class scope; an initializer's braces are part of the head that goes on after them.
    stack = []
    head_start = 0
    for i, ch in enumerate(text):
        if ch not in "{};":
            continue
        nested = bool(stack) and stack[-1][0] in ("function", "other")
        if ch == "{":
            kind, data = ("other", None) if nested else classify(text[head_start:i])
            if kind == "function":
                data = (data[0], text.count("\n", 0, head_start + data[1]) + 1)
            stack.append((kind or "other", data))
            if kind not in (None, "other"):
                head_start = i + 1
        elif ch == "}" and stack:
            kind, data = stack.pop()
            if kind == "function":
                functions.append((data[0], data[1], text.count("\n", 0, i) + 1))
            if kind != "other":
                head_start = i + 1
        elif ch == ";" and not nested:
            head_start = i + 1
    return functions


# The scan's own cases: what each brace of this opens, and so how long each function is.
SAMPLE = r"""
#define GC_CASE(x) case x: { \
    break; }
namespace a::b {
NLOHMANN_DEFINE(T, x, y)
namespace {
const std::vector<int> kTable = {1, 2'000};
Config kConfig{{"}", 1}, {R"x({)x", 2}};
const auto kLambda = [](int x) {
  return x;
};
}  // namespace {
struct Shape : Base {
  Shape() : Base(Info{"{", {}}), size_{0} {}
  int size_{0};
  bool operator()(const Shape& other) const {
    return '{' == '}';
  }
};
auto Make(int n) -> std::function<void()> {
  /* { */ auto f = [n] { if (n) { return; } };
  return f;
}
extern "C" {
int Exported(void) noexcept {
  return 0;
}
}
}  // namespace a::b
"""
SAMPLE_FUNCTIONS = [("kLambda (lambda)", 9, 11), ("Shape", 14, 14), ("operator()", 16, 18), ("Make", 20, 23),
                    ("Exported", 25, 27)]


def python_functions(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    return [(node.name, node.lineno, node.end_lineno) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def main(source):
    scanned = cpp_functions(SAMPLE)
    offenders = [] if scanned == SAMPLE_FUNCTIONS else ["the C++ scan misreads its sample: %s" % scanned]
    counted = 0
    paths = []
    for folder in CPP_FOLDERS:
        paths += sorted(p for p in glob.glob(os.path.join(source, folder, "**", "*"), recursive=True)
                        if p.endswith((".cc", ".h", ".cpp", ".hpp")))
    probe = sorted(glob.glob(os.path.join(source, "python", "probe", "graphcheck_probe", "*.py")))
    for path in paths + probe:
        if path.endswith(".py"):
            functions = python_functions(path)
        else:
            functions = cpp_functions(open(path, encoding="utf-8").read())
        counted += len(functions)
        for name, first, last in functions:
            if last - first + 1 > MAX_FUNCTION_LINES:
                offenders.append("%s:%d: %s is %d lines (at most %d)" % (os.path.relpath(path, source), first, name,
                                                                          last - first + 1, MAX_FUNCTION_LINES))
    for path in probe:
        lines = sum(1 for _ in open(path, encoding="utf-8"))
        if lines > MAX_PROBE_MODULE_LINES:
            offenders.append("%s is %d lines (at most %d)" % (os.path.relpath(path, source), lines,
                                                               MAX_PROBE_MODULE_LINES))
    print("%d functions in %d files" % (counted, len(paths) + len(probe)))
    for offender in offenders:
        print("FAIL " + offender)
    return offenders, counted


if __name__ == "__main__":
    found, total = main(sys.argv[1])
    sys.exit(1 if found or total < 1000 else 0)
