"""The `pmtu` test's methods: stdin text and argv in, the answer out (jumbo.testtype.spec and
jumbo.testtype.render do the work)."""

import importlib

from ..core import validate as validation
from ..testtype import render, spec as specs
from . import method


def _result(document):
    """The result of a result-format input, which must have one (an object)."""
    if not isinstance(document, dict) or "result" not in document:
        raise ValueError("Expected a JSON object with 'spec' and 'result'")
    if not isinstance(document["result"], dict):
        raise ValueError("At /result: the result must be a JSON object")
    return document["result"]


PLUGIN = method.TestTypePlugin(specs, render, validation.check_result, _result)
spec_is_valid, cli_to_spec, spec_to_cli, participants, result_format, spec_format = \
    PLUGIN.methods()


def enumerate_plugin():
    """The enumeration in the shape the installed pScheduler accepts (jumbo.protocol.
    enumeration: 5.2's or the 5.3 line's contract)."""
    # Loaded here only: it reads the forms, hence the tool runner and the whole probe
    # stack, most of the methods' import time; pScheduler gives participants and
    # cli-to-spec 5 s (hard-coded in its API) on a node that may be busy.
    return importlib.import_module(".enumeration", __package__).enumerate_plugin(
        "test", "pmtu")
