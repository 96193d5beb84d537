"""A run's time slot, phase by phase, and the jumbo-throughput test's slot rule.

pScheduler gives a run its test's scheduling class for the whole slot the tool asks for, so
the slot is part of what a test defines: a jumbo-throughput spec whose exclusive slot is over
the node's limit is not a valid spec. The test type (spec-is-valid) and the tool (duration,
the run's deadlines) read the same arithmetic here. The two bounds only the probe and the
reverse search know (their worst cases, jumbo.probe.max_duration and jumbo.tool.reverse.
max_duration) are handed in by the caller.

Slot = START_WAIT (clock skew, the dest's start-up; with a dest participant)
     + forward (the probe's bound; a jumbo-throughput run's at most PATH_MTU_BUDGET)
     + reverse (the reverse search's bound, when `reverse`)
     + throughput (the legs: legs_seconds)
     + STATUS_BUDGET (the final STATUS, with a dest and no reverse search) + TEARDOWN
"""

import math

from .. import limits

START_WAIT = 2.0      # p0 waits this long after start before talking to p1 (skew, start-up)
STATUS_BUDGET = 2.0   # the final STATUS exchange with p1 when no reverse search ran
TEARDOWN = 2.0        # stopping servers, writing the result
# jumbo-throughput measures the path MTU (one flow) before its legs, inside its exclusive slot:
# that step gets at most this long. When it runs out the legs still run, the jumbo leg at 9000
# (or the local MTU) with the stall check deciding, and the result says why the path MTU is
# unknown. pmtu itself has no such cap: its forward phase runs in the background.
PATH_MTU_BUDGET = 8.0
PHASES = ("start", "forward", "reverse", "throughput", "end")

# What the slot gives each leg beyond -O + -t: its process start, connection, parameter and
# results exchange (measured in the lab: docs/benchmarks.md "jumbo-throughput"); the first
# leg's wait for a server the dest starts at the slot's start; the legs' teardown.
LEG_OVERHEAD = 2.0
FIRST_CONNECT = 2.0
LEGS_TEARDOWN = 2.0

# The members of a jumbo-throughput spec that make its slot longer (the slot rule's advice).
SLOT_FIELDS = "duration, omit, rounds, direction, order"


def legs_seconds(phase):
    """Seconds the throughput legs are given (a ThroughputSpec; 0 for None).

    This is what a mesh pays for every run in an exclusive slot, so it is what the legs need
    when they work: the first connection's wait for the server + every leg's -O + -t +
    LEG_OVERHEAD (rounds x 4 legs for ABBA or x 2 for AB, doubled when the direction is both)
    + teardown. A leg that hangs is still killed at its own bound, and no leg starts that
    cannot end before the phase's deadline: the slot is never overrun."""
    if phase is None:
        return 0
    per_leg = phase.omit_seconds + phase.seconds + LEG_OVERHEAD
    return int(math.ceil(FIRST_CONNECT + phase.leg_count() * per_leg + LEGS_TEARDOWN))


def phases(spec, forward, reverse=0.0, forward_cap=None):
    """Seconds per phase {"start", "forward", "reverse", "throughput", "end"} of a RunSpec,
    given the probe's bound `forward` (capped at `forward_cap` when given) and the reverse
    search's bound `reverse` (counted only when the spec asks for the reverse path)."""
    forward = float(forward)
    if forward_cap is not None:
        forward = min(forward, forward_cap)
    two = spec.needs_dest
    return {"start": START_WAIT if two else 0.0, "forward": forward,
            "reverse": float(reverse) if spec.reverse else 0.0,
            "throughput": float(legs_seconds(spec.throughput)),
            # The final STATUS exchange runs only without a reverse search (which ends with
            # its own STATUS, inside its budget).
            "end": (STATUS_BUDGET if two and not spec.reverse else 0.0) + TEARDOWN}


def seconds(budget):
    """The whole slot of a phase budget, in whole seconds (rounded up)."""
    return int(math.ceil(sum(budget.values())))


def slot_problem(slot_seconds):
    """The slot rule: an exclusive slot of `slot_seconds` against the node's limit (jumbo.core.
    limits: throughput-max-slot, PT10M by default): "At /duration: ..." or None."""
    try:
        limit = limits.throughput_max_slot()
    except limits.LimitsError as err:
        return "At /duration: cannot check the slot: %s" % err
    if slot_seconds > limit:
        return ("At /duration: the run would reserve an exclusive slot of PT%dS on both nodes, "
                "more than this node allows (PT%dS, throughput-max-slot in %s); reduce %s"
                % (slot_seconds, limit, limits.path(), SLOT_FIELDS))
    return None
