"""A small, defensive client for the Prometheus HTTP API (/api/v1/query, /api/v1/query_range).

Every answer is treated as untrusted: its size is bounded, its JSON shape and every value's
type are checked, and anything unexpected is a ReportError naming the server and the query.
Credentials come from files (bearer token, or user:password for basic auth), never from the
command line or the URL, and are only sent over https (or to a loopback address).

Redirects are followed only within the origin given (same scheme, host and port, e.g. a proxy
adding a trailing slash); one to another host, port or scheme (https -> http included) is
refused with the target named: the credentials would go to a server the operator did not
name, and its answers would be used as if from theirs. Give the final URL with --prometheus.

Every read has an overall deadline (`deadline` seconds for all the reads of one client, as
well as `timeout` for each wait on the socket): a server that trickles its answer (a byte
every few seconds keeps a per-read timeout from ever firing) is cut off when the deadline
passes, and the report ends with a clear error instead of hanging (cron runs then overlap).

Values are checked against what is physically plausible: a sample above `bound` (by default
MAX_VALUE, 10^18: an exabyte, a 100 Gb/s link full for two and a half years), or NaN/+Inf
(PromQL's own overflow of such values), is not a measurement. Its series is skipped and
counted (`implausible`: the label sets, one series once across the queries), so one broken
exporter neither fails the report nor turns its sums into inf/NaN.
"""

import base64
import http.client
import json
import math
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from .errors import ReportError
from .prometheus_answer import MAX_ANSWER, answer_series

MAX_POINTS = 11000                  # points per series in a range answer (Prometheus's own cap)
MAX_VALUE = 1e18                    # a plausible sample at most (bytes of one flow or pair)
MAX_TIME = 1e11                     # a plausible sample time at most (year 5138)
DEADLINE = 300.0                    # seconds for all the reads of one client at most


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


