"""The `jumbocheck` tool: everything behind its pScheduler methods.

It runs two tests (a tool may serve several): `pmtu` (background: forward, reverse, hops,
flows; no bulk traffic) and `jumbo-throughput` (exclusive: the path MTU with one flow, then
the paired 1500/9000 iperf3 legs; jumbo.testtype.pair). A jumbo-throughput spec is turned into the
tool's internal, pmtu-shaped spec with a `throughput` object (jumbo.core.spec.internal_spec), so
both tests share one run path below; what differs is the run's kind (jumbo.tool.kinds: PmtuRun,
PairRun), chosen once from the test's type (test_kind).

Participants (from the test's `participants`):
  p0 = the source = the lead: probes the forward path (jumbo.probe; through p1's reflector
       when p1 takes part, which spends no ICMP budget on the dest), measures the reverse path
       against p1's reflector (jumbo.tool.reverse) and runs the iperf3 clients
       (jumbo.tool.throughput);
  p1 = the dest, present only when the spec asks for `reverse` or `throughput`: runs the
       reflector (UDP) and, for the throughput phase, one `iperf3 -s` for this run's legs.

Participant data (computed at scheduling time, on each participant for its own index):
  p0: {"schema": 1, "protocol": 2, "source-address": <the address p0 will probe from: the
       spec's source, else the one its routes give towards the dest; absent when neither
       resolves>}
  p1: {"schema": 1, "protocol": 2, "reflector-ports": [REFLECTOR_CANDIDATES distinct UDP ports,
       random in REFLECTOR_PORTS], "iperf3-port": <TCP port: spec throughput.port, else random
       in throughput.PORT_RANGE> (only with a throughput phase), "_token": <128-bit random
       hex, one per run>}
  Ports chosen at scheduling are not held: when p1's `run` starts, other runs (a mesh's
  background pmtu runs) may hold some. p1's reflector binds the first candidate free, on the
  test's address only; p0 greets every candidate and learns the port from the signed answer
  (jumbo.tool.reflector_port). The reflector answers only `source-address` (jumbo.tool.
  reflector). `_token` is private to pScheduler's API callers without the task's key, NOT to
  the task author (docs/security.md): what a token holder can do is bounded there. With a
  throughput phase both add `iperf3-auth` and p1 `_iperf3-key` (jumbo.tool.iperf_auth).

Time budget (`duration`, a pure function of the spec and the run's kind): jumbo.core.spec.slot.
Every phase runs against a hard deadline derived from schedule.start + the slot, and a
last-resort alarm turns an overrun into a clean `succeeded: false` line before the runner's
kill (slot end + 1 s): jumbo.tool.slot.

Output of `run`: exactly one JSON line {"succeeded", "result", "error", "diags"}.
  p0's `result` is already the test's result object (jumbo.tool.result.assemble); p1's is
  {"role": "dest", "reflector": {...}, "throughput-server": {...}|null}. `merged-results`
  (jumbo.tool.result.merge) folds p1's view into p0's.

Modules by phase: runner (the methods' inputs, checked; the run's dispatch), slot (budget,
deadline, alarms), source (p0's phases and result), dest (p1's reflector and iperf3 server).
"""

import random

from ..core import units
from ..core.spec import slot as slots
from ..core import terminate
from ..probe import wire
from . import reflector_port
from .dest import run_dest
from .kinds import KINDS, PairRun, PmtuRun
from .slot import (PROTOCOL, SCHEMA, SLOT_ALARM_MARGIN, Deadline, RunError, Terminated,
                   arm_alarm, budget_text, disarm_alarm)
from .source import run_source

TOOL = "jumbocheck"
# UDP ports the dest's reflector picks from (participant-data), and how many candidates a run
# has: with k of the range's 100 ports held by other runs when it starts, a run finds none
# free with probability about (k/100)^16 (1e-8 at 30, 4e-5 at 53).
REFLECTOR_PORTS = (5500, 5599)
REFLECTOR_CANDIDATES = 16
TESTS = (PmtuRun.TEST, PairRun.TEST)


# ----------------------------------------------------------------------------------------------
# Input checks shared by the methods

def test_kind(test, what="input"):
    """(kind, spec): the run's kind (jumbo.tool.kinds) and its RunSpec for a {"type", "spec"}
    object, checked; raises ValueError with the reason. A jumbo-throughput spec becomes its
    internal pmtu-shaped spec (see top)."""
    if not isinstance(test, dict):
        raise ValueError("%s must be a JSON object with type and spec" % what)
    kind = KINDS.get(test.get("type")) if isinstance(test.get("type"), str) else None
    if kind is None:
        raise ValueError("%s: this tool runs the %s tests, not %r"
                         % (what, " and ".join(sorted(KINDS, key=TESTS.index)),
                            test.get("type")))
    spec = test.get("spec")
    if not isinstance(spec, dict):
        raise ValueError("%s: spec must be a JSON object" % what)
    return kind, kind.spec(spec)


# ----------------------------------------------------------------------------------------------
# can-run, duration, participant-data

