#!/usr/bin/env python3
"""Checks the source layout rules: no function in core/ longer than 100 lines (150 in ui and
app); no file longer than its folder's limit in the folders that hold classes (600 lines in
core/engine, core/model, core/node, core/sweep, ui and app; 300 in core/engine/worker, one job a
file); the worker's side (core/engine/worker) includes nothing of the coordinator's; and no two
units (a header with its .cpp) include each other, however many units lie between them. The
wire's translation table (decode in core/wire/messages.cpp, one case per message) is the one
exception. Prints each breach with its place and exits 1 if there is any."""

import re
import sys
from pathlib import Path

# The longest function allowed under each folder.
MAX_FUNCTION = {"core": 100, "ui": 150, "app": 150}
MAX_FILE = 600
# The longest file allowed in each folder that holds classes; the deepest folder that holds a
# file sets its limit.
FILE_LIMITS = {"core/engine": MAX_FILE, "core/model": MAX_FILE, "core/node": MAX_FILE,
               "core/sweep": MAX_FILE, "ui": MAX_FILE, "app": MAX_FILE, "core/engine/worker": 300}
# Headers (or whole folders, ending in /) a folder's files may not include: the worker's side
# knows the coordinator only through the wire.
FORBIDDEN_INCLUDES = {
    "core/engine/worker": ["engine/coordinator/", "engine/modes/sync.h"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def folder_rule(rel, table):
    """The value for the deepest folder of `table` that holds `rel`, or None."""
    found = [f for f in table if rel.is_relative_to(f)]
    return table[max(found, key=len)] if found else None
EXEMPT = {("core/wire/messages.cpp", "decode")}
NOT_FUNCTIONS = re.compile(
    r"^\s*(?:template\s*<[^>]*>\s*)?(?:namespace|class|struct|union|enum|extern)\b|"
    r"(?:^|[^\w])(?:if|for|while|switch|catch|do|else|return)\s*(?:\(|$)|=\s*$|=\s*\[")


def strip(text):
    """Blanks out comments, string and character literals, keeping line breaks."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """Yields (name, first line, line count) for each function body at namespace or class
    level; lambdas and local classes count as part of the function that holds them."""
    code = strip(text)
    stack = []  # True for a function body
    head_start = 0
    line = 1
    starts = []
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";":
            if not any(stack):
                head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            is_fn = False
            if not any(stack):
                flat = " ".join(head.split())
                is_fn = "(" in flat and not NOT_FUNCTIONS.search(flat) and not flat.startswith("#")
                if is_fn:
                    m = re.search(r"([\w:~]+(?:operator\S*)?)\s*\(", flat)
                    starts.append((m.group(1) if m else flat[:40], line))
            stack.append(is_fn)
            if not any(stack):
                head_start = i + 1
        elif c == "}":
            was_fn = stack.pop() if stack else False
            if was_fn:
                name, first = starts.pop()
                yield name, first, line - first + 1
            if not any(stack):
                head_start = i + 1


def include_cycles(root, folders):
    """The cycles among units: a unit is a header and its .cpp ("core/model/model"), and it
    depends on every unit whose header one of its files includes. Returns each cycle once, as a
    list of units."""
    units = {}
    for folder in folders:
        for path in (root / folder).rglob("*"):
            if path.suffix in (".cpp", ".h"):
                rel = path.relative_to(root).with_suffix("").as_posix()
                units.setdefault(rel, set())
                for header in INCLUDE.findall(path.read_text(encoding="utf-8")):
                    for base in ("core/", ""):  # "engine/x.h" lives in core/, "ui/x.h" at the top
                        target = (base + header).rsplit(".", 1)[0]
                        if (root / (base + header)).exists() and target != rel:
                            units[rel].add(target)
                            break
    # Tarjan's strongly connected components; a component of more than one unit is a cycle.
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def visit(u):
        index[u] = low[u] = len(index)
        stack.append(u)
        on_stack.add(u)
        for v in sorted(units.get(u, ())):
            if v not in index:
                visit(v)
                low[u] = min(low[u], low[v])
            elif v in on_stack:
                low[u] = min(low[u], index[v])
        if low[u] == index[u]:
            component = []
            while True:
                v = stack.pop()
                on_stack.discard(v)
                component.append(v)
                if v == u:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(10000)
    for u in sorted(units):
        if u not in index:
            visit(u)
    return cycles


def main(root, folders):
    bad = 0
    for cycle in include_cycles(root, folders):
        print("include cycle: " + " -> ".join(cycle))
        bad += 1
    for folder in folders:
        limit = MAX_FUNCTION[folder.split("/")[0]]
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            text = path.read_text(encoding="utf-8")
            rel = path.relative_to(root)
            lines = text.count("\n")
            most = folder_rule(rel, FILE_LIMITS)
            if most is not None and lines > most:
                print(f"{rel}: {lines} lines (at most {most})")
                bad += 1
            for header in INCLUDE.findall(text):
                if any(header == f or (f.endswith("/") and header.startswith(f))
                       for f in folder_rule(rel, FORBIDDEN_INCLUDES) or []):
                    print(f"{rel}: includes {header}, which is the coordinator's")
                    bad += 1
            for name, first, count in functions(text):
                if count > limit and (rel.as_posix(), name) not in EXEMPT:
                    print(f"{rel}:{first}: {name} is {count} lines (at most {limit})")
                    bad += 1
    return 1 if bad else 0


def self_test():
    """The checker on a made-up tree: a function at each limit passes, one line more fails, and
    so does a file over MAX_FILE lines; the exempt translation table does not count."""
    import contextlib
    import io
    import tempfile

    def function(name, lines):
        return f"int {name}() {{\n" + "    ;\n" * (lines - 2) + "}\n"

    cases = [
        ("core/engine/a.cpp", function("fits", 100), 0),
        ("core/engine/a.cpp", function("tooLong", 101), 1),
        ("core/formats/b.cpp", "namespace x {\n" + function("alsoTooLong", 101) + "}\n", 1),
        ("ui/c.cpp", function("fitsInUi", 150), 0),
        ("ui/c.cpp", function("tooLongInUi", 151), 1),
        ("core/wire/messages.cpp", function("decode", 200), 0),
        ("core/wire/messages.cpp", function("encode", 200), 1),
        ("core/node/d.cpp", "\n" * 601, 1),
        ("core/formats/e.cpp", "\n" * 601, 0),
        ("core/engine/worker/f.cpp", "\n" * 300, 0),
        ("core/engine/worker/f.cpp", "\n" * 301, 1),
        ("core/engine/worker/g.cpp", '#include "engine/coordinator/hub.h"\n', 1),
        ("core/engine/g.cpp", '#include "engine/coordinator/hub.h"\n', 0),
    ]
    # Two units that include each other, directly or through a third, are one cycle each.
    cycle_cases = [
        ({"core/model/a.h": "", "core/model/a.cpp": '#include "model/b.h"\n',
          "core/model/b.h": "", "core/model/b.cpp": '#include "model/a.h"\n'}, 1),
        ({"core/model/a.h": '#include "model/b.h"\n', "core/model/b.h": '#include "model/c.h"\n',
          "core/model/c.cpp": '#include "model/a.h"\n', "core/model/c.h": ""}, 1),
        ({"core/model/a.h": "", "core/model/a.cpp": '#include "model/a.h"\n#include "model/b.h"\n',
          "core/model/b.h": ""}, 0),
    ]
    failed = 0
    for rel, text, want in cases:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for folder in MAX_FUNCTION:
                (root / folder).mkdir(parents=True, exist_ok=True)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
            with contextlib.redirect_stdout(io.StringIO()):
                got = main(root, list(MAX_FUNCTION))
        if got != want:
            print(f"self-test: {rel} gave {got}, expected {want}")
            failed += 1
    for files, want in cycle_cases:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for folder in MAX_FUNCTION:
                (root / folder).mkdir(parents=True, exist_ok=True)
            for rel, text in files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text, encoding="utf-8")
            with contextlib.redirect_stdout(io.StringIO()):
                got = main(root, list(MAX_FUNCTION))
        if got != want:
            print(f"self-test: cycle case {sorted(files)} gave {got}, expected {want}")
            failed += 1
    print(f"{len(cases) + len(cycle_cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    sys.exit(main(root, sys.argv[2:] or list(MAX_FUNCTION)))
