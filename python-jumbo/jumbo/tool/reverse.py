"""The reverse path measured from the source (p0): a size search over the sizes of the
replies p1's reflector sends (jumbo.probe.wire has the wire format, jumbo.tool.reflector the
reflector itself), the STATUS exchange that brings back p1's report, and the bound on how long the
search may take (max_duration, part of the tool's duration budget).

Over 400 lines, and _search over 60, because the search is one algorithm: the flows' state
(_FlowSearch), the rounds (_search: send, collect, count silences, stop) and the verdict
(_flow_verdict) read each other's fields, and a round reads best as one loop. Standard library
only; runs unprivileged on Python 3.6.
"""

import errno
import json
import math
import os
import select
import socket
import struct
import time

from ..core.mtu import IP_HEADER, MIN_MTU, PLATEAUS
from ..core.units import duration_seconds_or_none
from ..probe.wire import (ANSWER, HEADER_LEN, HELLO, IPV6_MTU, IPV6_MTU_DISCOVER,
                          IPV6_PMTUDISC_DONT, IP_MTU_DISCOVER, IP_PMTUDISC_DONT, LIMIT, PROBE,
                          SOL_IP, SOL_IPV6, STATUS, UDP_HEADER, big_buffers, decode, encode,
                          token_key)

# Source side search parameters.
# Seconds p0 keeps greeting p1 (p0 already waited the runner's START_WAIT for p1's start-up
# and clock skew, and the forward phase has usually talked to the reflector already).
HELLO_WINDOW = 2.5
HELLO_INTERVAL = 0.25
SIZES_PER_ROUND = 48      # probe sizes sent per round trip (over all flows)
CONFIRM = 3               # silences needed before a size counts as not crossing
MAX_CONFIRM = 6           # ... at most, where the flow saw loss
MAX_ROUNDS = 8
MAX_FLOWS = 8             # reverse flows searched side by side (distinct source ports)
PACE_BYTES = 48000        # requests sent back to back before a short pause
PACE_PAUSE = 0.002
STATUS_TRIES = 4
STATUS_SIZE = 1280        # STATUS requests: IPv6's minimum MTU, whole on any path; p1's answer fits in it
DEFAULT_MAX_SIZE = 9216   # largest reply size tried when the spec has no max-mtu


# ----------------------------------------------------------------------------------------------
# The source side: a size search over reply sizes


