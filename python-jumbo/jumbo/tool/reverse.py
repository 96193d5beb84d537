"""The reverse path measured from the source (p0): a size search over the sizes of the
replies p1's reflector sends (jumbo.probe.wire has the wire format, jumbo.tool.reflector the
reflector itself), the STATUS exchange that brings back p1's report, and the bound on how long
the search may take (max_duration, part of the tool's duration budget).

Modules: reverse (the search's steps: hello, rounds, STATUS, conclusion; its time bound),
reverse_flows (each flow's search and verdict), reverse_client (the sockets). Standard
library only; runs unprivileged on Python 3.6.
"""

import json
import time

from ..core.mtu import IP_HEADER, MIN_MTU, PLATEAUS
from ..core.result import Reverse, fold_pmtud
from ..core.units import duration_seconds_or_none
from ..probe.wire import ANSWER, HEADER_LEN, HELLO, STATUS, UDP_HEADER, token_key
from .reverse_client import ReflectorClient
from .reverse_flows import CONFIRM, FlowSearch, collect_all, flow_verdict, refusals, send_round

# Source side search parameters.
# Seconds p0 keeps greeting p1 (p0 already waited the runner's START_WAIT for p1's start-up
# and clock skew, and the forward phase has usually talked to the reflector already).
HELLO_WINDOW = 2.5
HELLO_INTERVAL = 0.25
SIZES_PER_ROUND = 48      # probe sizes sent per round trip (over all flows)
MAX_ROUNDS = 8
MAX_FLOWS = 8             # reverse flows searched side by side (distinct source ports)
STATUS_TRIES = 4
STATUS_SIZE = 1280        # STATUS requests: IPv6's minimum MTU, whole on any path; p1's answer fits in it
DEFAULT_MAX_SIZE = 9216   # largest reply size tried when the spec has no max-mtu


def measure_reverse(address, port, token, version, forward_mtu=None, min_size=None,
                    max_size=None, timeout=1.0, deadline=None, flows=1, source=None):
    """Measure the reverse path MTU (dest -> here) with p1's reflector at address:port.

    `flows` searches run side by side, each from its own source port: on a reverse path with
    equal-cost members the dest's replies to each flow may be hashed onto a different member,
    so a member that is narrower (or a black hole) is caught, as the forward engine does.

    Returns a jumbo.core.result.Reverse: path_mtu (the smallest over the flows, or None),
    pmtud, local_mtu (the dest's own interface MTU when known), ptb (PTBs the dest received),
    flows, probes, elapsed, rtt, rounds, error, notes, and the dest's report (`dest_report`)
    when its STATUS answer came back.
    """
    started = time.monotonic()
    if deadline is None:
        deadline = started + bound(timeout)
    key = token_key(token)
    floor = max(MIN_MTU[version], min_size or 0, IP_HEADER[version] + UDP_HEADER + HEADER_LEN)
    ceiling = min(int(max_size or DEFAULT_MAX_SIZE), 65535)
    if ceiling < floor:
        ceiling = floor
    answer = Reverse.started("%s:%d" % (address, port))
    clients = []
    try:
        for _ in range(max(1, min(int(flows or 1), MAX_FLOWS))):
            clients.append(ReflectorClient(address, port, key, version, forward_mtu, source))
    except OSError as err:
        for client in clients:
            client.close()
        answer.error = "cannot open the reverse-path socket: %s" % (err.strerror or err)
        return answer
    try:
        return _search(clients, answer, floor, ceiling, timeout, deadline, started)
    except OSError as err:
        answer.error = "reverse path measurement failed: %s" % (err.strerror or err)
        return answer
    finally:
        answer.probes = sum(client.probes for client in clients)
        answer.elapsed = round(time.monotonic() - started, 3)
        for client in clients:
            client.close()


def _search(clients, answer, floor, ceiling, timeout, deadline, started):
    first = clients[0]
    rtt = _hello(first, min(deadline, started + HELLO_WINDOW))
    if rtt is None:
        answer.error = ("the dest participant's reflector at %s did not answer within %.1f s "
                        "(dest not running the tool, port filtered, or a wrong token)"
                        % (answer.reflector, min(deadline, started + HELLO_WINDOW) - started))
        return answer
    answer.rtt = round(rtt, 6)
    wait = round_wait(timeout, rtt)
    searches, refused = _rounds(clients, answer, floor, ceiling, wait, deadline)
    # STATUS: p1's view (PTBs it received, its own limit, whether the silent sizes were
    # really sent); it also tells p1 we are done.
    silent_edges = ["%s:%d" % (s.client.nonce.hex(), s.boundary) for s in searches
                    if s.boundary is not None and s.boundary not in refused]
    report = status(first, wait, deadline, silent_edges)
    answer.dest_report = report
    if report:
        answer.ptb = report.get("ptb") or []
        if report.get("local-mtu"):
            answer.local_mtu = report["local-mtu"]
    for search in searches:
        answer.flows.append(flow_verdict(search, refused, ceiling, report, answer))
    return _conclude(answer, searches, refused, floor)


