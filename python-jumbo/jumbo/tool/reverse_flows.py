"""The reverse search's flows: each flow's size search over reply sizes (FlowSearch), a round
sent and collected over all flows, the dest's own refusals (LIMIT), and each flow's verdict
from the dest's report. The discipline (an arrival is proof, a silence a sign) is the forward
search's: jumbo.probe.silence."""

import select
import struct
import time

from ..core.result import Flow
from ..probe.silence import even_sizes, silences_needed
from ..probe.wire import LIMIT, PROBE, ANSWER

CONFIRM = 3               # silences needed before a size counts as not crossing
MAX_CONFIRM = 6           # ... at most, where the flow saw loss
PACE_BYTES = 48000        # requests sent back to back before a short pause
PACE_PAUSE = 0.002


def spread(low, high, count):
    """Up to `count` distinct integers strictly between low and high, evenly spaced."""
    if high - low <= 1:
        return []
    if high - low - 1 <= count:
        return list(range(low + 1, high))
    return sorted(even_sizes(low, high, count) - {low, high})


class FlowSearch(object):
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
        explanation (jumbo.probe.silence), at most MAX_CONFIRM."""
        if self.good is None:
            return CONFIRM
        lost = sum(count for size, count in self.silent.items() if size <= self.good)
        return silences_needed(CONFIRM, lost, len(self.client.replies), MAX_CONFIRM)

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
        self.plan = spread(low, high, per_round - 1)
        if not settled:
            self.plan += [high] * (2 if high == low + 1 else 1)


def collect_all(searches, until):
    """Read answers on every flow's socket until each has its round's answers or `until`."""
    while True:
        pending = []
        for search in searches:
            search.client.drain()
            if not set(search.seqs).issubset(search.client.replies):
                pending.append(search.client.sock)
        remaining = until - time.monotonic()
        if not pending or remaining <= 0:
            return
        try:
            select.select(pending, [], [], remaining)
        except InterruptedError:
            pass


def send_round(searches):
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


def refusals(search, refused, floor):
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


def flow_verdict(search, refused, ceiling, report, answer):
    """The flow's Flow (jumbo.core.result) from its search and the dest's report; notes go
    to `answer` (the Reverse being built)."""
    flow = Flow(flow=search.index, source_port=search.port(), path_mtu=search.good,
                pmtud="unknown")
    if search.good is None:
        return flow
    if search.boundary is None:
        if search.good >= ceiling:
            flow.pmtud = "not-needed"
            answer.note("replies of the largest size tried (%d) came back" % ceiling)
        else:
            answer.note("reverse search stopped early (time budget): %d is a lower bound"
                        % search.good)
        return flow
    if search.boundary in refused:
        flow.pmtud = "not-needed"
        return flow
    if report is None:
        answer.note("the dest's STATUS answer was lost: reverse PMTUD not judged here")
        answer.pending = True  # merged-results decides from the dest's own report
        return flow
    sent = (report.get("boundary") or {}).get("%s:%d" % (search.client.nonce.hex(),
                                                           search.boundary))
    if not sent:
        answer.note("requests for %d-byte replies never reached the dest (lost on the forward "
                    "path): %d is a lower bound of the reverse path MTU"
                    % (search.boundary, search.good))
        return flow
    ptbs = [p for p in report.get("ptb") or [] if p.get("useful")]
    nonce = search.client.nonce.hex()
    # A usable too-big for this flow's replies, or one naming exactly the MTU this flow found
    # (routers rate-limit their ICMP, so not every flow gets its own).
    if any(nonce in (p.get("flows") or []) or p.get("mtu") == search.good for p in ptbs):
        flow.pmtud = "ok"
    else:
        flow.pmtud = "blackhole"
        if report.get("ptb"):
            answer.note("the dest received too-big messages, none usable for flow %d"
                        % search.index)
    return flow