class _Client(object):
    def __init__(self, address, port, key, version, forward_mtu, source=None):
        self.address = (address, port)
        self.key = key
        self.version = version
        self.overhead = IP_HEADER[version] + UDP_HEADER
        self.nonce = os.urandom(8)
        self.seq = 0
        self.sent = {}  # seq -> (kind, size, time sent)
        self.replies = {}  # seq -> (kind, size, rtt, body)
        self.probes = 0
        self.forward_mtu = forward_mtu
        self.route_mtu = None
        family = socket.AF_INET6 if version == 6 else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        big_buffers(self.sock)
        if source:
            # The spec's source address: the reverse path measured is the one to it.
            try:
                self.sock.bind((source, 0))
            except OSError:
                self.sock.close()
                raise
        if version == 6:
            # Requests may be fragmented, by us, to what the forward path really carries.
            self.sock.setsockopt(SOL_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DONT)
            if forward_mtu and forward_mtu >= MIN_MTU[6]:
                try:
                    self.sock.setsockopt(SOL_IPV6, IPV6_MTU, int(forward_mtu))
                except OSError:
                    pass
                self.route_mtu = _route_mtu(address, port)
        else:
            # DF off: routers fragment requests larger than the forward path.
            self.sock.setsockopt(SOL_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)

    def close(self):
        self.sock.close()

    def padded(self, size):
        """The request size for a reply of `size` bytes.

        Linux sends an IPv6 datagram no larger than the route MTU whole, even when IPV6_MTU
        is smaller (it only fragments datagrams above the route MTU, at IPV6_MTU). So a
        request between the forward path MTU and the route MTU is padded past the route MTU,
        to be fragmented and cross the forward path. IPv4 routers fragment by themselves."""
        if self.version == 6 and self.forward_mtu and self.route_mtu and \
                self.forward_mtu < size <= self.route_mtu:
            return self.route_mtu + 1
        return size

    def send(self, kind, size=0, total=0, body=b""):
        self.seq += 1
        seq = self.seq
        payload = max(HEADER_LEN + len(body), total - self.overhead if total else 0)
        message = encode(self.key, b"Q", kind, seq, self.nonce, size=size, body=body,
                         total=payload)
        self.sent[seq] = (kind, size, time.monotonic())
        if kind == PROBE:
            self.probes += 1
        try:
            self.sock.sendto(message, self.address)
        except OSError as err:
            if err.errno in (errno.ENOBUFS, errno.EAGAIN, errno.ECONNREFUSED, errno.EHOSTUNREACH,
                             errno.ENETUNREACH):
                return seq
            raise
        return seq

    def collect(self, wanted, until):
        """Read answers until every seq in `wanted` has one or `until` (monotonic) passes."""
        wanted = set(wanted)
        while True:
            self._drain()
            if wanted.issubset(self.replies):
                return
            remaining = until - time.monotonic()
            if remaining <= 0:
                return
            try:
                select.select([self.sock], [], [], remaining)
            except InterruptedError:
                pass

    def _drain(self):
        for _ in range(512):
            try:
                data, _addr = self.sock.recvfrom(65535)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                continue  # an ICMP error (e.g. port unreachable) surfaced on the socket
            message = decode(self.key, b"A", data)
            if message is None:
                continue
            kind, seq, nonce, size, body = message
            if nonce != self.nonce or seq not in self.sent or seq in self.replies:
                continue
            sent_kind, sent_size, stamp = self.sent[seq]
            if (kind & ~ANSWER) != sent_kind and kind != LIMIT:
                continue
            if kind == PROBE | ANSWER and len(data) + self.overhead != sent_size:
                continue
            self.replies[seq] = (kind, sent_size, time.monotonic() - stamp, body)


def _route_mtu(address, port):
    """The kernel's MTU for the route to address (IPv6), or None."""
    probe = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        probe.connect((address, port))
        return probe.getsockopt(SOL_IPV6, IPV6_MTU)
    except OSError:
        return None
    finally:
        probe.close()


def _spread(low, high, count):
    """Up to `count` distinct integers strictly between low and high, evenly spaced."""
    if high - low <= 1:
        return []
    if high - low - 1 <= count:
        return list(range(low + 1, high))
    step = (high - low) / float(count + 1)
    return sorted({int(round(low + step * i)) for i in range(1, count + 1)} - {low, high})


