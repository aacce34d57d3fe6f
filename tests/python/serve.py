"""Runs the references' scripts one after another in this one interpreter, so that a test that
runs several loads torch once rather than once a script (seconds each on a loaded machine).

Reads a JSON line per script from standard input, {"argv": [SCRIPT, ARG...], "stdin": TEXT},
runs SCRIPT as __main__ with that argv and standard input and its own standard output and error,
and answers on standard output with a JSON line {"code": EXIT, "out": TEXT, "err": TEXT}. Before
each script it puts back what a fresh interpreter would have: the working folder, sys.path with
the script's folder first, torch's default dtype, seed, thread count and grad mode.
"""
import io
import json
import os
import runpy
import sys
import traceback

try:
    import torch
except ImportError:
    torch = None

answers = sys.stdout
requests = sys.stdin
folder = os.getcwd()
path = list(sys.path)
if torch is not None:
    fresh = (torch.get_default_dtype(), torch.initial_seed(), torch.get_num_threads())


def run(argv, text):
    out, err = io.StringIO(), io.StringIO()
    os.chdir(folder)
    sys.path[:] = [os.path.dirname(os.path.abspath(argv[0]))] + path[1:]
    sys.argv = list(argv)
    if torch is not None:
        torch.set_default_dtype(fresh[0])
        torch.manual_seed(fresh[1])
        torch.set_num_threads(fresh[2])
        torch.set_grad_enabled(True)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(text), out, err
    code = 0
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=err)
            code = 1
    except BaseException:
        traceback.print_exc(file=err)
        code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = requests, answers, sys.__stderr__
    return {"code": code, "out": out.getvalue(), "err": err.getvalue()}


while True:
    line = requests.readline()
    if not line:
        break
    if not line.strip():
        continue
    request = json.loads(line)
    answers.write(json.dumps(run(request["argv"], request.get("stdin", ""))) + "\n")
    answers.flush()
