"""The WLCG targets with their dates, the distance to each, and whether the trend gets there.

The targets are shares of traffic (50 % on jumbo frames by DC26, 99 % by DC28:
../shared/reference/jumbo-context.md). Each is measured in the count it is defined on when the
report has it: bytes (telemetry, the fireflies' bytes with a known MSS, or the volume
matrix), the distance in bytes to carry on
jumbo frames (per week when the bytes were counted over a known period: telemetry). Without
traffic the only count is paths: the distance is the paths to make capable both ways, and the
entry says it is the path count standing in for traffic.

Dates. No published date of either challenge was found (the reference material says so,
perfsonar-archive-and-mesh.md section 5; public pages searched 2026-11-26 name DC24 only).
A challenge is named for its year, so the default deadline is that year's last day, and the
entry says so (`date_source`); the coordinator sets a real date with
`--target-date DC26=YYYY-MM-DD` (parse_dates).

On track: a least-squares line through the trend's buckets (the used share per bucket with
telemetry, else the capable share of the bucket's results, a different count: the entry names
it), carried to the deadline. Fewer than three dated buckets decide nothing: on_track is None
(never a success by default).
"""

import collections
import datetime
import math
import re

from .errors import ReportError

DATES = collections.OrderedDict([("DC26", "2026-12-31"), ("DC28", "2028-12-31")])
DATE_SOURCE = ("default: the last day of the challenge's year (no published date found; "
               "set one with --target-date)")
_DATE_ARG = re.compile(r"^(DC\d\d)=(\d{4}-\d\d-\d\d)$")
MIN_BUCKETS = 3


def parse_dates(values):
    """['DC26=2027-02-01', ...] -> {name: date text}; ReportError naming the bad one."""
    out = {}
    for text in values or ():
        m = _DATE_ARG.match(text.strip())
        if not m or m.group(1) not in DATES:
            raise ReportError("--target-date %r: expected NAME=YYYY-MM-DD with NAME one of %s"
                              % (text[:80], ", ".join(DATES)))
        try:
            datetime.datetime.strptime(m.group(2), "%Y-%m-%d")
        except ValueError:
            raise ReportError("--target-date %r: no such date" % text[:80])
        out[m.group(1)] = m.group(2)
    return out


def _day(text):
    try:
        return datetime.datetime.strptime(str(text)[:10], "%Y-%m-%d").date()
    except ValueError:
        return None


def slope_per_day(points):
    """Least-squares slope (share per day) through [(date, share)], None with < MIN_BUCKETS."""
    pts = [(d.toordinal(), v) for d, v in points if d is not None and v is not None]
    if len(pts) < MIN_BUCKETS:
        return None
    mx = sum(x for x, _ in pts) / float(len(pts))
    my = sum(y for _, y in pts) / float(len(pts))
    den = sum((x - mx) ** 2 for x, _ in pts)
    if not den:
        return None
    return sum((x - mx) * (y - my) for x, y in pts) / den


def _period_days(start, end):
    start, end = _seconds(start), _seconds(end)
    return (end - start) / 86400.0 if start is not None and end is not None and end > start \
        else None


def _traffic(report):
    """(bytes, jumbo bytes, period in days or None, source) of the report's traffic, or None:
    the bytes `used` was counted on (the fireflies' are those with a known MSS, as their
    used share is; the bytes with none are stated in the fireflies section)."""
    ff = report.get("fireflies") or {}
    if report.get("used") is not None and report.get("used_source") == "fireflies" \
            and (ff.get("jumbo_bytes") or 0) + (ff.get("standard_bytes") or 0) > 0:
        return (ff["jumbo_bytes"] + ff["standard_bytes"], ff["jumbo_bytes"],
                _period_days(ff.get("from"), ff.get("to")), "fireflies, bytes with a known MSS")
    tel = report.get("telemetry") or {}
    if report.get("used") is not None and tel.get("bytes"):
        return (tel["bytes"], tel["jumbo_bytes"], _period_days(tel.get("from"), tel.get("to")),
                report.get("used_source") or "telemetry")
    t = report.get("traffic") or {}
    if report.get("used") is not None and t.get("measured_bytes"):
        return t["measured_bytes"], t["capable_bytes"], None, "volume matrix"
    return None


def _seconds(text):
    try:
        return datetime.datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ").timestamp()
    except ValueError:
        return None


def _distance(report, goal):
    """(counted_on, current, distance dict, sentence)."""
    traffic = _traffic(report)
    if traffic is not None:
        total, jumbo, days, source = traffic
        more = max(0.0, goal * total - jumbo)
        per_week = more * 7.0 / days if days else None
        words = ("%.3g TB/week more on jumbo" % (per_week / 1e12) if per_week is not None else
                 "%.3g TB more on jumbo (of the %s's bytes)" % (more / 1e12, source))
        return ("traffic (%s)" % source, report["used"],
                {"bytes": more, "bytes_per_week": per_week, "paths": None}, words)
    n, capable = report["paths_measured"], report["capable_paths"]
    more = max(0, int(math.ceil(goal * n - 1e-9)) - capable)
    return ("paths both ways (no traffic given: paths stand in for traffic)", report["capable"],
            {"bytes": None, "bytes_per_week": None, "paths": more},
            "%d more paths both ways" % more)


def _trend(report, by_traffic):
    buckets = report.get("trend", {}).get("buckets", ())
    key = "used_share" if by_traffic and any(b.get("used_share") is not None for b in buckets) \
        else "jumbo_results_share"
    basis = ("used share of bytes per %s" if key == "used_share" else
             "jumbo results share per %s (results, not paths)") % report.get("trend", {}).get(
                 "interval", "day")
    return slope_per_day([(_day(b["bucket"]), b.get(key)) for b in buckets]), basis


def add_targets(report, dates=None):
    """report["targets_due"]: per target its date, distance, trend and whether it is on track."""
    today = _day(report.get("generated")) or datetime.date.today()
    given = dates or {}
    dates = dict(DATES, **given)
    out = []
    for name, goal in report["targets"].items():
        due = _day(dates.get(name))
        counted_on, current, distance, words = _distance(report, goal)
        slope, basis = _trend(report, counted_on.startswith("traffic"))
        days_left = (due - today).days if due else None
        projected = None
        if slope is not None and current is not None and days_left is not None:
            projected = min(1.0, max(0.0, current + slope * max(days_left, 0)))
        met = current is not None and current >= goal
        out.append(collections.OrderedDict([
            ("target", name), ("goal", goal), ("date", dates.get(name)),
            ("date_source", "--target-date" if name in given else DATE_SOURCE),
            ("days_left", days_left), ("counted_on", counted_on),
            ("current", current), ("met", met), ("distance", distance), ("distance_text", words),
            ("trend_per_week", slope * 7 if slope is not None else None), ("trend_basis", basis),
            ("projected", projected),
            ("on_track", True if met else (None if projected is None else projected >= goal))]))
    report["targets_due"] = out
