"""Values read and shown leniently, for text and HTML renderings of any result: a field
of the wrong type reads as missing, never raises. Shared by render (the pmtu test), pair
(jumbo-throughput) and jumbocheck (hop RTTs in milliseconds, as pScheduler prints them)."""

import math

from ..core import units


def as_dict(value):
    return value if isinstance(value, dict) else {}


def dicts(value):
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def integer(value):
    """An int (an integral float too), else None (a bool is no number here)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    # int() of a NaN or an infinity raises (json reads NaN, Infinity and 1e999).
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    return None


def number(value):
    """An int or float, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def show(value):
    """Any value as short text ("-" for missing: a NaN or infinite number, which a result's JSON
    can carry but no measurement means, is missing too)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def bits(value):
    value = number(value)
    if value is None:
        return "-"
    for factor, unit in ((1e12, "Tbit/s"), (1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if abs(value) >= factor:
            return "%.2f %s" % (value / factor, unit)
    return "%.0f bit/s" % value


def rtt_ms(value):
    """An ISO 8601 duration (or seconds) as milliseconds."""
    if value is None:
        return "-"
    seconds = number(value)
    if seconds is None:
        seconds = units.duration_seconds_or_none(value)
    if seconds is None:
        return str(value)
    return "%.3f ms" % (seconds * 1000.0)


def percent(value):
    value = number(value)
    return "-" if value is None else "%.1f%%" % value
