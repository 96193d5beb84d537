"""The `run` method's first import (its executable imports only jumbo.protocol): the early
SIGTERM guard, which lives in jumbo.core.terminate so that the tool's runner, a lower layer,
can ask whether a SIGTERM came while the library loaded."""

from ..core.terminate import defer

# The run executable's one name from here (it imports only jumbo.protocol).
__all__ = ["defer"]
