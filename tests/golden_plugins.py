"""The plugins' golden answers: every method of the pmtu and jumbo-throughput tests, the
jumbocheck tool and the jumbo archiver on a fixed set of inputs, called through the harness
exactly as pScheduler calls them (the method executables, stdin and argv).

Methods that measure (jumbocheck `run` on a valid input) or write to an archive (`archive`)
are left out; `run` on inputs it refuses before measuring is in.

    python3 tests/golden_plugins.py --root /tmp/golden-base --write tests/data/plugin_golden.json

captures the answers of the tree at --root (default: this repository) to the inputs of
tests/golden_inputs.py into the file, inputs included; tests/golden/test_plugin_golden.py replays
those inputs on this tree and compares. Nothing here imports the library: only the plugin
executables of the tree under test run it, so the library's module layout may change freely
between the capture and the replay.
"""

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
for _path in (HERE, os.path.dirname(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import harness  # noqa: E402 - after sys.path

VOLATILE = "<volatile>"
WORKERS = 4


def environment():
    """The answers depend on the interpreter (argparse's help) and on jsonschema (its error
    messages): both as the plugins see them."""
    python = os.path.join(harness.interpreter_dir(), "python3")
    done = harness.run_program(
        [python, "-c", "import sys, warnings\nwarnings.simplefilter('ignore')\n"
         "import jsonschema\nprint('%d.%d %s' % (sys.version_info[0], sys.version_info[1], "
         "jsonschema.__version__))"], timeout=60, env=harness.plugin_env())
    version, _, schema = done.stdout.strip().partition(" ")
    return {"python": version, "jsonschema": schema}


def method_env():
    """Every call's environment: only the interpreter's directory on PATH (no iperf3, no
    openssl: can-run and participant-data answer the same on every machine), argparse's
    width and the locale fixed, no debug tracebacks."""
    return {"PATH": harness.interpreter_dir(), "COLUMNS": "80", "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8", "JUMBO_DEBUG": ""}


# ------------------------------------------------------------------------------------------
# Calling and comparing

def normalize(stdout, volatile):
    """stdout with the members that differ on every call (random ports, one-time tokens)
    replaced by a placeholder."""
    if not volatile:
        return stdout
    try:
        value = json.loads(stdout)
    except ValueError:
        return stdout
    if isinstance(value, dict):
        for key in volatile:
            if key.endswith("?"):
                # present only where the machine has a route to the dest (the source's own
                # address towards it): neither its value nor its presence is compared
                value.pop(key[:-1], None)
            elif key in value:
                value[key] = VOLATILE
    return json.dumps(value, separators=(",", ":"), sort_keys=True) + "\n"


def answer(case):
    """The method's answer to one case: {"status", "stdout", "stderr"}."""
    done = harness.invoke(case["class"], case["name"], case["method"], stdin=case["stdin"],
                          argv=case["argv"], env=method_env())
    return {"status": done.status, "stdout": normalize(done.stdout, case["volatile"]),
            "stderr": done.stderr}


def answers(all_cases, workers=WORKERS):
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(answer, all_cases))


def use_root(root):
    """Call the plugin executables and the library of the tree at `root`."""
    harness.ROOT = os.path.abspath(root)
    harness.LIBRARY = os.path.join(harness.ROOT, "python-jumbo")


def capture(root=None):
    import golden_inputs  # the tests' fixtures: only a capture needs them
    if root:
        use_root(root)
    all_cases = golden_inputs.cases()
    for case, got in zip(all_cases, answers(all_cases)):
        case.update(got)
    return {"environment": environment(), "cases": all_cases}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", help="the tree whose plugins answer (default: this one)")
    parser.add_argument("--write", help="write the answers here (default: stdout)")
    args = parser.parse_args(argv)
    text = json.dumps(capture(args.root), indent=1, sort_keys=True) + "\n"
    if args.write:
        with open(args.write, "w") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
