"""jumbo.core.errors: one exception base. Every exception class the library defines is a
JumboError (a command catches that one name for the failures it explains to the operator),
except the tool's slot signals, BaseExceptions on purpose (no `except Exception` in a phase
may swallow the slot's end or the runner's SIGTERM)."""

import importlib
import inspect
import os
import pkgutil

import jumbo
from jumbo.core.errors import JumboError

SIGNALS = {"jumbo.tool.slot.Deadline", "jumbo.tool.slot.Terminated", "jumbo.tool.slot.StepOver"}


def _exception_classes():
    found = {}
    path = os.path.dirname(jumbo.__file__)
    for info in pkgutil.walk_packages([path], "jumbo."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__.startswith("jumbo."):
                found["%s.%s" % (value.__module__, value.__qualname__)] = value
    return found


def test_every_library_exception_is_a_jumbo_error():
    classes = _exception_classes()
    assert len(classes) > 20 and SIGNALS <= set(classes)
    outside = sorted(name for name, kind in classes.items()
                     if not issubclass(kind, JumboError) and name not in SIGNALS)
    assert not outside, outside


def test_a_bad_input_error_is_still_a_value_error():
    from jumbo.archive.record import BadRecord
    from jumbo.core.resolve import ResolveError
    from jumbo.testtype.spec import CliError
    for kind in (BadRecord, ResolveError, CliError):
        assert issubclass(kind, ValueError) and issubclass(kind, JumboError)


def test_the_probe_command_explains_a_library_error(capsys, monkeypatch):
    """jumbocheck (the console script) prints a JumboError's message and exits 1, no
    traceback, whichever library error it is."""
    from jumbo.core.resolve import ResolveError
    from jumbo.protocol import probe_cli

    def fails(spec, progress=None):
        raise ResolveError("cannot resolve nowhere.invalid")
    monkeypatch.setattr(probe_cli, "measure", fails)
    assert probe_cli.main(["--dest", "nowhere.invalid", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err == "jumbocheck: cannot resolve nowhere.invalid\n"
