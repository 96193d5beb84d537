"""Units: the one home of ISO 8601 durations and timestamps and of SI numbers.

Every module that reads or writes a duration, a timestamp or an SI-suffixed number calls
these functions, so that "P1W" is 604800 seconds everywhere and a timestamp is accepted
with the same optional parts everywhere.

    DURATION_PATTERN        JSON-schema pattern: any ISO 8601 duration pScheduler writes
    FIXED_DURATION_PATTERN  the same without years and months (their length is not fixed)
    duration_seconds(text)          -> float seconds (weeks and smaller); ValueError otherwise
    duration_seconds_or_none(text)  -> float seconds or None
    seconds_to_duration(number)     -> "PT10S", "PT0.5S"
    parse_time(text)                -> aware UTC datetime; ValueError if unreadable
    unix_time(text)                 -> float seconds since the epoch
    iso_utc(value)                  -> canonical "YYYY-MM-DDTHH:MM:SS[.f]Z"
    epoch_ms(value)                 -> integer milliseconds since the epoch
    parse_si(text)                  -> int from "5G", "100M", "1.5k", "42"
"""

import datetime
import re

_NUM = r"\d+(?:\.\d+)?"
# Years and months: allowed by the syntax (pScheduler writes them), refused by the parser.
_YEARS_MONTHS = r"(?:(?P<Y>%s)Y)?(?:(?P<MO>%s)M)?" % (_NUM, _NUM)
_WEEKS_TO_SECONDS = (r"(?:(?P<W>%s)W)?(?:(?P<D>%s)D)?"
                     r"(?:T(?=\d)(?:(?P<H>%s)H)?(?:(?P<MI>%s)M)?(?:(?P<S>%s)S)?)?\Z"
                     % (_NUM, _NUM, _NUM, _NUM, _NUM))
_DURATION_RE = re.compile(r"^P(?!$)" + _YEARS_MONTHS + _WEEKS_TO_SECONDS)

# The same two languages as JSON-schema patterns (no named groups: draft-7 regexes are ECMA 262).
# ECMA 262 has no \Z: its `$` is the end of the text, which Python's `$(?!\n)` also is.
def _schema_pattern(pattern):
    return re.sub(r"\?P<\w+>", "", pattern).replace(r"\Z", r"$(?!\n)")


DURATION_PATTERN = _schema_pattern(_DURATION_RE.pattern)
FIXED_DURATION_PATTERN = _schema_pattern(r"^P(?!$)" + _WEEKS_TO_SECONDS)

_SECONDS_PER = {"W": 604800.0, "D": 86400.0, "H": 3600.0, "MI": 60.0, "S": 1.0}


def duration_seconds(text):
    """Seconds in an ISO 8601 duration ("PT10S" -> 10.0, "P1W" -> 604800.0). Years and
    months are refused (their length is not fixed). Raises ValueError on anything else."""
    if not isinstance(text, str):
        raise ValueError("%r is not an ISO 8601 duration" % (text,))
    match = _DURATION_RE.match(text.strip().upper())
    if not match:
        raise ValueError("%r is not an ISO 8601 duration (e.g. PT10S)" % (text,))
    parts = match.groupdict()
    if parts["Y"] is not None or parts["MO"] is not None:
        raise ValueError("%r: years and months have no fixed length; use weeks or less" % (text,))
    return sum(float(parts[k]) * factor for k, factor in _SECONDS_PER.items()
               if parts[k] is not None)


def duration_seconds_or_none(text):
    try:
        return duration_seconds(text)
    except ValueError:
        return None


def seconds_to_duration(seconds):
    """ISO 8601 duration for a number of seconds: 10 -> "PT10S", 0.5 -> "PT0.5S"."""
    seconds = float(seconds)
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    if seconds == int(seconds):
        return "PT%dS" % int(seconds)
    return "PT%sS" % ("%.6f" % seconds).rstrip("0").rstrip(".")


# Date, "T" or a space, hours and minutes; seconds, fraction and zone optional (no zone = UTC).
_TIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?"
                      r"\s*(Z|[+-]\d{2}:?\d{2})?\Z")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def parse_time(text):
    """An ISO 8601 timestamp (offset, 'Z' or none = UTC) or a datetime (naive = UTC) as an
    aware UTC datetime. Raises ValueError if unreadable."""
    if isinstance(text, datetime.datetime):
        if text.tzinfo is None:
            return text.replace(tzinfo=datetime.timezone.utc)
        return text.astimezone(datetime.timezone.utc)
    match = _TIME_RE.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ValueError("unreadable time %r (ISO 8601 expected)" % (text,))
    y, mo, d, h, mi, s, frac, tz = match.groups()
    micro = min(int(round(float(frac) * 1e6)), 999999) if frac else 0
    try:
        value = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), micro)
    except ValueError:
        raise ValueError("unreadable time %r (no such date or time)" % (text,))
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        value = value - sign * datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return value.replace(tzinfo=datetime.timezone.utc)


def unix_time(text):
    """Seconds since the epoch of an ISO 8601 timestamp (float, fraction kept)."""
    return (parse_time(text) - _EPOCH).total_seconds()


# Already UTC at second precision (what pScheduler writes): only the date needs checking.
_UTC_SECONDS = re.compile(r"^(\d{4}-\d{2}-\d{2})T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:Z|\+00:?00)?\Z")
_VALID_DAYS = {}


def _valid_day(text):
    valid = _VALID_DAYS.get(text)
    if valid is None:
        try:
            datetime.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
            valid = True
        except ValueError:
            valid = False
        if len(_VALID_DAYS) > 4096:
            _VALID_DAYS.clear()
        _VALID_DAYS[text] = valid
    return valid


def iso_utc(value):
    """Canonical text of a UTC instant: second precision unless there is a fraction."""
    if isinstance(value, str):
        match = _UTC_SECONDS.match(value)
        if match and _valid_day(match.group(1)):
            return value[:19] + "Z"
    value = parse_time(value)
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0") + "Z"
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_ms(value):
    return int((parse_time(value) - _EPOCH).total_seconds() * 1000)


_SI = {"": 1, "k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9, "t": 10 ** 12, "p": 10 ** 15}


def parse_si(text):
    """An integer from an SI-suffixed number: "5G" -> 5000000000, "1.5k" -> 1500."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtTpP]?)\s*\Z", str(text))
    if not match:
        raise ValueError("%r is not a number (SI suffixes k, M, G, T, P are allowed)" % (text,))
    value = float(match.group(1)) * _SI[match.group(2).lower()]
    if value != int(value):
        raise ValueError("%r is not a whole number" % (text,))
    return int(value)