def can_run(test):
    """{"can-run": true} or {"can-run": false, "reasons": [...]}; never raises."""
    try:
        kind, _spec = test_kind(test, "test")
    except ValueError as err:
        return {"can-run": False, "reasons": [str(err)]}
    except Exception as err:  # noqa: BLE001 - can-run must always answer valid JSON
        return {"can-run": False, "reasons": ["cannot check the spec: %s" % err]}
    ok, reason = kind.available()
    if not ok:
        return {"can-run": False, "reasons": [reason]}
    return {"can-run": True}


def duration(test):
    """{"duration": "PT<n>S"}: an honest upper bound of the whole run (pure function)."""
    kind, spec = test_kind(test, "test")
    return {"duration": "PT%dS" % slots.seconds(kind.phases(spec))}


def participant_data(request):
    """What one participant tells the others, at scheduling time."""
    if not isinstance(request, dict):
        raise ValueError("input must be a JSON object with participant and test")
    index = request.get("participant")
    if isinstance(index, bool) or not isinstance(index, int) or index not in (0, 1):
        raise ValueError("participant must be 0 or 1, not %r" % (index,))
    kind, spec = test_kind(request.get("test"), "test")
    data = {"schema": SCHEMA, "protocol": PROTOCOL}
    data.update(kind.participant_data(index, spec))
    if index == 0:
        address = reflector_port.source_address(spec)
        if address is not None:
            data["source-address"] = address
        return data
    rng = random.SystemRandom()
    data["reflector-ports"] = rng.sample(range(REFLECTOR_PORTS[0], REFLECTOR_PORTS[1] + 1),
                                         REFLECTOR_CANDIDATES)
    data["_token"] = wire.new_token()
    return data


# ----------------------------------------------------------------------------------------------
# run

def parse_time(text):
    """Unix time of an ISO 8601 timestamp with offset (as the runner writes schedule.start)."""
    if not isinstance(text, str):
        raise ValueError("schedule.start must be an ISO 8601 timestamp")
    try:
        return units.unix_time(text)
    except ValueError:
        raise ValueError("schedule.start %r is not an ISO 8601 timestamp" % text)


class Run(object):
    """A parsed run input: `kind` is the run's kind (jumbo.tool.kinds), `full` its spec typed,
    every default filled (jumbo.core.spec), `budget` its seconds per phase."""

    def __init__(self, run_input):
        if not isinstance(run_input, dict):
            raise ValueError("run input must be a JSON object")
        self.kind, self.full = test_kind(run_input.get("test"), "test")
        index = run_input.get("participant")
        if isinstance(index, bool) or index not in (0, 1):
            raise ValueError("participant must be 0 or 1, not %r" % (index,))
        self.index = index
        schedule = run_input.get("schedule")
        if not isinstance(schedule, dict):
            raise ValueError("schedule must be an object with start and duration")
        self.start = parse_time(schedule.get("start"))
        self.budget = self.kind.phases(self.full)
        slot = schedule.get("duration")
        try:
            self.slot = units.duration_seconds(slot) if slot is not None \
                else float(slots.seconds(self.budget))
        except ValueError as err:
            raise ValueError("schedule.duration: %s" % err)
        self.end = self.start + self.slot
        data = run_input.get("participant-data")
        self.data = data if isinstance(data, list) else []
        self.two = self.full.needs_dest

    def peer(self):
        """p1's participant data (ports, token), or raise RunError."""
        if len(self.data) < 2 or not isinstance(self.data[1], dict):
            raise RunError("no participant data from the dest participant")
        data = self.data[1]
        if data.get("protocol") != PROTOCOL:
            raise RunError("the dest participant speaks jumbocheck protocol %r, this node %d"
                           % (data.get("protocol"), PROTOCOL))
        return data


def failure(error, diags=""):
    return {"schema": SCHEMA, "succeeded": False, "result": None, "error": error,
            "diags": diags}


def run_participant(run_input):
    """Run one participant; returns its output object (never raises)."""
    try:
        run = Run(run_input)
    except ValueError as err:
        return failure(str(err), "the run input was rejected before measuring")
    except Exception as err:  # noqa: BLE001 - never a traceback
        return failure("cannot read the run input: %s: %s" % (type(err).__name__, err))
    alarm = arm_alarm(run.end - SLOT_ALARM_MARGIN)
    try:
        if terminate.received():
            raise Terminated()  # before our handler was in place
        if run.index == 1:
            return run_dest(run)
        return run_source(run)
    except Deadline:
        return failure("the run reached the end of its time slot and was stopped",
                        "phase budget: %s" % budget_text(run.budget))
    except Terminated:
        return failure("the run was terminated (SIGTERM) before it finished",
                        "phase budget: %s" % budget_text(run.budget))
    except RunError as err:
        return failure(str(err))
    except Exception as err:  # noqa: BLE001 - never a traceback
        return failure("%s: %s" % (type(err).__name__, err), "unexpected failure in run")
    finally:
        disarm_alarm(alarm)

