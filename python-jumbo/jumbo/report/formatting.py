"""The small pieces the model and every rendering of the report share (text, CSV, HTML, and
the telemetry section of each): a share and its percentage, a black hole's evidence across
runs, and long-format metric rows."""

import math


def pct(value):
    return "n/a" if value is None else "%.1f%%" % (100.0 * value)


def share(num, den):
    """num / den as a float, None when there is nothing to divide by."""
    return (num / float(den)) if den else None


def evidence(b):
    """A black-hole entry's evidence across runs (jumbo.archive.evidence) as the numbers its
    sentence shows: (seen, runs, failed share, clean flows, needed flows), or None when the
    entry has none."""
    if b.get("seen") is None:
        return None
    return (b["seen"], b["runs"], pct(b["failed_share"]), b["clean_flows"], b["needed_flows"])


def metric_rows(section, item, source, keys):
    """(section, item, key, source[key]) for each key, in order: the CSV's long-format rows."""
    for key in keys:
        yield (section, item, key, source[key])


def decimal_bytes(value):
    """Bytes in decimal units: 0 B, 12.3 GB, 84.0 TB (n/a for what is no number)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    for unit, size in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return "%.1f %s" % (value / size, unit)
    return "%d B" % value
