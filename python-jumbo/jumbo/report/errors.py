"""The one exception the report raises for anything the user can fix, and how a command
turns it (and everything else) into a message and an exit status."""

import sys

from ..archive.errors import ReportError, StoreDown
from .safe_output import message


# The report's exceptions, ReportError and StoreDown defined with the archive that raises
# them too: the report's modules and its callers read all three from here.
__all__ = ["NoData", "ReportError", "StoreDown", "exit_status"]


class NoData(ReportError):
    def __init__(self, message):
        super().__init__(message, status=4)


def exit_status(name, step):
    """Run `step()` for the command `name`: 0, or the message on stderr and the status of a
    ReportError (2 usage / 3 store down / 4 no data), 130 on Ctrl-C, 0 on a closed pipe, 2
    on an OS error, 1 on anything else (never a traceback to the user). A message often
    carries text from outside (a server's error, a file name, a label): it is escaped for
    the terminal (safe_output.message)."""
    try:
        step()
        return 0
    except ReportError as err:
        sys.stderr.write("%s: %s\n" % (name, message(err)))
        return err.status
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % name)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as err:
        sys.stderr.write("%s: %s\n" % (name, message(err)))
        return 2
    except Exception as err:  # noqa: BLE001 - never a traceback to the user
        sys.stderr.write("%s: internal error: %s: %s\n" % (name, type(err).__name__, message(err)))
        return 1
