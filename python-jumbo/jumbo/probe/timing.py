"""The time a measurement may take: the waits the rounds use and the bound (`max_duration`)
that pScheduler reserves for a run, argued from the engine's own worst case. The engine
stops itself at that bound, and its searches early enough for the TTL scans it includes."""

# Silence is declared after max(WAIT_RTTS round trips, MIN_WAIT) once an RTT is known: a
# late answer still counts when it comes (an arrival is proof at any time).
MIN_WAIT = 0.015
WAIT_RTTS = 3.0
# Before anything answered: resend the first train this often (a dest whose ICMP budget is
# spent answers again within a second; resending finds that moment without guessing it).
CONTACT_RETRY = 0.5
# Nothing answered at all within this: the dest does not answer (an error, not a wait).
CONTACT_SECONDS = 3.0
# The slowest round trip the time bound is made for (intercontinental paths).
WORST_RTT = 0.3
SETUP_SECONDS = 0.5
# Seconds budgeted for the primary search: 4 answered rounds a second apart (an IPv4 dest
# answering UDP once a second, the first answer up to a second late), plus the round trips;
# silence (a train's silences are settled by its first answer, one round trip).
SEARCH_SECONDS = 4 * 1.0 + 2 * WORST_RTT
# Each further flow: one answer of the dest's budget (1/s IPv4; the round trip overlaps);
# through the dest's reflector answers are free and the flows go together (a round trip).
FLOW_SECONDS = 1.0
FLOW_SECONDS_REFLECTOR = WORST_RTT
# Through the reflector the verifying flows share their rounds, so past a few flows more of
# them cost sending time, not rounds: the verification is capped at VERIFY_ROUNDS rounds that
# wait out their silences, plus FLOW_SEND_SECONDS per flow (a few probes of up to 9000 bytes
# each, paced; the reflector answers 2000 requests a second).
VERIFY_ROUNDS = 3
FLOW_SEND_SECONDS = 0.02
# Through the dest's reflector (two-participant runs) answers are free: a round ends with
# its first answer (a round trip), only the last one waits out its silences; trains of 7
# sizes at long round trips reach the 1-byte boundary from anywhere in 5 rounds.
REFLECTOR_SEARCH_SECONDS = 5 * WORST_RTT + WAIT_RTTS * WORST_RTT
# Greeting the dest's reflector (two-participant runs) before probing through it.
HELLO_SECONDS = 1.0
# TTL scans (locating a black hole; the per-hop scan with `hops`): SCAN_TTLS hops per round;
# a path of up to SCAN_TTLS hops takes one round, plus one per size change (a PTB, a black
# hole passed); each round at most WAIT_RTTS round trips (silences) at WORST_RTT. Each scan
# stops itself at SCAN_SECONDS (what it has not reached by then stays unreported).
SCAN_ROUNDS = 3  # the window, one size change, one confirmation of a silent big probe
SCAN_SECONDS = SCAN_ROUNDS * WAIT_RTTS * WORST_RTT


def max_duration(spec):
    """Upper bound, in seconds, of a measurement with this spec (a core.spec.RunSpec).

    Built from the engine's own worst case, not from round counts times `timeout`: the
    primary search (SEARCH_SECONDS: a rate-limited IPv4 dest, RTT up to WORST_RTT; through
    the dest's reflector REFLECTOR_SEARCH_SECONDS), one answer per further flow, one TTL
    scan to locate a black hole, one more with `hops`. The engine stops itself at this
    bound (what is unconfirmed by then is said so). A two-participant run whose reflector
    does not answer probes single-ended within the same bound: with ICMP echo that fits; a
    UDP-only search on a spent budget may end unconfirmed (the result says so)."""
    flows = max(1, int(spec.flows))
    # The dest participant runs the reflector when the spec asks for it (the runner then
    # probes through it; without an answer the engine falls back within the same bound).
    if spec.needs_dest:
        search = HELLO_SECONDS + REFLECTOR_SEARCH_SECONDS
        verify = min(FLOW_SECONDS_REFLECTOR * (flows - 1),
                     VERIFY_ROUNDS * WAIT_RTTS * WORST_RTT) + FLOW_SEND_SECONDS * (flows - 1)
    else:
        search, verify = SEARCH_SECONDS, FLOW_SECONDS * (flows - 1)
    return round(SETUP_SECONDS + search + verify + SCAN_SECONDS * scan_count(spec), 3)


def scan_count(spec):
    """TTL scans a run keeps time for: one to locate a black hole, one more with `hops`.
    The searches stop that much before the bound, so a hole found late is still located."""
    return 2 if spec.hops else 1


def iso_duration(seconds):
    return "PT%sS" % ("%.6f" % max(seconds, 0.0)).rstrip("0").rstrip(".")
