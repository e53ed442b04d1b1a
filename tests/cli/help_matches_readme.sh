#!/usr/bin/env bash
# The README's usage block against each subcommand's --help, so that the two cannot drift: every command of
# `graphcheck --help` is in the usage block, every option the block shows for a command is in that command's --help,
# and the README's table of formats per command equals what each command's --format accepts.
set -u
gc=$(realpath "${1:?graphcheck binary}")
root=$(realpath "${2:?source dir}")
python3 - "$gc" "$root/README.md" <<'PY'
import re
import subprocess
import sys

gc, readme_path = sys.argv[1], sys.argv[2]
failures = []

def help_of(*command):
    return subprocess.run([gc, *command, "--help"], capture_output=True, text=True, check=True).stdout

def subcommands(text):
    section = text.split("Subcommands:", 1)[1] if "Subcommands:" in text else ""
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line.split()]

readme = open(readme_path).read()
usage = readme.split("## Usage", 1)[1]
block = usage.split("```", 2)[1]

# The usage block's lines per command; indented lines continue the command above them.
shown = {}
command = None
for line in block.splitlines():
    if line.startswith("graphcheck "):
        words = line.split()
        command = words[1]
        if command in ("trace",):
            command = "trace " + words[2]
        shown.setdefault(command, "")
    if command is None:
        continue
    text = line.split("#", 1)[0]
    text = text.split(" -- ", 1)[0]  # what follows -- belongs to the program (or to Megatron, for lint)
    shown[command] += " " + text

commands = subcommands(help_of())
for name in commands:
    if not any(c == name or c.startswith(name + " ") for c in shown):
        failures.append("command %s is missing from the README's usage block" % name)

for command, text in shown.items():
    if command.split()[0] not in commands:
        failures.append("the README shows a command graphcheck does not have: %s" % command)
        continue
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))
    help_text = help_of(*command.split())
    for option in sorted(options):
        if not re.search(r"(^|[\s,])%s\b" % re.escape(option), help_text):
            failures.append("README shows %s %s, which its --help does not list" % (command, option))

# The formats table: | `cmd`, `cmd` | `a\|b` |
table = {}
for row in re.findall(r"^\| (`[a-z-]+`(?:, `[a-z-]+`)*) \| `([a-z\\|]+)` \|$", usage, re.M):
    formats = set(row[1].replace("\\|", "|").split("|"))
    for name in re.findall(r"`([a-z-]+)`", row[0]):
        table[name] = formats
for name in commands:
    match = re.search(r"--format\s+\S*:\{([^}]*)\}", help_of(name))
    accepted = set(match.group(1).split(",")) if match else set()
    if accepted != table.get(name, set()):
        failures.append("%s --format accepts %s, the README's table says %s" %
                        (name, sorted(accepted), sorted(table.get(name, set()))))

for failure in failures:
    print("FAIL:", failure)
print("%d commands, %d failures" % (len(commands), len(failures)))
sys.exit(1 if failures else 0)
PY
