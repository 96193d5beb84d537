"""The `jumbo-throughput` test's methods: stdin text and argv in, the answer out
(jumbo.testtype.pair does the work)."""

from ..core import validate as validation
from ..testtype import pair
from . import method


def spec_is_valid(text):
    return method.spec_is_valid(text, pair.validate)


def cli_to_spec(argv, stdin):
    return pair.cli_to_spec(method.cli_argv(argv, stdin))


def spec_to_cli(text):
    return pair.spec_to_cli(method.loads(text))


def participants(text):
    return pair.participants(method.loads(text))


def result_format(text, argv=()):
    """stdin {"spec", "result"}, argv [MIME] -> text. ValueError on bad input."""
    mime = method.mime_type(list(argv))
    document = method.loads(text)
    if not isinstance(document, dict) or not isinstance(document.get("result"), dict):
        raise ValueError("Expected a JSON object with 'spec' and a 'result' object")
    result = document["result"]
    checked = dict(result)
    checked.setdefault("schema", 1)
    valid, error = validation.check_pair_result(checked)
    if not valid:
        raise ValueError("Invalid result: %s" % error)
    spec = document.get("spec") if isinstance(document.get("spec"), dict) else {}
    if mime == "text/html":
        return method.printable(pair.result_html(spec, result))
    return method.printable(pair.result_text(spec, result))


def spec_format(text, argv=()):
    mime = method.mime_type(list(argv))
    spec = pair.require_valid(method.loads(text))
    return method.printable(pair.spec_html(spec) if mime == "text/html" else pair.spec_text(spec))
