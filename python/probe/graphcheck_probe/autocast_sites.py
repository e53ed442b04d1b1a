"""Where the program entered the autocast context a replay runs in (autocast_site), found after the fact from the
program's frames and their source: for host-value-frozen's autocast changes (contract.Contract._look_autocast)."""
from .frames import encode_stack, is_program_file, program_frame


_autocast_blocks = {}  # code object -> its `with` statements: (first line, last line, what their items name)


def _autocast_names(expression):
    """What a `with` item's expression calls or names: True when it names autocast, else the names of the functions
    it calls (a helper that returns torch.autocast(...): `with precision("fp16"):`)."""
    import ast

    called = []
    for part in ast.walk(expression):
        if getattr(part, "attr", getattr(part, "id", None)) == "autocast":
            return True
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Name):
            called.append(part.func.id)
    return tuple(called)


def _autocast_with_line(code, line, scope):
    """The line of the innermost `with torch.autocast(...)` (any expression naming autocast, or calling a function of
    `scope`, the frame's globals, whose code does) of `code`'s source around `line`; None outside one, or where the
    source cannot be read."""
    blocks = _autocast_blocks.get(code)
    if blocks is None:
        blocks = []  # (first line, last line, True or the functions its items call)
        try:
            import ast  # here, not at the probe's start: only a replay that finds autocast changed reads source
            import inspect
            import linecache
            import textwrap

            module = code.co_name == "<module>"
            source = "".join(linecache.getlines(code.co_filename)) if module else textwrap.dedent(
                inspect.getsource(code))
            offset = 0 if module else code.co_firstlineno - 1
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, (ast.With, ast.AsyncWith)):
                    names = [_autocast_names(item.context_expr) for item in node.items]
                    names = True if True in names else tuple(n for called in names for n in called)
                    blocks.append((node.lineno + offset, node.end_lineno + offset, names))
        except Exception:
            pass
        if len(_autocast_blocks) >= 256:
            _autocast_blocks.pop(next(iter(_autocast_blocks)))
        _autocast_blocks[code] = blocks

    def autocasts(names):
        return names is True or any("autocast" in getattr(getattr(scope.get(name), "__code__", None), "co_names", ())
                                    for name in names)

    around = [first for first, last, names in blocks if first <= line <= last and autocasts(names)]
    return max(around) if around else None


def autocast_site(frame, depth=16):
    """The stack of the autocast context the code running in `frame` is in, found from the inside out: a program
    frame's `with torch.autocast(...)` around its current line (named at the with), or a function decorated with
    torch.autocast (named at the program's call of it). None when neither is found."""
    try:
        walked = 0
        while frame is not None and walked < depth:
            code = frame.f_code
            if code.co_name == "decorate_autocast" and not is_program_file(code.co_filename):
                caller = program_frame(frame.f_back)
                return encode_stack(caller) if caller is not None else None
            if is_program_file(code.co_filename):
                line = _autocast_with_line(code, frame.f_lineno, frame.f_globals)
                if line is not None:
                    return encode_stack(frame, line)
            frame = frame.f_back
            walked += 1
    except Exception:
        pass
    return None
