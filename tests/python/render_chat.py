#!/usr/bin/env python3
"""Renders chat templates with Jinja2 as Hugging Face's transformers sets it up (a sandboxed
environment with trim_blocks and lstrip_blocks, and raise_exception), for comparing with
Tandem's interpreter.

Usage: render_chat.py < cases.json > rendered.json
Each case: {"template", "messages", "add_generation_prompt", "bos_token", "eos_token"};
each result: {"text": ...} or {"error": ...}."""

import json
import sys

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers replaces Jinja's own (which escapes HTML) with this
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def main():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.filters["tojson"] = tojson
    out = []
    for case in json.load(sys.stdin):
        try:
            t = env.from_string(case["template"])
            out.append({"text": t.render(messages=case["messages"],
                                         add_generation_prompt=case["add_generation_prompt"],
                                         bos_token=case["bos_token"],
                                         eos_token=case["eos_token"])})
        except TemplateError as e:
            out.append({"error": str(e)})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
