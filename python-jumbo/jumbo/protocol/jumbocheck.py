"""The `jumbocheck` tool's methods: stdin text in, the answer out (jumbo.tool does the work).

can-run and merged-results must always print JSON (a crash in can-run breaks tool selection
on the whole node; merged-results is the run's result), so both catch everything here."""

import importlib

from ..core import validate as validation
from ..tool import pair_result as pair
from ..tool import result as results
from . import method


def _load(name):
    """A module only the methods that use it load: pScheduler's runner gives merged-results
    5 s (hard-coded), and on a busy node the whole tool's imports took most of them (the real
    mesh's runs failed "Process took too long to run"); merging needs only the result modules."""
    return importlib.import_module(name, __package__)


def can_run(text):
    try:
        test = method.loads(text)
    except ValueError as err:
        return {"can-run": False, "reasons": [str(err)]}
    try:
        return _load("..tool.runner").can_run(test)
    except Exception as err:  # noqa: BLE001 - decline, never crash
        return {"can-run": False, "reasons": ["can-run failed: %s" % err]}


def duration(text):
    return _load("..tool.runner").duration(method.loads(text))


def participant_data(text):
    return _load("..tool.runner").participant_data(method.loads(text))


def run(text):
    runner = _load("..tool.runner")
    try:
        run_input = method.loads(text)
    except ValueError as err:
        return runner.failure(str(err), "the run input was not JSON")
    return runner.run_participant(run_input)


class _Merging(object):
    """How one test's participant results merge: the tool's merge, its failed result and the
    test's result schema, chosen once from the test's type (a pmtu test's when it names none).
    The tool's run kinds (jumbo.tool.kinds) are not loaded here: merged-results needs only
    the result modules (see _load)."""

    __slots__ = ("merge", "failed", "check")

    def __init__(self, merge, failed, check):
        self.merge, self.failed, self.check = merge, failed, check


MERGING = {"pmtu": _Merging(results.merge, results.failed, validation.check_result),
           "jumbo-throughput": _Merging(pair.merge, pair.failed, validation.check_pair_result)}


def merged_results(text):
    """Always a result object in the test's own shape, never an exception: the participants'
    JSON read once (jumbo.tool.result.merge, jumbo.tool.pair_result.merge), the typed result
    written back as JSON here."""
    try:
        data = method.loads(text)
    except ValueError as err:
        return results.failed("Invalid input: %s" % err).as_json()
    if not isinstance(data, dict):
        return results.failed("Invalid input: expected an object with test and results").as_json()
    test = data.get("test")
    kind = test.get("type") if isinstance(test, dict) else None
    merging = MERGING.get(kind, MERGING["pmtu"]) if isinstance(kind, str) else MERGING["pmtu"]
    try:
        merged = merging.merge(test, data.get("results")).as_json()
    except Exception as err:  # noqa: BLE001 - merged-results must always print JSON
        return merging.failed("cannot merge the participants' results: %s: %s"
                              % (type(err).__name__, err)).as_json()
    # A participant's result that is not of the test's shape (a peer's, or a bug) must not
    # become the run's result: the run fails, saying why.
    valid, error = merging.check(merged)
    return merged if valid else merging.failed("the participants' results do not merge into a "
                                               "valid result: %s" % error).as_json()


def enumerate_plugin():
    """The enumeration in the shape the installed pScheduler accepts (jumbo.protocol.
    enumeration: 5.2's or the 5.3 line's contract)."""
    return _load(".enumeration").enumerate_plugin("tool", "jumbocheck")
