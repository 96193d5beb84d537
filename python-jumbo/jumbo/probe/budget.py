"""Our model of the dest's ICMP answer budget, for single-ended runs.

Linux answers UDP probes (port unreachable) and TTL-limited ones from a per-peer token bucket:
a burst of 6 answers, refilled one answer per `net.ipv4.icmp_ratelimit` (1 s by default) for
IPv4 and `net.ipv6.icmp.ratelimit` for IPv6. The IPv6 refill differs by kernel and setting:
1 a second, 4 (older kernels shorten the interval for a /64 peer) or 10 (kernels that ship a
100 ms default). A run that plans at too slow a rate waits for answers that were already
there; one that plans too fast sends probes into an empty bucket, and their silences look
like loss. So the model starts from our own kernel's setting and learns from what the dest
grants: after a moment the budget was known dry, k answered probes sent within `span`
seconds prove a refill of at least (k - 1) / span answers a second; a refusal where the
model still held an answer halves it.
"""

import time

# XRLIM_BURST_FACTOR: a kernel constant, not a sysctl.
BURST = 6.0
# The lowest refill a dest is planned at (IPv4's default), the highest we believe.
MIN_RATE = 1.0
MAX_RATE = 20.0
# Where our own kernel's setting cannot be read: IPv4's default, IPv6's lowest common rate
# above 1/s (a /64 peer on older kernels).
FALLBACK_RATE = {4: 1.0, 6: 4.0}
RATELIMIT_SYSCTL = {4: "/proc/sys/net/ipv4/icmp_ratelimit", 6: "/proc/sys/net/ipv6/icmp/ratelimit"}
# Answers after a dry moment before their pace counts as evidence of the rate (two could be
# the part of an answer left at the dry moment and a single refill).
MIN_EVIDENCE = 3
# Evidence spans at least this (a few round trips of noise cannot make a rate), and rests on
# the latest HISTORY dry moments and answers.
MIN_SPAN = 0.1
HISTORY = 16


def prior_rate(version):
    """The refill a run starts from: our own kernel's setting for that family (in a mesh of
    perfSONAR nodes, the likeliest setting of the dest too; readable without privileges),
    within [MIN_RATE, MAX_RATE]; 0 (no limit) counts as MAX_RATE."""
    try:
        with open(RATELIMIT_SYSCTL[version]) as handle:
            millis = int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return FALLBACK_RATE[version]
    if millis <= 0:
        return MAX_RATE
    return min(MAX_RATE, max(MIN_RATE, 1000.0 / millis))


class AnswerBudget(object):
    """Tokens the dest holds for our probes (answers), its refill rate as learned so far."""

    def __init__(self, version, capacity=BURST, rate=None):
        self.rate = prior_rate(6 if version == 6 else 4) if rate is None else rate
        self.capacity = capacity
        self.tokens = capacity
        self.stamp = time.monotonic()
        self.dries = []  # the latest moments the budget was known below one answer
        self.answers = []  # the send times of the latest answered probes

    def level(self):
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens

    def take(self, sent=None):
        """An answer came (to a probe sent at `sent`), so the dest had a token: the model
        never goes below empty, and the answers since a dry moment bound the refill rate."""
        self.level()
        self.tokens = max(self.tokens - 1.0, 0.0)
        if sent is None:
            return
        self.answers = (self.answers + [sent])[-HISTORY:]
        self._learn()

    def _learn(self):
        """After a dry moment d (below one answer), n answers to probes sent in (d, s] need
        n < 1 + rate x (s - d): the rate is at least (n - 1) / (s - d). The tightest such
        bound over the dry moments kept, when it rests on MIN_EVIDENCE answers and a span
        of MIN_SPAN, raises the rate (never above MAX_RATE)."""
        for dry in self.dries:
            later = [t for t in self.answers if t > dry]
            if len(later) < MIN_EVIDENCE:
                continue
            span = max(later) - dry
            if span >= MIN_SPAN:
                self.rate = max(self.rate, min(MAX_RATE, (len(later) - 1) / span))

    def empty(self, since=None, sure=True):
        """The dest refused an answer at `since` (default now): its budget was below one
        answer then, and at least a whole answer has accrued 1/rate later. The first refusal
        sets the level (a run starts not knowing what the run before it left); a later one
        where the model still held a whole answer says the rate is too high: halve it. Only
        a `sure` refusal (not one lost answer) moves the rate or becomes a dry moment to learn
        it from: a loss taken for a dry budget would make a 1/s dest look fast."""
        now = time.monotonic()
        self.level()
        when = now if since is None else since
        model_then = self.tokens - (now - when) * self.rate
        self.tokens = min(self.tokens, max(0.0, (now - when) * self.rate))
        if not sure:
            return
        if self.dries and model_then >= 1.0:
            self.rate = max(MIN_RATE, self.rate / 2.0)
        self.dries = (self.dries + [when])[-HISTORY:]

    def seconds_until(self, answers):
        """Seconds until the model holds `answers` answers."""
        missing = answers - self.level()
        return max(0.0, missing / self.rate)

    def affordable(self, seconds):
        """Answers the dest can give within `seconds` from now: the level and its refill."""
        return self.level() + max(0.0, seconds) * self.rate


# The dest's answers a rate-limited flow that has not answered yet is planned to need: its
# answer, and on a path with a partial black hole or loss the companions that make its
# silences votes.
ANSWERS_PER_FLOW = 3


def answers_needed(search):
    """The dest's answers a rate-limited flow still needs, as its search stands: the votes
    its boundary lacks (each ordered silence is one round with an answered companion), at
    least one. For a flow nothing has answered yet (its first round met a spent budget):
    ANSWERS_PER_FLOW where the run saw loss or a black hole, else 2 (its answer, and one
    companion should its size turn out to vanish)."""
    if search.lo is None:
        if search.losses + search.losses_elsewhere or search.holes_elsewhere:
            return ANSWERS_PER_FLOW
        return 2
    return max(1, search.need() - search.votes.get(search.hi, 0))
