#!/usr/bin/env python3
"""Checks the source layout rules: no function longer than MAX_FUNCTION lines and no file
longer than MAX_FILE lines in the folders given (core/engine, core/node, ui and app by
default). Prints each breach with its place and exits 1 if there is any."""

import re
import sys
from pathlib import Path

MAX_FUNCTION = 150
MAX_FILE = 600
FOLDERS = ["core/engine", "core/node", "core/sweep", "ui", "app"]
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


def main(root, folders):
    bad = 0
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            text = path.read_text(encoding="utf-8")
            rel = path.relative_to(root)
            lines = text.count("\n")
            if lines > MAX_FILE:
                print(f"{rel}: {lines} lines (at most {MAX_FILE})")
                bad += 1
            for name, first, count in functions(text):
                if count > MAX_FUNCTION:
                    print(f"{rel}:{first}: {name} is {count} lines (at most {MAX_FUNCTION})")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    sys.exit(main(root, sys.argv[2:] or FOLDERS))
