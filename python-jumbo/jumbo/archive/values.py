"""Values read from a pScheduler result as the record keeps them: numbers, strings, booleans
and objects only when they are of that type (else None or {}), hosts reduced from spec
endpoints, IP literals and their family."""

import math
import re

_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}\Z")
# What the stores' integer fields hold (SQLite INTEGER, OpenSearch long): signed 64 bits.
# A larger number would be refused by the store on every retry of the record.
_INT_MIN, _INT_MAX = -2 ** 63, 2 ** 63 - 1


def as_int(value):
    if type(value) is int:  # the usual case first (bool is not int here)
        return value if _INT_MIN <= value <= _INT_MAX else None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if _INT_MIN <= value <= _INT_MAX else None
    # Not NaN nor infinity (json reads 1e999 as inf, and int() of it raises OverflowError).
    if isinstance(value, float) and math.isfinite(value):
        number = int(value)
        return number if _INT_MIN <= number <= _INT_MAX else None
    return None


def as_num(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int beyond a float's range (json reads 1e400 digits so)
            return None
        # A NaN or an infinity is no measurement (and no JSON number OpenSearch takes).
        return number if math.isfinite(number) else None
    return None


def as_str(value):
    if type(value) is str or isinstance(value, str):
        return value
    return None


def as_bool(value):
    return value if isinstance(value, bool) else None


def as_obj(value):
    return value if isinstance(value, dict) else {}


def host_of(value):
    """A spec host: URL or host:port reduced to the host, IPv6 brackets removed."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if "://" in text:
        text = text.split("://", 1)[1].split("/", 1)[0]
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    return text


def ip_literal(host):
    if not host:
        return None
    if _IPV4.match(host) or (":" in host and re.match(r"^[0-9A-Fa-f:.%]+\Z", host)):
        return host
    return None


def ip_version_of(ip):
    if not ip:
        return None
    return 6 if ":" in ip else 4


def same_family(ip, version):
    if ip and version in (4, 6) and ip_version_of(ip) != version:
        return None
    return ip
