"""Check ids are named once (core/check_ids.h): no string literal spells an id anywhere in the tool's C++ (checks/,
analysis/, report/, cli/, core/, engine/), comments aside, and every constant is a check with its documentation page
(docs/checks/ID.md). A literal id outside the catalogue ties a lower layer to a check that the layering test cannot
see, and survives a rename.

usage: check_ids_test.py SOURCE_DIR
"""
import glob
import os
import re
import sys

source = sys.argv[1]
catalogue = os.path.join(source, "core", "check_ids.h")
ids = dict(re.findall(r'inline constexpr char (k\w+)\[\] = "([a-z0-9-]+)";', open(catalogue).read()))
failures = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else ": " + str(detail)))
    if not condition:
        failures.append(name)


pages = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(source, "docs", "checks", "*.md"))}
check("the catalogue holds ids", len(ids) > 50, len(ids))
check("every id in the catalogue has its documentation page", set(ids.values()) <= pages,
      sorted(set(ids.values()) - pages))
check("every documented check is in the catalogue", pages <= set(ids.values()), sorted(pages - set(ids.values())))

literals = re.compile(r'"(%s)"' % "|".join(re.escape(i) for i in sorted(ids.values(), key=len, reverse=True)))
found = []
for folder in ("checks", "analysis", "report", "cli", "core", "engine"):
    for path in glob.glob(os.path.join(source, folder, "**", "*.[ch]*"), recursive=True):
        if os.path.samefile(path, catalogue) or not path.endswith((".cc", ".h")):
            continue
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            code = line.split("//")[0] if line.split("//")[0].count('"') % 2 == 0 else line
            for match in literals.finditer(code):
                found.append("%s:%d: \"%s\"" % (os.path.relpath(path, source), number, match.group(1)))
check("no string literal spells a check id outside core/check_ids.h", not found, "\n  ".join([""] + found))
sys.exit(1 if failures else 0)