def _checked_url(url):
    """The --prometheus URL split, or a ReportError: http(s) with a host, no credentials (they
    would show in the process list), no query or fragment."""
    parts = urllib.parse.urlsplit(url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ReportError("--prometheus %r: expected http(s)://HOST[:PORT][/path]" % url)
    if parts.username or parts.password:
        raise ReportError("--prometheus: no credentials in the URL (they would show in the "
                          "process list); use --prometheus-token-file or --prometheus-auth-file")
    if parts.query or parts.fragment:
        raise ReportError("--prometheus %r: no query or fragment expected" % url)
    return parts


def _authorization(token_file, auth_file):
    """The Authorization header from a bearer token file or a user:password file (one of
    them), or None."""
    if token_file and auth_file:
        raise ReportError("--prometheus-token-file and --prometheus-auth-file: give one")
    if token_file:
        return "Bearer " + _read_secret(token_file, "--prometheus-token-file")
    if auth_file:
        pair = _read_secret(auth_file, "--prometheus-auth-file")
        if ":" not in pair:
            raise ReportError("--prometheus-auth-file %s: expected user:password" % auth_file)
        return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return None


def _tls_context(scheme, ca_file, verify_ssl):
    """The TLS context of an https URL (its CA file, or no verification when asked); the TLS
    options are an error on http."""
    if scheme != "https":
        if ca_file or not verify_ssl:
            raise ReportError("--prometheus-ca-file and --prometheus-no-verify-ssl need an https:// URL")
        return None
    context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
    if not verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


class Prometheus(object):
    """One Prometheus server. `token_file`: a bearer token; `auth_file`: one line user:password."""

    def __init__(self, url, ca_file=None, token_file=None, auth_file=None, verify_ssl=True,
                 timeout=60.0, deadline=DEADLINE):
        parts = _checked_url(url)
        self.url = "%s://%s%s" % (parts.scheme, parts.netloc, parts.path.rstrip("/"))
        self.origin = _origin(self.url)
        self.timeout = float(timeout)
        self.deadline = float(deadline)
        if not (0 < self.timeout and 0 < self.deadline <= 86400):
            raise ReportError("--prometheus: the timeout and deadline must be positive seconds "
                              "(the deadline at most a day)")
        self.ends = None                # monotonic time the deadline passes, from the first read
        self.sockets = []               # the current request's (duplicated) sockets
        self.implausible = set()        # the label sets of the series skipped (no measurement)
        self.headers = {"Accept": "application/json", "User-Agent": "jumbo-report"}
        authorization = _authorization(token_file, auth_file)
        if authorization:
            self.headers["Authorization"] = authorization
        loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
        if authorization and parts.scheme != "https" and not loopback:
            raise ReportError("--prometheus: credentials are only sent over https")
        self.context = _tls_context(parts.scheme, ca_file, verify_ssl)
        self.opener = urllib.request.build_opener(
            _SameOrigin(self), _Connections(self, self.context))

    def __repr__(self):
        return "Prometheus(%s)" % self.url

    # -- transport -------------------------------------------------------------------------------

    def _get(self, path, params):
        url = "%s%s?%s" % (self.url, path, urllib.parse.urlencode(params))
        request = urllib.request.Request(url, headers=self.headers)
        what = "Prometheus at %s" % self.url
        if self.ends is None:
            self.ends = time.monotonic() + self.deadline
        if time.monotonic() >= self.ends:
            raise self._expired()
        self.sockets = []
        watchdog = threading.Timer(max(0.0, self.ends - time.monotonic()), self._cut)
        watchdog.daemon = True
        watchdog.start()
        try:
            body = self._read(request, what)
        except ReportError:
            if time.monotonic() >= self.ends:
                raise self._expired()
            raise
        finally:
            watchdog.cancel()
            for sock in self.sockets:
                sock.close()
        if time.monotonic() >= self.ends:
            raise self._expired()     # what arrived may be cut short: never parsed as an answer
        return body

    def _read(self, request, what):
        try:
            with self.opener.open(request, timeout=self.timeout) as reply:
                return reply.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as err:
            detail = ""
            try:
                detail = json.loads(err.read(65536).decode("utf-8", "replace")).get("error", "")
            except (ValueError, AttributeError, OSError, http.client.HTTPException):
                pass
            if err.code in (401, 403):
                raise ReportError("%s refused the credentials (HTTP %d)" % (what, err.code))
            raise PrometheusDown("%s answered HTTP %d%s" % (what, err.code,
                                                            ": %s" % str(detail)[:300] if detail else ""))
        except (urllib.error.URLError, socket.timeout, ConnectionError, ssl.SSLError, OSError,
                http.client.HTTPException) as err:
            reason = getattr(err, "reason", None) or err
            raise PrometheusDown("%s is unreachable: %s (without --prometheus the report uses the "
                                 "volume matrix and the measuring hosts' local MTU)" % (what, reason))

    def _cut(self):
        """The deadline passed: shut the request's sockets down, so a read that is still
        waiting (or still receiving a trickle) returns at once."""
        for sock in list(self.sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _expired(self):
        return PrometheusDown("Prometheus at %s: no complete answer within the %g s deadline "
                              "(a slow or stalled server; --prometheus-deadline)"
                              % (self.url, self.deadline))

    # -- the two queries -------------------------------------------------------------------------

    def query(self, expr, at, bound=MAX_VALUE):
        """Instant vector at unix time `at` -> [(labels dict, value)], the series whose value
        is no plausible measurement (above `bound`, NaN, +Inf) skipped and counted."""
        return self.vector(self._get("/api/v1/query", {"query": expr, "time": "%.3f" % at}), bound)

    def query_range(self, expr, start, end, step, bound=MAX_VALUE):
        """Range matrix -> [(labels dict, [(time, value)])], a series with any implausible
        point skipped whole and counted."""
        return self.matrix(self._get("/api/v1/query_range", {
            "query": expr, "start": "%.3f" % start, "end": "%.3f" % end, "step": "%.3f" % step}),
            bound)

    # -- the answers (apart from the transport: the fuzzer feeds them directly) ------------------

    def vector(self, body, bound=MAX_VALUE):
        """The body of an instant query's answer -> [(labels dict, value)] (as query)."""
        out = []
        for labels, point in answer_series(body, "vector", "value", self):
            value = _value(point, self)
            if _plausible(value, bound):
                out.append((labels, value))
            else:
                self.implausible.add(frozenset(labels.items()))
        return out

    def matrix(self, body, bound=MAX_VALUE):
        """The body of a range query's answer -> [(labels dict, [(time, value)])] (as
        query_range)."""
        out = []
        times = {}      # the series share their sample times: one float object per time
        for labels, points in answer_series(body, "matrix", "values", self):
            if not isinstance(points, list) or len(points) > MAX_POINTS:
                raise ReportError("%s: a series has no point list or too many points" % self)
            series = []
            for point in points:
                value = _value(point, self)     # checks the time too
                at = float(point[0])
                series.append((times.setdefault(at, at), value))
            if all(_plausible(v, bound) for _t, v in series):
                out.append((labels, series))
            else:
                self.implausible.add(frozenset(labels.items()))
        return out


def _origin(url):
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return (parts.scheme, (parts.hostname or "").lower(), port)


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the origin given; refuses any other (see the module's doc)."""

    def __init__(self, prom):
        self.prom = prom

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        target = urllib.parse.urljoin(req.full_url, newurl)
        if _origin(target) != self.prom.origin:
            raise ReportError("Prometheus at %s redirects (HTTP %d) to %s, another %s: refused "
                              "(the credentials and the answers stay with the server named; "
                              "give the final URL with --prometheus)"
                              % (self.prom.url, code, target[:200],
                                 "scheme" if _origin(target)[0] != self.prom.origin[0] else "host or port"))
        return urllib.request.HTTPRedirectHandler.redirect_request(self, req, fp, code, msg,
                                                                   headers, target)


class _Connections(urllib.request.HTTPSHandler):
    """Plain and TLS connections whose sockets the deadline's watchdog can shut down."""

    handler_order = 400                 # before urllib's own HTTPHandler, which would open http

    def __init__(self, prom, context):
        urllib.request.HTTPSHandler.__init__(self, context=context)
        self.prom = prom

    def _track(self, connection):
        def create(*args, **kwargs):
            sock = socket.create_connection(*args, **kwargs)
            # a duplicate descriptor of the same socket: shutting it down ends reads on the
            # original, even once TLS has wrapped (and taken over) that one
            self.prom.sockets.append(sock.dup())
            return sock
        connection._create_connection = create
        return connection

    def http_open(self, req):
        return self.do_open(lambda *a, **k: self._track(http.client.HTTPConnection(*a, **k)), req)

    def https_open(self, req):
        return self.do_open(lambda *a, **k: self._track(http.client.HTTPSConnection(*a, **k)), req,
                            context=self._context)


def _plausible(value, bound):
    return not math.isnan(value) and value <= bound


def _time(point, server):
    if not isinstance(point, list) or len(point) != 2 or isinstance(point[0], bool) or \
            not isinstance(point[0], (int, float)):
        raise ReportError("%s: a sample is not [time, \"value\"]" % server)
    at = float(point[0])
    if not 0 <= at <= MAX_TIME:             # also NaN and inf (JSON's 1e999)
        raise ReportError("%s: a sample time %r is not a unix time" % (server, at))
    return at


def _value(point, server):
    _time(point, server)
    if not isinstance(point[1], str) or len(point[1]) > 64:
        raise ReportError("%s: a sample value is not a number string" % server)
    try:
        value = float(point[1])
    except ValueError:
        raise ReportError("%s: a sample value %r is not a number" % (server, point[1][:20]))
    if value < 0:                           # -Inf too; NaN and +Inf: _plausible
        raise ReportError("%s: a sample value %r is not a number >= 0" % (server, point[1][:20]))
    return value
