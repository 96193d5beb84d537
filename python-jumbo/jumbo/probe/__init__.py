"""The path-MTU probing engine: exact forward path MTU, PMTUD health, black holes, hops, flows.

Public API:
    measure(spec, reflector=None, progress=None) -> outcome.PathResult (its as_json() is the
                                     test's forward result object, succeeded true)
    max_duration(spec) -> seconds a measure() with this spec can take at most
    ProbeError: raised with an operator-readable message when nothing can be measured
                (unresolvable dest, no route, missing IP version, no answer at all)

`spec` is a pmtu spec (a dict, defaults filled in here, or a core.spec.RunSpec).
See transport.py for how probes travel and search.py for the size search.
"""

from ..core.spec import run_spec
from .transport import ProbeError, Transport, Event
from .engine import Engine
from .outcome import PathResult
from .timing import max_duration as _max_duration

# The package's one public face.
__all__ = ["ProbeError", "Transport", "Event", "PathResult", "measure", "max_duration"]


def max_duration(spec):
    """Upper bound (seconds) of measure(spec); the engine stops itself before it."""
    return _max_duration(run_spec(spec))


def measure(spec, reflector=None, progress=None):
    """Measure the path described by `spec`; raises ProbeError when it cannot.

    `reflector`: {"port": int, "token": hex} of the dest participant's reflector (jumbo.
    reflector) in two-participant runs: forward probes then go through it (method
    "reflector"), falling back to ICMP echo / UDP when it does not answer. `progress`: called
    with a line of text as each phase begins (jumbocheck shows them on stderr)."""
    full = run_spec(spec)
    if not full.dest:
        raise ProbeError("No dest given")
    try:
        return Engine(full, reflector=reflector, progress=progress).run()
    except ProbeError:
        raise
    except OSError as err:
        raise ProbeError("Probing failed: %s" % (err.strerror or err))
