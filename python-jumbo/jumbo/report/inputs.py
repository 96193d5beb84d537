"""The user's inputs: the volume matrix CSV, the host->site file, dates."""

import csv
import datetime
import io
import json
import os

from ..core.units import duration_seconds, parse_time
from .errors import ReportError

# A relative window reaches back at most this far (seconds): ten years, well past any archive.
MAX_AGO = 3650 * 86400


def _read(path, what):
    if not os.path.exists(path):
        raise ReportError("%s %s: no such file" % (what, path))
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as err:
        raise ReportError("cannot read %s %s: %s" % (what, path, err))


def read_volumes(path):
    """CSV `source_site,dest_site,bytes` (header optional, '#' comments) -> [(src, dst, bytes)]."""
    text = _read(path, "volume matrix")
    rows = []
    reader = csv.reader(io.StringIO(text))
    for lineno, fields in enumerate(reader, 1):
        fields = [f.strip() for f in fields]
        if not fields or not any(fields) or fields[0].startswith("#"):
            continue
        if lineno == 1 and fields[:2] == ["source_site", "dest_site"]:
            continue
        if len(fields) != 3 or not fields[0] or not fields[1]:
            raise ReportError("volume matrix %s line %d: expected source_site,dest_site,bytes, got %r"
                              % (path, lineno, ",".join(fields)))
        try:
            volume = float(fields[2])
        except ValueError:
            raise ReportError("volume matrix %s line %d: bytes %r is not a number"
                              % (path, lineno, fields[2]))
        if volume < 0 or volume != volume or volume == float("inf"):
            raise ReportError("volume matrix %s line %d: bytes must be a finite number >= 0"
                              % (path, lineno))
        rows.append((fields[0], fields[1], volume))
    if not rows:
        raise ReportError("volume matrix %s holds no rows (expected source_site,dest_site,bytes)" % path)
    return rows


def read_sites(path):
    """Host (or IP) -> site: a JSON object, or lines `host site` / `host,site` ('#' comments)."""
    text = _read(path, "site file")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            mapping = json.loads(stripped)
        except ValueError as err:
            raise ReportError("site file %s: invalid JSON: %s" % (path, err))
        if not isinstance(mapping, dict) or not mapping:
            raise ReportError("site file %s maps no host" % path)
        if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in mapping.items()):
            raise ReportError("site file %s: every value must be a site name (string)" % path)
        return mapping
    mapping = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [p.strip() for p in line.replace(",", " ").split()]
        if len(parts) != 2:
            raise ReportError("site file %s line %d: expected 'host site', got %r" % (path, lineno, line))
        mapping[parts[0]] = parts[1]
    if not mapping:
        raise ReportError("site file %s maps no host" % path)
    return mapping


def parse_date(text, end=False, now=None):
    """YYYY-MM-DD, an ISO time, or an ISO 8601 duration (P7D, PT12H, P2W: that long before
    `now`, the current UTC time) -> ISO UTC string; `end` makes a bare date exclusive next day."""
    if text is None:
        return None
    text = text.strip()
    if text[:1].upper() == "P":
        try:
            seconds = duration_seconds(text)
        except ValueError as err:
            raise ReportError("unreadable duration %r: %s (use e.g. P7D, PT12H, P2W)"
                              % (text, str(err).split(": ", 1)[-1]))
        if not 0 < seconds <= MAX_AGO:
            raise ReportError("duration %r: must be more than 0 and at most %d days"
                              % (text, MAX_AGO // 86400))
        now = now or datetime.datetime.utcnow()
        value = now - datetime.timedelta(seconds=seconds)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        value = datetime.datetime.strptime(text, "%Y-%m-%d")
        if end:
            value += datetime.timedelta(days=1)
    except ValueError:
        try:
            # An ISO time: read as every timestamp of the suite is (jumbo.core.units).
            value = parse_time(text)
        except ValueError:
            raise ReportError("unreadable date %r (use YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ or a "
                              "duration before now such as P7D)" % text)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")
