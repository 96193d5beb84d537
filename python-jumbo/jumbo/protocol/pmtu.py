"""The `pmtu` test's methods: stdin text and argv in, the answer out (jumbo.testtype.spec and
jumbo.testtype.render do the work)."""

from ..core import validate as validation
from ..testtype import render, spec as specs
from . import method


def spec_is_valid(text):
    return method.spec_is_valid(text, specs.validate)


def cli_to_spec(argv, stdin):
    return specs.cli_to_spec(method.cli_argv(argv, stdin))


def spec_to_cli(text):
    return specs.spec_to_cli(method.loads(text))


def participants(text):
    return specs.participants(method.loads(text))


def result_format(text, argv=()):
    """stdin {"spec", "result"} and argv [MIME] -> the formatted text. Raises ValueError
    (message for stderr, exit 1) on bad input."""
    mime = method.mime_type(list(argv))
    document = method.loads(text)
    if not isinstance(document, dict) or "result" not in document:
        raise ValueError("Expected a JSON object with 'spec' and 'result'")
    result = document["result"]
    if not isinstance(result, dict):
        raise ValueError("At /result: the result must be a JSON object")
    checked = dict(result)
    checked.setdefault("schema", 1)
    valid, error = validation.check_result(checked)
    if not valid:
        raise ValueError("Invalid result: %s" % error)
    spec = document.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if mime == "text/html":
        return method.printable(render.result_html(spec, result))
    return method.printable(render.result_text(spec, result))


def spec_format(text, argv=()):
    """stdin (the spec) and argv [MIME] -> the formatted spec."""
    mime = method.mime_type(list(argv))
    spec = specs.require_valid(method.loads(text))
    if mime == "text/html":
        return method.printable(render.spec_html(spec))
    return method.printable(render.spec_text(spec))
