"""The document perfSONAR's Logstash pipeline makes of a result, made here: the store writes
this suite's own test types' runs into their pscheduler_<type> streams in that shape (unless
the archive data says "pscheduler-streams": false), so that a run archived by this archiver and
one sent by the stock http archiver through Logstash store the same fields, and perfSONAR's
dashboards read both. Shipped (not test support): the archiver on a node writes it at run time.

What perfSONAR's pipeline (perfsonar/logstash 342244c, pipeline/02-pscheduler_common.conf,
03-normalize_endpoints.conf, 04-iso8601-duration.conf, 99-outputs.conf, ruby/
pscheduler_test_checksum.rb) makes of a result the http archiver posts, for a test type
without a 06-result_* filter (pmtu, and this suite's other own types): the result is
stored verbatim. Reproduced here from reading those files, in our own code.
"""

import hashlib
import json
import re

from .. import record as records


def href_id(text, marker):
    """The id after `marker` ("/runs/", "/tasks/") in a pScheduler href, or None."""
    if isinstance(text, str) and marker in text:
        return text.split(marker, 1)[1].split("/", 1)[0] or None
    return None


# Not jumbo.core.units' parser on purpose: this models Logstash's 04-iso8601-duration filter,
# which converts only whole D/H/M and fractional S and leaves anything else as it was.
_LS_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?\Z")


def logstash_seconds(value):
    """A duration as the pipeline converts it: seconds (float) for P[nD][T[nH][nM][n.nS]]
    (whole days/hours/minutes, fractional seconds); anything else is left as it was."""
    if not isinstance(value, str):
        return value
    match = _LS_DURATION.match(value)
    if not match:
        return value
    days, hours, minutes, seconds = match.groups()
    return (float(seconds or 0) + float(minutes or 0) * 60 + float(hours or 0) * 3600
            + float(days or 0) * 86400)


def _canonical_number(number):
    """A number in the pipeline's canonical form (ES6-style shortest text of a double
    computed from 16 significant digits): 10.0 -> "10", 0.5 -> "0.5", 1e21 -> "1e+21"."""
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError("NaN or infinity has no canonical JSON form")
    if number == 0:
        return "0"
    sign = ""
    if number < 0:
        number, sign = -number, "-"
    mantissa, exponent = ("%.15E" % number).split("E")
    exponent = int(exponent)
    whole, fraction = mantissa.split(".")
    fraction = fraction.rstrip("0")
    suffix = None
    if 0 < exponent < 21:
        # shift the point right, padding with zeros
        digits = fraction + "0" * max(0, exponent - len(fraction))
        whole, fraction = whole + digits[:exponent], digits[exponent:]
    elif -7 < exponent < 0:
        whole, fraction = "0", "0" * (-exponent - 1) + whole + fraction
    elif exponent != 0:
        suffix = ("+%d" % exponent) if exponent > 0 else str(exponent)
    text = sign + whole + ("." + fraction if fraction else "")
    return text + ("e" + suffix if suffix else "")


def canonical_json(value):
    """The pipeline's canonical JSON: keys sorted by UTF-16 code units, no spaces,
    strings as Ruby's JSON writes them (UTF-8, not \\u-escaped), canonical numbers."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return _canonical_number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        return "{" + ",".join(canonical_json(str(k)) + ":" + canonical_json(value[k])
                              for k in keys) + "}"
    return json.dumps(value, ensure_ascii=False)


def test_checksum(test, tool, observer_ip=None):
    """pscheduler.test_checksum as the pipeline computes it: SHA-256 (hex) of the canonical
    JSON of {test as received, observer_ip, tool}. The pipeline computes it in
    02-pscheduler_common.conf, before 03 sets meta.observer.ip, so observer_ip is null
    there; it is kept as an argument only to say so."""
    canonical = canonical_json({"test": test, "observer_ip": observer_ip, "tool": tool})
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


test_checksum.__test__ = False  # not a pytest test


def envelope_hrefs(item):
    """(run href, task href) the archiver daemon gave around a result, if any."""
    if isinstance(item, dict) and isinstance(item.get("result"), dict):
        return item.get("run-href"), item.get("task-href")
    return None, None


def _endpoint(value):
    """A spec endpoint reduced to its host (URL, host:port, [v6]) as the pipeline does."""
    host = records.host_of(value)
    return host or None


def logstash_document(inner, hrefs=(None, None)):
    """The document perfSONAR's pipeline stores for the result object `inner` (what the
    http archiver posts), except what only Logstash can know: `@timestamp` here is the
    run's start (Logstash: ingest time), there is no `host` (the proxy's address), and
    `meta` has no GeoIP/AS and no DNS look-ups (IP literals only; hostnames as given)."""
    doc = {}
    for key, value in inner.items():
        if key not in ("schedule", "run", "task", "tool", "participants"):
            doc[key] = value
    run = inner.get("run") if isinstance(inner.get("run"), dict) else {}
    task = inner.get("task") if isinstance(inner.get("task"), dict) else {}
    tool = inner.get("tool") if isinstance(inner.get("tool"), dict) else {}
    ps = {}

    def move(value, name):
        if value is not None:
            ps[name] = value

    run_href, task_href = hrefs
    move(run.get("added"), "added")
    move(run.get("start-time"), "start_time")
    move(run.get("end-time"), "end_time")
    move(inner.get("participants"), "participants")
    move(tool.get("name"), "tool")
    detail = task.get("detail") if isinstance(task.get("detail"), dict) else {}
    move(detail.get("duration"), "duration")
    move(task.get("href") or task_href, "task_href")
    move(run.get("href") or run_href, "run_href")
    if isinstance(task.get("schedule"), dict):
        doc["schedule"] = dict(task["schedule"])
    task_id = href_id(ps.get("task_href"), "/tasks/")
    run_id = href_id(ps.get("run_href"), "/runs/")
    if task_id:
        ps["task_id"] = task_id
    if run_id:
        ps["run_id"] = run_id
    try:
        ps["test_checksum"] = test_checksum(inner.get("test"), ps.get("tool"))
    except (ValueError, OverflowError):
        pass  # NaN/infinite numbers: the pipeline's ruby filter fails too, leaving none
    if "duration" in ps:
        ps["duration"] = logstash_seconds(ps["duration"])
    if "schedule" in doc:
        for key in ("slip", "repeat"):
            if key in doc["schedule"]:
                doc["schedule"][key] = logstash_seconds(doc["schedule"][key])
    doc["pscheduler"] = ps
    doc["meta"] = _meta(inner, ps)
    doc["@version"] = "1"
    start = ps.get("start_time") or (inner.get("schedule") or {}).get("start")
    doc["@timestamp"] = records.iso_utc(start)
    return doc


def _meta(inner, ps):
    test = inner.get("test") if isinstance(inner.get("test"), dict) else {}
    spec = test.get("spec") if isinstance(test.get("spec"), dict) else {}
    observer = _endpoint(ps.get("task_href"))
    source, dest = _endpoint(spec.get("source")), _endpoint(spec.get("dest"))
    if dest and not source:
        source = observer
    meta = {}
    if observer:
        meta["observer"] = _side(observer)
    if source:
        meta["source"] = _side(source)
    if dest:
        meta["destination"] = _side(dest)
    version = spec.get("ip-version")
    if source and dest:
        ips = [records.ip_literal(h) for h in (source, dest)]
        if version in (4, 6):
            meta["ip_version"] = version
        elif all(ips):
            meta["ip_version"] = 6 if ":" in ips[1] else 4
    return meta


def _side(host):
    ip = records.ip_literal(host)
    side = {"hostname": host}
    if ip:
        side["ip"] = ip
    return side