def measure_reverse(address, port, token, version, forward_mtu=None, min_size=None,
                    max_size=None, timeout=1.0, deadline=None, flows=1, source=None):
    """Measure the reverse path MTU (dest -> here) with p1's reflector at address:port.

    `flows` searches run side by side, each from its own source port: on a reverse path with
    equal-cost members the dest's replies to each flow may be hashed onto a different member,
    so a member that is narrower (or a black hole) is caught, as the forward engine does.

    Returns a dict: reverse-path-mtu (the smallest over the flows, or None), reverse-pmtud,
    reverse-local-mtu (the dest's own interface MTU when known), reverse-ptb (PTBs the dest
    received), reverse-flows, probes, elapsed, rtt, rounds, error, notes, and the dest's report
    (`dest-report`) when its STATUS answer came back.
    """
    started = time.monotonic()
    if deadline is None:
        deadline = started + max_duration({"timeout": "PT%gS" % timeout})
    key = token_key(token)
    floor = max(MIN_MTU[version], min_size or 0, IP_HEADER[version] + UDP_HEADER + HEADER_LEN)
    ceiling = min(int(max_size or DEFAULT_MAX_SIZE), 65535)
    if ceiling < floor:
        ceiling = floor
    answer = {"reverse-path-mtu": None, "reverse-pmtud": "unknown", "reverse-local-mtu": None,
              "reverse-ptb": [], "reverse-flows": [], "probes": 0, "elapsed": 0.0, "rtt": None,
              "error": None, "notes": [], "dest-report": None,
              "reflector": "%s:%d" % (address, port)}
    clients = []
    try:
        for _ in range(max(1, min(int(flows or 1), MAX_FLOWS))):
            clients.append(_Client(address, port, key, version, forward_mtu, source))
    except OSError as err:
        for client in clients:
            client.close()
        answer["error"] = "cannot open the reverse-path socket: %s" % (err.strerror or err)
        return answer
    try:
        return _search(clients, answer, floor, ceiling, timeout, deadline, started)
    except OSError as err:
        answer["error"] = "reverse path measurement failed: %s" % (err.strerror or err)
        return answer
    finally:
        answer["probes"] = sum(client.probes for client in clients)
        answer["elapsed"] = round(time.monotonic() - started, 3)
        for client in clients:
            client.close()


class _FlowSearch(object):
    """The size search of one flow: the largest size answered (good), the sizes that stayed
    silent (with counts), and, when found, the boundary (good + 1, settled)."""

    def __init__(self, index, client, plan):
        self.index = index
        self.client = client
        self.plan = list(plan)
        self.seqs = []
        self.good = None
        self.silent = {}
        self.boundary = None
        self.done = False

    def port(self):
        try:
            return self.client.sock.getsockname()[1]
        except OSError:
            return None

    def _confirm(self):
        """Silences that make a size fail: CONFIRM on a clean path; where this flow lost
        sizes that cross (silent at or below its largest answer: loss, e.g. a fragment of a
        request on a lossy forward path), as many as make loss at the rate seen an unlikely
        explanation (below 1/1000), at most MAX_CONFIRM."""
        if self.good is None:
            return CONFIRM
        lost = sum(count for size, count in self.silent.items() if size <= self.good)
        if not lost:
            return CONFIRM
        arrived = len(self.client.replies)
        rate = (lost + 1.0) / (lost + arrived + 2.0)
        need = int(math.ceil(math.log(1e-3) / math.log(rate))) if rate < 1.0 else MAX_CONFIRM
        return max(CONFIRM + 1, min(MAX_CONFIRM, need))

    def update(self, refused, floor, ceiling, per_round):
        """Account for this round's answers and plan the next round (or finish)."""
        for seq in self.seqs:
            if self.client.replies.get(seq) is None:
                size = self.client.sent[seq][1]
                self.silent[size] = self.silent.get(size, 0) + 1
        # Late answers to earlier rounds count too: any arrival is proof.
        for kind, size, _rtt, _body in self.client.replies.values():
            if kind == PROBE | ANSWER and (self.good is None or size > self.good):
                self.good = size
        low = self.good if self.good is not None else floor - 1
        if self.good is not None and self.good >= ceiling:
            self.done, self.plan = True, []
            return
        above = sorted({s for s in self.silent if s > low} | {s for s in refused if s > low})
        if not above:
            self.plan = [ceiling]
            return
        high = above[0]
        settled = high in refused or self.silent.get(high, 0) >= self._confirm()
        if high == low + 1 and settled:
            self.boundary = high
            self.done, self.plan = True, []
            return
        self.plan = _spread(low, high, per_round - 1)
        if not settled:
            self.plan += [high] * (2 if high == low + 1 else 1)


def _collect_all(searches, until):
    """Read answers on every flow's socket until each has its round's answers or `until`."""
    while True:
        pending = []
        for search in searches:
            search.client._drain()
            if not set(search.seqs).issubset(search.client.replies):
                pending.append(search.client.sock)
        remaining = until - time.monotonic()
        if not pending or remaining <= 0:
            return
        try:
            select.select(pending, [], [], remaining)
        except InterruptedError:
            pass