def _hello(client, until):
    """Greet the reflector until it answers (it may start a little after us): the smallest
    round trip seen, or None."""
    while time.monotonic() < until:
        seq = client.send(HELLO)
        client.collect([seq], min(until, time.monotonic() + HELLO_INTERVAL))
        answered = [v for s, v in client.replies.items() if v[0] == HELLO | ANSWER]
        if answered:
            return min(v[2] for v in answered)
    return None


def _rounds(clients, answer, floor, ceiling, wait, deadline):
    """The size searches, one per flow, round by round; LIMIT refusals are the dest host's
    own limit and count for every flow. (searches, refused sizes)."""
    plan = sorted({s for s in (floor,) + PLATEAUS + (ceiling,) if floor <= s <= ceiling})
    searches = [FlowSearch(i, client, plan) for i, client in enumerate(clients)]
    per_round = max(6, SIZES_PER_ROUND // len(searches))
    refused = set()
    rounds = 0
    while rounds < MAX_ROUNDS and time.monotonic() + wait < deadline:
        active = [s for s in searches if not s.done and s.plan]
        if not active:
            break
        rounds += 1
        send_round(active)
        collect_all(active, time.monotonic() + wait)
        for search in active:
            refusals(search, refused, floor)
        for search in active:
            search.update(refused, floor, ceiling, per_round)
            if search.good is None and search.silent.get(floor, 0) >= CONFIRM:
                search.done = True
    answer.rounds = rounds
    return searches, refused


def _conclude(answer, searches, refused, floor):
    """The reverse path MTU and PMTUD verdict over the flows."""
    measured = [f.path_mtu for f in answer.flows if f.path_mtu is not None]
    if not measured:
        answer.error = "no reply of even %d bytes came back from the dest (reverse path)" % floor
        return answer
    answer.path_mtu = min(measured)
    verdicts = set(f.pmtud for f in answer.flows if f.path_mtu is not None)
    if verdicts:
        answer.pmtud = fold_pmtud(verdicts)
    if answer.local_mtu is None and any(
            s.boundary in refused for s in searches if s.boundary is not None):
        answer.local_mtu = max(measured)
    if len(set(measured)) > 1:
        answer.notes.append("reverse flows differ (%s): equal-cost paths of different MTU"
                               % ", ".join(str(m) for m in measured))
    return answer


def status(client, wait, deadline, sizes=()):
    """Send STATUS (padded so the answer fits) until answered; p1's report dict, or None.
    `sizes`: reply sizes found silent; p1 says how many replies of each it really sent."""
    body = json.dumps(list(sizes)[:32]).encode()
    for _ in range(STATUS_TRIES):
        if time.monotonic() >= deadline:
            break
        seq = client.send(STATUS, 0, client.padded(STATUS_SIZE), body=body)
        client.collect([seq], min(deadline, time.monotonic() + max(wait, 0.3)))
        reply = client.replies.get(seq)
        if reply is not None:
            try:
                report = json.loads(reply[3].decode())
            except (ValueError, RecursionError):
                return None
            return report if isinstance(report, dict) else None
    return None


def say_goodbye(address, port, token, version, deadline, wait=0.3):
    """Only the STATUS exchange (used when no reverse search ran): p1 stops serving early."""
    try:
        client = ReflectorClient(address, port, token_key(token), version, None)
    except (OSError, ValueError):
        return None
    try:
        return status(client, wait, deadline)
    except OSError:
        return None
    finally:
        client.close()


# The slowest round trip the reverse bound is made for (intercontinental paths), and the
# rounds it budgets: a round waits ROUND_WAIT_RTTS round trips after its last request.
WORST_RTT = 0.3
ROUND_WAIT_RTTS = 1.5
BUDGET_ROUNDS = 6
# The greeting the bound budgets: the forward phase has already met the reflector, so it
# answers at once (HELLO_WINDOW still applies when there is time, e.g. no forward phase).
HELLO_BUDGET = 1.0


def round_wait(timeout, rtt):
    """How long a round waits for its replies after its last request: the replies come back
    to back one round trip after the requests, so ROUND_WAIT_RTTS round trips (+50 ms of
    jitter), at least 0.15 s, at most `timeout`. A reply later than that still counts in
    the next rounds (any arrival is proof; a size counts as silent only CONFIRM times)."""
    return min(max(timeout, 0.05), max(0.15, ROUND_WAIT_RTTS * rtt + 0.05))


def max_duration(spec):
    """Upper bound, in seconds, of measure_reverse for a spec (a RunSpec; pure function of
    the spec): see bound()."""
    return bound(duration_seconds_or_none(spec.timeout or "PT1S") or 1.0)


def bound(timeout):
    """Upper bound, in seconds, of measure_reverse with this `timeout` (seconds): the
    greeting (HELLO_BUDGET), BUDGET_ROUNDS rounds and two STATUS tries, each round its
    RTT-based wait at WORST_RTT (capped by `timeout`). measure_reverse stops at this deadline
    (a search cut short says so: its answer is then a lower bound)."""
    wait = round_wait(timeout, WORST_RTT)
    return round(HELLO_BUDGET + BUDGET_ROUNDS * wait + 2 * max(wait, 0.3) + 0.3, 3)

