"""The `jumbo` archiver's methods (jumbo.archive.archiver does the work)."""

import importlib

from ..archive import archiver
from . import method


def data_is_valid(text):
    try:
        data = method.loads(text or "null")
    except ValueError as err:
        return {"valid": False, "error": str(err)}
    return archiver.data_is_valid(data)


def archive():
    """The long-lived `archive` stream: envelopes in on stdin, answers out on stdout."""
    return archiver.serve()


def enumerate_plugin():
    """The enumeration in the shape the installed pScheduler accepts (jumbo.protocol.
    enumeration: 5.2's or the 5.3 line's contract)."""
    # Loaded here only (it reads the test types' forms, hence the probe stack): pScheduler
    # calls data-is-valid on every task submission, on a node that may be busy.
    return importlib.import_module(".enumeration", __package__).enumerate_plugin(
        "archiver", "jumbo")