def _send_round(searches):
    """Send every flow's sizes for this round, interleaved, paced in bursts of PACE_BYTES so
    that neither the dest's socket buffer nor a router queue overflows (a lost burst would
    look like an MTU limit)."""
    for search in searches:
        search.seqs = []
    burst = 0
    for index in range(max(len(s.plan) for s in searches)):
        for search in searches:
            if index < len(search.plan):
                size = search.plan[index]
                total = search.client.padded(size)
                search.seqs.append(search.client.send(PROBE, size, total))
                burst += total
                if burst >= PACE_BYTES:
                    time.sleep(PACE_PAUSE)
                    burst = 0


def _refusals(search, refused, floor):
    """LIMIT notices of this round: sizes the dest host itself cannot send (definitive)."""
    for seq in search.seqs:
        reply = search.client.replies.get(seq)
        if reply is None or reply[0] != LIMIT:
            continue
        size = search.client.sent[seq][1]
        refused.add(size)
        if len(reply[3]) == 2:
            # The dest's kernel said its interface MTU: nothing above it can be sent.
            hint = struct.unpack("!H", reply[3])[0]
            if floor <= hint < size:
                refused.add(hint + 1)


def _search(clients, answer, floor, ceiling, timeout, deadline, started):
    # 1. Hello until the reflector answers (it may start a little after us).
    first = clients[0]
    hello_until = min(deadline, started + HELLO_WINDOW)
    rtt = None
    while rtt is None and time.monotonic() < hello_until:
        seq = first.send(HELLO)
        first.collect([seq], min(hello_until, time.monotonic() + HELLO_INTERVAL))
        answered = [v for s, v in first.replies.items() if v[0] == HELLO | ANSWER]
        if answered:
            rtt = min(v[2] for v in answered)
    if rtt is None:
        answer["error"] = ("the dest participant's reflector at %s did not answer within %.1f s "
                           "(dest not running the tool, port filtered, or a wrong token)"
                           % (answer["reflector"], hello_until - started))
        return answer
    answer["rtt"] = round(rtt, 6)
    wait = _round_wait(timeout, rtt)

    # 2. The size searches, one per flow, round by round; LIMIT refusals are the dest host's
    #    own limit and count for every flow.
    plan = sorted({s for s in (floor,) + PLATEAUS + (ceiling,) if floor <= s <= ceiling})
    searches = [_FlowSearch(i, client, plan) for i, client in enumerate(clients)]
    per_round = max(6, SIZES_PER_ROUND // len(searches))
    refused = set()
    rounds = 0
    while rounds < MAX_ROUNDS and time.monotonic() + wait < deadline:
        active = [s for s in searches if not s.done and s.plan]
        if not active:
            break
        rounds += 1
        _send_round(active)
        _collect_all(active, time.monotonic() + wait)
        for search in active:
            _refusals(search, refused, floor)
        for search in active:
            search.update(refused, floor, ceiling, per_round)
            if search.good is None and search.silent.get(floor, 0) >= CONFIRM:
                search.done = True
    answer["rounds"] = rounds

    # 3. STATUS: p1's view (PTBs it received, its own limit, whether the silent sizes were
    #    really sent); it also tells p1 we are done.
    silent_edges = ["%s:%d" % (s.client.nonce.hex(), s.boundary) for s in searches
                    if s.boundary is not None and s.boundary not in refused]
    report = status(first, wait, deadline, silent_edges)
    answer["dest-report"] = report
    if report:
        answer["reverse-ptb"] = report.get("ptb") or []
        if report.get("local-mtu"):
            answer["reverse-local-mtu"] = report["local-mtu"]
    for search in searches:
        answer["reverse-flows"].append(_flow_verdict(search, refused, ceiling, report, answer))

    measured = [f["path-mtu"] for f in answer["reverse-flows"] if f["path-mtu"] is not None]
    if not measured:
        answer["error"] = "no reply of even %d bytes came back from the dest (reverse path)" % floor
        return answer
    answer["reverse-path-mtu"] = min(measured)
    verdicts = set(f["pmtud"] for f in answer["reverse-flows"] if f["path-mtu"] is not None)
    for verdict in ("blackhole", "unknown", "ok", "not-needed"):
        if verdict in verdicts:
            answer["reverse-pmtud"] = verdict
            break
    if answer["reverse-local-mtu"] is None and any(
            s.boundary in refused for s in searches if s.boundary is not None):
        answer["reverse-local-mtu"] = max(measured)
    if len(set(measured)) > 1:
        answer["notes"].append("reverse flows differ (%s): equal-cost paths of different MTU"
                               % ", ".join(str(m) for m in measured))
    return answer


def _flow_verdict(search, refused, ceiling, report, answer):
    flow = {"flow": search.index, "source-port": search.port(), "path-mtu": search.good,
            "pmtud": "unknown"}
    if search.good is None:
        return flow
    if search.boundary is None:
        if search.good >= ceiling:
            flow["pmtud"] = "not-needed"
            _note(answer, "replies of the largest size tried (%d) came back" % ceiling)
        else:
            _note(answer, "reverse search stopped early (time budget): %d is a lower bound"
                  % search.good)
        return flow
    if search.boundary in refused:
        flow["pmtud"] = "not-needed"
        return flow
    if report is None:
        _note(answer, "the dest's STATUS answer was lost: reverse PMTUD not judged here")
        answer["pending"] = True  # merged-results decides from the dest's own report
        return flow
    sent = (report.get("boundary") or {}).get("%s:%d" % (search.client.nonce.hex(),
                                                           search.boundary))
    if not sent:
        _note(answer, "requests for %d-byte replies never reached the dest (lost on the forward "
              "path): %d is a lower bound of the reverse path MTU"
              % (search.boundary, search.good))
        return flow
    ptbs = [p for p in report.get("ptb") or [] if p.get("useful")]
    nonce = search.client.nonce.hex()
    # A usable too-big for this flow's replies, or one naming exactly the MTU this flow found
    # (routers rate-limit their ICMP, so not every flow gets its own).
    if any(nonce in (p.get("flows") or []) or p.get("mtu") == search.good for p in ptbs):
        flow["pmtud"] = "ok"
    else:
        flow["pmtud"] = "blackhole"
        if report.get("ptb"):
            _note(answer, "the dest received too-big messages, none usable for flow %d"
                  % search.index)
    return flow


def _note(answer, text):
    if text not in answer["notes"]:
        answer["notes"].append(text)


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
        client = _Client(address, port, token_key(token), version, None)
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


def _round_wait(timeout, rtt):
    """How long a round waits for its replies after its last request: the replies come back
    to back one round trip after the requests, so ROUND_WAIT_RTTS round trips (+50 ms of
    jitter), at least 0.15 s, at most `timeout`. A reply later than that still counts in
    the next rounds (any arrival is proof; a size counts as silent only CONFIRM times)."""
    return min(max(timeout, 0.05), max(0.15, ROUND_WAIT_RTTS * rtt + 0.05))


def max_duration(spec):
    """Upper bound, in seconds, of measure_reverse for a spec (pure function of the spec):
    the greeting (HELLO_BUDGET), BUDGET_ROUNDS rounds and two STATUS tries, each round its
    RTT-based wait at WORST_RTT (capped by `timeout`). measure_reverse stops at this deadline
    (a search cut short says so: its answer is then a lower bound)."""
    timeout = duration_seconds_or_none((spec or {}).get("timeout") or "PT1S") or 1.0
    wait = _round_wait(timeout, WORST_RTT)
    return round(HELLO_BUDGET + BUDGET_ROUNDS * wait + 2 * max(wait, 0.3) + 0.3, 3)
