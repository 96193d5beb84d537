"""The plugins answer exactly as before the redesign (issue 24): every case of
tests/data/plugin_golden.json (captured by tests/golden_plugins.py from commit 6baa592:
the inputs and the answers) is replayed through the harness on this tree, and every answer
(exit status, stdout, stderr) must be the same, byte for byte. The file holds the inputs too:
the replay does not depend on the capture script's fixtures staying as they were.

The answers depend on the interpreter (argparse's help) and on jsonschema (its messages):
under another pair (scripts/check-compat.sh) the test is skipped, not failed."""

import difflib
import json
import os

import pytest

import golden_plugins

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                      "plugin_golden.json")


def _load():
    with open(GOLDEN) as handle:
        return json.load(handle)


def _describe(case, got):
    lines = ["%s %s %s argv=%s stdin=%s" % (case["class"], case["name"], case["method"],
                                            case["argv"], case["stdin"][:200])]
    for key in ("status", "stdout", "stderr"):
        if got[key] != case[key]:
            diff = difflib.unified_diff(str(case[key]).splitlines(), str(got[key]).splitlines(),
                                        "golden", "now", lineterm="", n=1)
            lines.append("  %s:\n    %s" % (key, "\n    ".join(list(diff)[:20])))
    return "\n".join(lines)


def test_the_plugins_give_the_golden_answers():
    golden = _load()
    here = golden_plugins.environment()
    if here != golden["environment"]:
        pytest.skip("answers captured under %s, the plugins run under %s"
                    % (golden["environment"], here))
    cases = golden["cases"]
    assert len(cases) > 200
    answers = golden_plugins.answers(cases)
    wrong = [_describe(case, got) for case, got in zip(cases, answers)
             if any(got[key] != case[key] for key in ("status", "stdout", "stderr"))]
    assert not wrong, "%d of %d answers changed:\n%s" % (len(wrong), len(cases),
                                                        "\n".join(wrong))

