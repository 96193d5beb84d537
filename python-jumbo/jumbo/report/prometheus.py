"""A small, defensive client for the Prometheus HTTP API (/api/v1/query, /api/v1/query_range).

Every answer is treated as untrusted: its size is bounded, its JSON shape and every value's
type are checked, and anything unexpected is a ReportError naming the server and the query.
Credentials come from files (bearer token, or user:password for basic auth), never from the
command line or the URL, and are only sent over https (or to a loopback address).
"""

import base64
import json
import math
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request

from .errors import ReportError

MAX_ANSWER = 64 * 1024 * 1024       # bytes read from one answer at most
MAX_SERIES = 200000                 # series in one answer at most
MAX_POINTS = 11000                  # points per series in a range answer (Prometheus's own cap)
MAX_LABEL = 1024                    # characters in one label name or value


class PrometheusDown(ReportError):
    def __init__(self, message):
        super().__init__(message, status=3)


def _read_secret(path, what):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(65536).strip()
    except (OSError, UnicodeDecodeError) as err:
        raise ReportError("%s %s: %s" % (what, path, err))
    if not text or "\n" in text:
        raise ReportError("%s %s: expected one line" % (what, path))
    return text


class Prometheus(object):
    """One Prometheus server. `token_file`: a bearer token; `auth_file`: one line user:password."""

    def __init__(self, url, ca_file=None, token_file=None, auth_file=None, verify_ssl=True,
                 timeout=60.0):
        parts = urllib.parse.urlsplit(url or "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ReportError("--prometheus %r: expected http(s)://HOST[:PORT][/path]" % url)
        if parts.username or parts.password:
            raise ReportError("--prometheus: no credentials in the URL (they would show in the "
                              "process list); use --prometheus-token-file or --prometheus-auth-file")
        if parts.query or parts.fragment:
            raise ReportError("--prometheus %r: no query or fragment expected" % url)
        self.url = "%s://%s%s" % (parts.scheme, parts.netloc, parts.path.rstrip("/"))
        self.timeout = float(timeout)
        self.headers = {"Accept": "application/json", "User-Agent": "jumbo-report"}
        if token_file and auth_file:
            raise ReportError("--prometheus-token-file and --prometheus-auth-file: give one")
        if token_file:
            self.headers["Authorization"] = "Bearer " + _read_secret(token_file,
                                                                     "--prometheus-token-file")
        if auth_file:
            pair = _read_secret(auth_file, "--prometheus-auth-file")
            if ":" not in pair:
                raise ReportError("--prometheus-auth-file %s: expected user:password" % auth_file)
            self.headers["Authorization"] = "Basic " + base64.b64encode(
                pair.encode("utf-8")).decode("ascii")
        loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
        if "Authorization" in self.headers and parts.scheme != "https" and not loopback:
            raise ReportError("--prometheus: credentials are only sent over https")
        self.context = None
        if parts.scheme == "https":
            self.context = ssl.create_default_context(cafile=ca_file) if ca_file else \
                ssl.create_default_context()
            if not verify_ssl:
                self.context.check_hostname = False
                self.context.verify_mode = ssl.CERT_NONE
        elif ca_file or not verify_ssl:
            raise ReportError("--prometheus-ca-file and --prometheus-no-verify-ssl need an https:// URL")

    def __repr__(self):
        return "Prometheus(%s)" % self.url

    # -- transport -------------------------------------------------------------------------------

    def _get(self, path, params):
        url = "%s%s?%s" % (self.url, path, urllib.parse.urlencode(params))
        request = urllib.request.Request(url, headers=self.headers)
        what = "Prometheus at %s" % self.url
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.context) as reply:
                body = reply.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as err:
            detail = ""
            try:
                detail = json.loads(err.read(65536).decode("utf-8", "replace")).get("error", "")
            except (ValueError, AttributeError, OSError):
                pass
            if err.code in (401, 403):
                raise ReportError("%s refused the credentials (HTTP %d)" % (what, err.code))
            raise PrometheusDown("%s answered HTTP %d%s" % (what, err.code,
                                                            ": %s" % str(detail)[:300] if detail else ""))
        except (urllib.error.URLError, socket.timeout, ConnectionError, ssl.SSLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise PrometheusDown("%s is unreachable: %s (without --prometheus the report uses the "
                                 "volume matrix and the measuring hosts' local MTU)" % (what, reason))
        if len(body) > MAX_ANSWER:
            raise ReportError("%s: answer larger than %d MiB (narrow the window)"
                              % (what, MAX_ANSWER // 1048576))
        try:
            doc = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise ReportError("%s: the answer is not JSON: %s" % (what, err))
        if not isinstance(doc, dict) or doc.get("status") != "success" or not isinstance(doc.get("data"), dict):
            raise ReportError("%s: unexpected answer (status %r)" % (what, doc.get("status") if
                                                                      isinstance(doc, dict) else None))
        return doc["data"]

    # -- the two queries -------------------------------------------------------------------------

    def query(self, expr, at):
        """Instant vector at unix time `at` -> [(labels dict, value)]."""
        data = self._get("/api/v1/query", {"query": expr, "time": "%.3f" % at})
        return [(labels, _value(point, self)) for labels, point in _results(data, "vector", "value", self)]

    def query_range(self, expr, start, end, step):
        """Range matrix -> [(labels dict, [(time, value)])]."""
        data = self._get("/api/v1/query_range", {"query": expr, "start": "%.3f" % start,
                                                  "end": "%.3f" % end, "step": "%.3f" % step})
        out = []
        for labels, points in _results(data, "matrix", "values", self):
            if not isinstance(points, list) or len(points) > MAX_POINTS:
                raise ReportError("%s: a series has no point list or too many points" % self)
            out.append((labels, [(_time(p, self), _value(p, self)) for p in points]))
        return out


def _results(data, kind, key, server):
    if data.get("resultType") != kind or not isinstance(data.get("result"), list):
        raise ReportError("%s: expected a %s answer, got %r" % (server, kind, data.get("resultType")))
    result = data["result"]
    if len(result) > MAX_SERIES:
        raise ReportError("%s: %d series in one answer (at most %d)" % (server, len(result), MAX_SERIES))
    for item in result:
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            raise ReportError("%s: a series without labels" % server)
        labels = item["metric"]
        for k, v in labels.items():
            if not isinstance(k, str) or not isinstance(v, str) or len(k) > MAX_LABEL or len(v) > MAX_LABEL:
                raise ReportError("%s: a label is not a short string" % server)
        yield labels, item.get(key)


def _time(point, server):
    if not isinstance(point, list) or len(point) != 2 or isinstance(point[0], bool) or \
            not isinstance(point[0], (int, float)):
        raise ReportError("%s: a sample is not [time, \"value\"]" % server)
    return float(point[0])


def _value(point, server):
    _time(point, server)
    if not isinstance(point[1], str) or len(point[1]) > 64:
        raise ReportError("%s: a sample value is not a number string" % server)
    try:
        value = float(point[1])
    except ValueError:
        raise ReportError("%s: a sample value %r is not a number" % (server, point[1][:20]))
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise ReportError("%s: a sample value %r is not a finite number >= 0" % (server, point[1][:20]))
    return value
