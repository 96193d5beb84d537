"""The `jumbo` archiver's methods (jumbo.archive.archiver does the work)."""

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
