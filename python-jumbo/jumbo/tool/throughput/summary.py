"""The legs summed up: each size's mean and spread, the jumbo gain with its noise, the Mathis
ceilings, the stall check against the standard legs, and the verdict."""

import math

from .proof import mss_capped, settle_capped_mss

# A run is stalled when its receiver got less than this share of the standard runs' mean.
STALL_FRACTION = 0.01
# Mathis et al. (1997): rate <= MSS / RTT * C / sqrt(p), C = sqrt(3/2).
MATHIS_C = math.sqrt(1.5)


def stats(values):
    if not values:
        return {"mean": None, "stdev": None, "min": None, "max": None, "n": 0}
    mean = sum(values) / len(values)
    stdev = None
    if len(values) > 1:
        stdev = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return {"mean": mean, "stdev": stdev, "min": min(values), "max": max(values),
            "n": len(values)}


def gain_and_noise(standard, jumbo):
    """gain = jumbo mean / standard mean; noise = gain x sqrt(cv_j^2/n_j + cv_s^2/n_s).

    The coefficient of variation of each size's repeated runs, divided by the square root
    of their count, is the relative standard error of its mean; the two add in quadrature
    for a ratio. With a single run of a size there is no spread to measure: noise is None."""
    if not standard["n"] or not jumbo["n"] or not standard["mean"]:
        return None, None
    gain = jumbo["mean"] / standard["mean"]
    if standard["stdev"] is None or jumbo["stdev"] is None or not jumbo["mean"]:
        return gain, None
    cv_s = standard["stdev"] / standard["mean"]
    cv_j = jumbo["stdev"] / jumbo["mean"]
    return gain, gain * math.sqrt(cv_s ** 2 / standard["n"] + cv_j ** 2 / jumbo["n"])


def mathis(runs):
    """Mathis ceiling for the runs of one size: MSS / RTT x sqrt(3/2) / sqrt(p).

    MSS: the observed one (else the requested). RTT: mean of the runs' mean RTT. Loss p:
    retransmitted / sent segments pooled over the runs, where sent segments = bytes / MSS.
    With no retransmission the loss is only known to be below 1 / segments: p is then
    floored at 0.5 / segments, so the ceiling is indicative (a lower bound of the model)."""
    runs = [r for r in runs if r["succeeded"] and r["rtt"] and r["bytes"]]
    if not runs:
        return None
    mss_values = [r["observed-mss"] or r["mss"] for r in runs]
    mss = sum(mss_values) / float(len(mss_values))
    rtt = sum(r["rtt"] for r in runs) / len(runs)
    segments = sum(r["bytes"] / float(r["observed-mss"] or r["mss"]) for r in runs)
    retransmits = sum(r["retransmits"] or 0 for r in runs)
    floored = retransmits == 0
    loss = max(retransmits, 0.5) / segments if segments else None
    if not loss:
        return None
    ceiling = mss * 8 / rtt * MATHIS_C / math.sqrt(loss)
    measured = sum(r["throughput"] for r in runs) / len(runs)
    return {"mss": int(round(mss)), "rtt": rtt, "loss": loss, "loss-floored": floored,
            "ceiling": ceiling, "loss-limited": measured >= 0.5 * ceiling}


def _throughputs(runs, direction=None):
    return stats([r["throughput"] for r in runs
                  if r["succeeded"] and direction in (None, r["direction"])])


def _mark_stalls(jumbo_runs, std):
    """A stall only means a black hole when runs of the standard size flowed meanwhile: a
    jumbo run far below them (STALL_FRACTION) stalled."""
    floor = STALL_FRACTION * std["mean"]
    for run in jumbo_runs:
        if run["throughput"] is not None and run["throughput"] < floor and not run["stalled"]:
            run["stalled"] = True
            run["succeeded"] = False
            run["error"] = run["error"] or "stalled: %.0f bit/s against %.0f at 1500" % (
                run["throughput"], std["mean"])


def _capped_note(capped):
    sizes = sorted(set(r["observed-mss"] for r in capped))
    pmtus = sorted(set(r["pmtu"] for r in capped))
    return ("jumbo legs ran at MSS %s while their sockets' path MTU was %s: TCP did not use "
            "jumbo frames. The receiving host advertised a smaller MSS: its route back to the "
            "sender has a smaller path MTU (an asymmetric return path; the pmtu test's reverse "
            "measurement shows it) or a middlebox clamps MSS" % (
                "/".join(str(s) for s in sizes), "/".join(str(p) for p in pmtus)))


def _verdict(info, std, jumbo_runs, gain, noise, notes):
    if info.get("jumbo-mtu") is None:
        return "skipped" if std["n"] else "failed"
    if std["n"] and any(r["stalled"] for r in jumbo_runs):
        stalled = [r["order"] for r in jumbo_runs if r["stalled"]]
        notes.append("jumbo run(s) %s stalled at full MSS while the 1500 runs flowed: "
                     "big packets vanish on this path (PMTUD black hole)" %
                     ", ".join(str(o) for o in stalled))
        return "blackhole"
    capped = [r for r in jumbo_runs if mss_capped(r)]
    if gain is None and std["n"] and capped and len(capped) == len(jumbo_runs):
        notes.append(_capped_note(capped))
        return "mss-capped"
    if gain is None:
        return "failed"
    margin = max(2 * noise, 0.05) if noise is not None else 0.05
    if gain - margin > 1:
        return "jumbo-faster"
    if gain + margin < 1:
        return "jumbo-slower"
    return "no-difference"


def _by_direction(standard_runs, jumbo_runs, directions):
    found = {}
    for direction in directions:
        s = _throughputs(standard_runs, direction)
        j = _throughputs(jumbo_runs, direction)
        g, gn = gain_and_noise(s, j)
        found[direction] = {"standard": s, "jumbo": j, "gain": g, "gain-noise": gn}
    return found


def summarize(runs, info, error=None):
    """The `throughput` result object from the runs and the plan's notes."""
    standard_runs = [r for r in runs if r["size"] == "standard"]
    jumbo_runs = [r for r in runs if r["size"] == "jumbo"]
    std = _throughputs(standard_runs)
    if std["n"]:
        _mark_stalls(jumbo_runs, std)
    standard_mss = [r["observed-mss"] for r in standard_runs if r["succeeded"]]
    for run in jumbo_runs:
        if mss_capped(run):
            settle_capped_mss(run, standard_mss)
    jum = _throughputs(jumbo_runs)
    gain, noise = gain_and_noise(std, jum)
    notes = [n for n in [info.get("note")] if n]
    verdict = _verdict(info, std, jumbo_runs, gain, noise, notes)
    failed = [r for r in runs if not r["succeeded"]]
    if failed and verdict not in ("blackhole", "mss-capped"):
        notes.append("run(s) %s failed: %s" % (", ".join(str(r["order"]) for r in failed),
                                               failed[0]["error"]))
    result = {
        "runs": runs,
        "standard": std,
        "jumbo": jum,
        "gain": gain,
        "gain-noise": noise,
        "mathis": {"standard": mathis(standard_runs), "jumbo": mathis(jumbo_runs)},
        "verdict": verdict,
        "skipped": info.get("skipped"),
        "jumbo-mtu": info.get("jumbo-mtu"),
        "notes": notes,
        "error": error,
    }
    directions = sorted(set(r["direction"] for r in runs))
    if len(directions) > 1:
        result["by-direction"] = _by_direction(standard_runs, jumbo_runs, directions)
    return result
