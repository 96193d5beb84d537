"""What one leg's iperf3 JSON proves: its throughput, RTT and CPU, the MSS the kernel really
sent at, the path MTU its socket learnt, and whether it stalled (see the package's text for
how the MSS is read from the congestion window)."""

import math

from ...core.mtu import MSS_TOLERANCE, receiver_capped


def blank_run(leg):
    """A leg's result before (or without) its iperf3 output."""
    return {"order": leg["order"], "round": leg["round"], "size": leg["size"],
            "direction": leg["direction"], "mtu": leg["mtu"], "mss": leg["mss"],
            "observed-mss": None, "pmtu": None, "throughput": None, "retransmits": None,
            "cpu-sender": None, "cpu-receiver": None, "rtt": None, "max-rtt": None,
            "bytes": None, "stalled": False, "succeeded": False, "error": None}


def failed_run(leg, error):
    run = blank_run(leg)
    run["error"] = error
    return run


def _gcd_all(values):
    result = 0
    for value in values:
        result = math.gcd(result, int(value))
    return result


def observed_mss(cwnds, requested):
    """(mss, note): the kernel's sending MSS from congestion-window samples in bytes."""
    values = [int(v) for v in cwnds if v]
    if not values:
        return None, "no congestion-window samples"
    # The MSS the kernel used lies in [requested - MSS_TOLERANCE, requested] when the leg is
    # right: take the largest size there that divides every sample.
    for size in range(requested, max(0, requested - MSS_TOLERANCE) - 1, -1):
        if size and all(v % size == 0 for v in values):
            return size, None
    gcd = _gcd_all(values)
    if gcd <= requested:
        return gcd, None
    for k in range(2, gcd // max(1, requested - MSS_TOLERANCE) + 2):
        if gcd % k == 0 and gcd // k <= requested:
            return gcd // k, "inferred from %d window sample(s) sharing a factor" % len(values)
    return None, "window samples do not reveal the MSS"


def _sender_view(doc, direction):
    """The sending side's JSON: the client's forward, the server's output in reverse."""
    if direction == "reverse":
        return doc.get("server_output_json") or {}
    return doc


def run_from_json(leg, doc, error, timed_out):
    """The leg's result from the client's JSON document (None when it printed none)."""
    run = blank_run(leg)
    run["error"] = error
    if doc is None:
        run["stalled"] = timed_out
        return run
    _totals(run, leg, doc.get("end") or {})
    sender = _sender_view(doc, leg["direction"])
    _sender_fields(run, leg, sender)
    _stall(run, leg, doc, timed_out)
    if run["error"] is None:
        problem = _size_problem(leg, run)
        if problem:
            run["error"] = problem
    run["succeeded"] = run["error"] is None and run["throughput"] is not None
    return run


def _totals(run, leg, end):
    """Throughput (what the receiver got, summed over streams), retransmits, CPU."""
    received = end.get("sum_received") or {}
    if received.get("bits_per_second") is not None:
        run["throughput"] = float(received["bits_per_second"])
        run["bytes"] = received.get("bytes")
    sent = end.get("sum_sent") or {}
    if sent.get("retransmits") is not None:
        run["retransmits"] = int(sent["retransmits"])
    cpu = end.get("cpu_utilization_percent") or {}
    if leg["direction"] == "forward":
        run["cpu-sender"], run["cpu-receiver"] = cpu.get("host_total"), cpu.get("remote_total")
    else:
        run["cpu-sender"], run["cpu-receiver"] = cpu.get("remote_total"), cpu.get("host_total")


def _stream_values(streams, key):
    return [stream[key] for stream in streams if stream.get(key)]


def _sender_fields(run, leg, sender):
    """RTT, observed MSS and the socket's path MTU, from the sending side's JSON."""
    ends = [stream.get("sender") or {} for stream in
            ((sender.get("end") or {}).get("streams") or [])]
    rtts, max_rtts = _stream_values(ends, "mean_rtt"), _stream_values(ends, "max_rtt")
    # iperf3 reports RTT in microseconds; the result carries seconds.
    run["rtt"] = sum(rtts) / len(rtts) / 1e6 if rtts else None
    run["max-rtt"] = max(max_rtts) / 1e6 if max_rtts else None
    samples = [stream for interval in sender.get("intervals") or []
               for stream in interval.get("streams") or []]
    cwnds = _stream_values(samples, "snd_cwnd") + _stream_values(ends, "max_snd_cwnd")
    pmtus = [int(value) for value in _stream_values(samples, "pmtu")]
    run["observed-mss"], note = observed_mss(cwnds, leg["mss"])
    if note:
        run["mss-note"] = note
    run["pmtu"] = min(pmtus) if pmtus else None


def _stall(run, leg, doc, timed_out):
    """Stall: in the last half of the (not omitted) intervals the flow, or one of its
    parallel streams (each hashed on its own ports: an ECMP member), carried nothing."""
    streams, total = {}, 0
    intervals = [i for i in (doc.get("intervals") or [])
                 if not (i.get("sum") or {}).get("omitted")]
    for interval in intervals[len(intervals) // 2:]:
        total += (interval.get("sum") or {}).get("bytes") or 0
        for stream in interval.get("streams") or []:
            key = stream.get("socket")
            streams[key] = streams.get(key, 0) + (stream.get("bytes") or 0)
    stalled_streams = len([k for k, v in streams.items() if v == 0])
    run["stalled-streams"] = stalled_streams
    if timed_out or run["bytes"] == 0 or (intervals and total == 0):
        run["stalled"] = True
        run["error"] = run["error"] or (
            "stalled: no bytes flowed at MSS %d after the first interval(s)" % leg["mss"])
    elif stalled_streams:
        run["stalled"] = True
        run["error"] = run["error"] or (
            "stalled: %d of %d streams stopped at MSS %d while the others flowed (a flow "
            "hashed onto a path that drops big packets)" % (stalled_streams, len(streams),
                                                             leg["mss"]))


def _size_problem(leg, run):
    seen = run["observed-mss"]
    if seen is not None and not (leg["mss"] - MSS_TOLERANCE <= seen <= leg["mss"]):
        head = "observed MSS %d does not match the leg's MSS %d (allowed %d..%d)" % (
            seen, leg["mss"], leg["mss"] - MSS_TOLERANCE, leg["mss"])
        if receiver_capped(leg["mss"], leg["mtu"], seen, run["pmtu"]):
            return ("%s while the socket's path MTU was %d: the receiver advertised a smaller "
                    "MSS (its route back to the sender has a smaller path MTU) or a middlebox "
                    "clamped it" % (head, run["pmtu"]))
        return ("%s: the flow ran at a smaller size (a smaller MSS advertised by the peer, or "
                "a path MTU it learnt)" % head)
    if run["pmtu"] is not None and run["pmtu"] < leg["mtu"]:
        return "the kernel's path MTU for this flow was %d, below the leg's MTU %d" % (
            run["pmtu"], leg["mtu"])
    return None


def mss_capped(run):
    """The leg moved data, without stalling, at an MSS its receiver (or a middlebox) held
    below its own while its socket's path MTU was the leg's (core.mtu.receiver_capped): TCP
    between the two does not use the size in this direction. A finding, not a tool failure."""
    return (not run["stalled"] and run["throughput"] is not None
            and receiver_capped(run["mss"], run["mtu"], run["observed-mss"], run["pmtu"]))


def settle_capped_mss(run, standard_mss):
    """A capped leg's MSS from its windows is only known as a multiple (2896 when every
    sample held an even count of 1448-byte segments). The receiver caps at its return
    route's MSS, 1500's on most such paths, which the standard legs of the same run measured:
    take that size when it divides what the windows gave."""
    seen = run["observed-mss"]
    for size in sorted(set(m for m in standard_mss if m), reverse=True):
        if size < seen and seen % size == 0:
            run["observed-mss"] = size
            run["mss-note"] = ("window samples are multiples of %d; %d, the standard legs' "
                               "MSS, divides them" % (seen, size))
            run["error"] = _size_problem(run, run)
            return
