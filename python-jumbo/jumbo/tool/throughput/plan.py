"""The throughput phase's plan: its settings from the spec, the legs in order, the time they
are given (duration, part of the tool's slot) and each leg's hard bound."""

from ...core.mtu import JUMBO_MTU, STANDARD_MTU, mss_for
from ...core.spec import RunSpec, ThroughputSpec
from ...core.spec.slot import legs_seconds

# Ports the dest's iperf3 server picks from (participant-data).
PORT_RANGE = (5600, 5999)

CONNECT_TIMEOUT = 3.0       # iperf3 --connect-timeout, per attempt
CONNECT_RETRY = 6.0         # how long the first leg retries while the server is not yet there
BETWEEN_LEGS_RETRY = 2.0    # later legs: the server only needs to get ready for the next test
LEG_MARGIN = 6.0            # parameter exchange, results exchange, process start (kill bound)
EXTRA_TAG = "jumbocheck"    # iperf3 --extra-data of our legs: "<tag> leg N of M[ last]"


def settings(spec):
    """The spec's throughput legs as a ThroughputSpec (defaults filled, durations in seconds),
    or None when there is no throughput phase. Raises ValueError for an unreadable duration."""
    if isinstance(spec, RunSpec):
        return spec.throughput
    phase = (spec or {}).get("throughput")
    if not isinstance(phase, dict):
        return None
    return ThroughputSpec(phase)


def leg_count(spec):
    phase = settings(spec)
    return 0 if phase is None else phase.leg_count()


def leg_timeout(phase):
    """Hard bound on one iperf3 client: connect (with retries), -O, -t, exchanges."""
    return CONNECT_RETRY + phase.omit_seconds + phase.seconds + LEG_MARGIN


def interval(phase):
    """Reporting interval: enough window samples to infer the MSS (0.1 s .. 1 s)."""
    return max(0.1, min(1.0, round(phase.seconds / 20.0, 1)))


def duration(spec):
    """Seconds the phase is given in the slot; 0 without `throughput` (jumbo.core.spec.slot.
    legs_seconds: the slot is part of the test's definition)."""
    return legs_seconds(settings(spec))


def jumbo_leg_mtu(path_mtu, local_mtu=None):
    """(mtu or None, note): the size the jumbo leg can honestly test.

    path MTU >= 9000: 9000. Between 1500 and 9000: the path MTU (said in the note).
    1500 or less: None, the jumbo leg is skipped (the standard legs still run, so the
    result keeps a baseline). Unknown path MTU: 9000 (or the local MTU) is tried, and the
    stall check decides."""
    candidates = [JUMBO_MTU]
    note = None
    if local_mtu:
        candidates.append(int(local_mtu))
    if path_mtu:
        candidates.append(int(path_mtu))
    else:
        note = "path MTU unknown: the jumbo leg tries %d and relies on the stall check" % min(
            candidates)
    mtu = min(candidates)
    if mtu <= STANDARD_MTU:
        return None, ("path MTU %s is not above %d: no jumbo leg to run (the standard legs "
                      "still run)" % (path_mtu if path_mtu else local_mtu, STANDARD_MTU))
    if mtu < JUMBO_MTU and note is None:
        what = "path MTU" if path_mtu and int(path_mtu) == mtu else "local MTU"
        note = "%s is %d: the jumbo leg runs at MTU %d, not %d" % (what, mtu, mtu, JUMBO_MTU)
    return mtu, note


def plan(spec, path_mtu, ip_version=4, local_mtu=None):
    """The legs in order: [{order, round, size, mtu, mss, direction}], and the plan notes."""
    phase = settings(spec)
    if phase is None:
        return [], {"skipped": "no throughput phase in the spec"}
    jumbo_mtu, note = jumbo_leg_mtu(path_mtu, local_mtu)
    legs = []
    for rnd in range(phase.rounds):
        for size in phase.pattern():
            mtu = STANDARD_MTU if size == "standard" else jumbo_mtu
            if mtu is None:
                continue
            for direction in phase.directions():
                legs.append({"order": len(legs), "round": rnd, "size": size, "mtu": mtu,
                             "mss": mss_for(mtu, ip_version), "direction": direction})
    info = {"jumbo-mtu": jumbo_mtu, "note": note,
            "skipped": note if jumbo_mtu is None else None}
    return legs, info
