"""The HTTP client of an OpenSearch archive: URL, credentials, TLS, timeouts and retries,
the names under the URL's prefix, and the bulk request. Only the standard library
(http.client, ssl) is used.

URL: http(s)://[user:pass@]HOST[:PORT][/base-path][?prefix=NAME]
  * port defaults to 9200; a base path (e.g. https://archive/opensearch behind the
    perfSONAR Apache proxy) is prepended to every request;
  * `prefix` is prepended to every index, data stream, template and alias name
    (tests use it to stay apart; production leaves it empty).
Credentials: basic auth from the URL or `auth=(user, password)`, or `api_key`
("ApiKey <value>" header), only over https (or to a loopback address: the secret never
leaves the host). TLS verification is on unless verify_ssl=False; `ca_file` adds a CA
bundle.

Bounds: every request ends within its timeout (default 30 s), the whole request, not each
read, so an answer trickled byte by byte cannot hold it; `deadline` (a time.monotonic()
value, set by the archiver for one record's writes) ends it sooner. An answer is read in
chunks up to `max_answer_bytes` (the archiver's writer: WRITER_MAX_ANSWER): a task author
chooses the `_url`, and what it answers must not take the node's memory.

Transport outcomes: connection errors, timeouts and TLS errors other than verification are
transient; a TLS verification failure, an answer over the byte cap and an answer of a shape
no OpenSearch gives (MisshapenAnswer) are permanent; a pooled connection the server closed
is retried once.
"""

import base64
import http.client
import json
import socket
import ssl
import time
from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import PermanentError, TransientError
from ..urls import plain_http_login_problem
from .layout import CHECK_COMMAND, OWNED_TEST_TYPES, WRITER_ROLE, compact_json, stream_name

DEFAULT_TIMEOUT = 30.0
# The largest answer read. Reads (the report's scroll pages of 10,000 packed hits) stay in
# a few MB; the writer's answers (one _bulk item per document, set-up checks) well under 1 MB
# for a batch of 1,000 records. json.loads of a hostile answer can take ~25 times its size.
MAX_ANSWER_BYTES = 64 << 20
WRITER_MAX_ANSWER = 8 << 20
READ_CHUNK = 1 << 16
REASON_MAX = 300


class SetupError(TransientError):
    """The archive is not set up for this store (missing/stale template, stream or index,
    or privileges refused). Transient: the run waits (retry policy) until an admin has run
    SETUP_COMMAND; the message says what is wrong and names the command."""


class DeadlineExceeded(TransientError):
    """The record's deadline passed before OpenSearch answered: ask pScheduler to retry."""


class MisshapenAnswer(PermanentError):
    """An answer that is not what OpenSearch gives to the request (wrong shape, too large):
    retrying the same URL gets the same answer."""


def _tls_context(verify_ssl, ca_file):
    if not verify_ssl:
        # the data asked for verify-ssl false
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
        raise PermanentError("ca-file %s: %s" % (ca_file, err))


def _auth_header(auth, api_key):
    if api_key:
        return "ApiKey " + api_key
    if auth:
        return "Basic " + base64.b64encode(("%s:%s" % auth).encode("utf-8")).decode("ascii")
    return None


class OpenSearchClient(object):
    """One keep-alive connection to one OpenSearch (not shared between threads)."""

    def __init__(self, scheme, host, port, base_path="", auth=None, api_key=None,
                 verify_ssl=True, ca_file=None, timeout=DEFAULT_TIMEOUT, prefix="",
                 max_answer_bytes=MAX_ANSWER_BYTES, **_ignored):
        """`_ignored`: options of the archive data that concern the store only."""
        problem = plain_http_login_problem(scheme, host, bool(auth or api_key))
        if problem:
            raise PermanentError(problem)
        self.scheme, self.host, self.port = scheme, host, port
        self.max_answer_bytes = max_answer_bytes
        self.deadline = None
        self.base_path = base_path.rstrip("/")
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.prefix = prefix or ""
        self.url = "%s://%s:%s%s" % (scheme, host, port, self.base_path)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        authorization = _auth_header(auth, api_key)
        if authorization:
            self.headers["Authorization"] = authorization
        self.context = _tls_context(verify_ssl, ca_file) if scheme == "https" else None
        self._conn = None

    @classmethod
    def from_url(cls, url, auth=None, api_key=None, verify_ssl=True, ca_file=None,
                 timeout=None, prefix=None, **options):
        """The client (or store: `options` go to the class) of an OpenSearch URL."""
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if parts.username is not None and not auth and not api_key:
            auth = (unquote(parts.username), unquote(parts.password or ""))
        port = parts.port
        if port is None:
            # Bare host: OpenSearch's own port; behind a proxy path: the scheme's port.
            if parts.path.strip("/"):
                port = 443 if parts.scheme == "https" else 80
            else:
                port = 9200
        if prefix is None:
            prefix = (query.get("prefix") or [""])[0]
        return cls(parts.scheme, parts.hostname, port, parts.path, auth=auth, api_key=api_key,
                   verify_ssl=verify_ssl, ca_file=ca_file, timeout=timeout, prefix=prefix,
                   **options)

    # -- HTTP -------------------------------------------------------------------------------

    def _connect(self, timeout):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self.context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _left(self, end):
        """Seconds left before `end` or the record's deadline, whichever is first."""
        now = time.monotonic()
        left = end - now
        if self.deadline is not None and self.deadline - now < left:
            left = self.deadline - now
            if left <= 0:
                raise DeadlineExceeded("OpenSearch at %s did not answer within the record's "
                                       "deadline (pScheduler waits 2 minutes for a reply)"
                                       % self.url)
        if left <= 0:
            raise socket.timeout("request timeout")
        return left

    def _read(self, response, sock, end):
        """The answer's body, read in chunks up to max_answer_bytes, within `end`."""
        declared = response.getheader("content-length", "")
        if declared.isdigit() and int(declared) > self.max_answer_bytes:
            self.close()
            raise self._too_large()
        chunks, size = [], 0
        while True:
            if sock is not None:
                sock.settimeout(self._left(end))
            # read1: one receive at a time, each within what is left of the request's time
            # (read() would wait for the whole chunk, however slowly it comes).
            chunk = response.read1(READ_CHUNK)
            if not chunk:
                if response.length:  # closed before the length it announced
                    raise http.client.IncompleteRead(b"".join(chunks), response.length)
                response.read()  # marks the answer whole: the connection can be used again
                return b"".join(chunks)
            size += len(chunk)
            if size > self.max_answer_bytes:
                self.close()
                raise self._too_large()
            chunks.append(chunk)

    def _too_large(self):
        return MisshapenAnswer("the answer of %s is over %d MiB, more than OpenSearch gives to "
                               "this request: is the _url an OpenSearch?"
                               % (self.url, self.max_answer_bytes >> 20))

    def close(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - best-effort close of a dead connection
                pass
            self._conn = None

    def request(self, method, path, body=None, ndjson=False):
        """(status, parsed JSON or None). Raises TransientError/PermanentError on transport trouble."""
        body, headers = self._encoded(body, ndjson)
        url = self.base_path + path
        end = time.monotonic() + self.timeout
        for attempt in (1, 2):
            fresh = self._conn is None
            try:
                status, data = self._exchange(method, url, body, headers, end, fresh)
                break
            except ssl.SSLError as err:
                self.close()
                raise self._tls_error(err)
            except ssl.CertificateError as err:
                self.close()
                raise PermanentError("TLS certificate of %s does not match: %s" % (self.url, err))
            except DeadlineExceeded:
                self.close()
                raise
            except socket.timeout:
                self.close()
                raise self._timeout_error()
            except (OSError, http.client.HTTPException) as err:
                self.close()
                # A pooled keep-alive connection may have been closed by the server: retry once.
                if attempt == 1 and not fresh and not isinstance(err, ConnectionRefusedError):
                    continue
                raise TransientError("cannot reach OpenSearch at %s: %s" % (self.url, err))
        return status, _parsed(data)

    def _encoded(self, body, ndjson):
        """The body as bytes (a dict or list as compact JSON) and the request's headers."""
        if isinstance(body, (dict, list)):
            body = compact_json(body)
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = dict(self.headers)
        if ndjson:
            headers["Content-Type"] = "application/x-ndjson"
        return body, headers

    def _exchange(self, method, url, body, headers, end, fresh):
        """One request and its answer on the pooled connection (a new one when `fresh`), every
        socket operation bounded by what is left until `end`: (status, body bytes)."""
        left = self._left(end)
        if fresh:
            self._conn = self._connect(left)
        elif self._conn.sock is not None:
            self._conn.sock.settimeout(left)
        self._conn.request(method, url, body=body, headers=headers)
        sock = self._conn.sock
        if sock is not None:
            sock.settimeout(self._left(end))
        response = self._conn.getresponse()
        data = self._read(response, sock, end)
        if response.getheader("connection", "").lower() == "close":
            self.close()
        return response.status, data

    def _tls_error(self, err):
        """A failed certificate check is permanent (a retry cannot fix it); other TLS trouble
        may pass."""
        if "CERTIFICATE_VERIFY_FAILED" in str(err) or "certificate" in str(err).lower():
            return PermanentError("TLS certificate verification failed for %s: %s"
                                  % (self.url, getattr(err, "reason", None) or err))
        return TransientError("TLS error talking to %s: %s" % (self.url, err))

    def _timeout_error(self):
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return DeadlineExceeded("OpenSearch at %s did not answer within the "
                                    "record's deadline (pScheduler waits 2 minutes "
                                    "for a reply)" % self.url)
        return TransientError("timeout after %gs talking to %s" % (self.timeout, self.url))

    def check(self, status, parsed, what):
        """Nothing for a 2xx answer, else the PermanentError/TransientError it is."""
        if 200 <= status < 300:
            return
        reason = error_reason(parsed) or ("HTTP %d" % status)
        message = "%s: HTTP %d from %s: %s" % (what, status, self.url, reason)
        if status in (401, 403):
            raise PermanentError("%s (check the credentials)" % message)
        if status == 429 or status >= 500:
            raise TransientError(message)
        raise PermanentError(message)

    # -- names ------------------------------------------------------------------------------

    def name(self, base):
        return self.prefix + base

    def stream(self, test_type):
        return stream_name(self.prefix, test_type)

    def owned_streams(self):
        return [self.stream(t) for t in OWNED_TEST_TYPES]

    def bulk(self, lines, expected):
        """The answers of the bulk items of `lines` (NDJSON, `expected` items)."""
        body = "\n".join(lines) + "\n"
        status, parsed = self.request("POST", "/_bulk", body, ndjson=True)
        if status == 403:
            # the security plugin checks _bulk at cluster level first
            raise SetupError("OpenSearch at %s refused _bulk (HTTP 403: %s); the archive user "
                             "needs the privileges of `%s` (check with: %s)"
                             % (self.url, error_reason(parsed), WRITER_ROLE, CHECK_COMMAND))
        if status in (404, 408, 413):
            # From a proxy in front of OpenSearch (which answers _bulk itself otherwise): a
            # timeout, a body over its limit (split by write) or a path it does not route.
            error = BodyTooLarge if status == 413 else TransientError
            raise error("bulk write: HTTP %d from %s: %s%s" % (
                status, self.url, error_reason(parsed) or "no reason given", _PROXY_HINTS[status]))
        self.check(status, parsed, "bulk write")
        return bulk_items(parsed, expected, self.url)


def bulk_items(parsed, expected, url):
    """The `expected` item answers of a 2xx _bulk answer, each a dict with an integer
    `status`; MisshapenAnswer for anything else."""
    items = parsed.get("items") if isinstance(parsed, dict) else None
    if not isinstance(items, list) or len(items) != expected:
        raise MisshapenAnswer("bulk write: %s answered without the %d item results of a _bulk "
                              "answer: is the _url an OpenSearch?" % (url, expected))
    answers = []
    for item in items:
        answer = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else None
        if not isinstance(answer, dict) or type(answer.get("status")) is not int:
            raise MisshapenAnswer("bulk write: %s answered an item without an integer status: "
                                  "is the _url an OpenSearch?" % url)
        answers.append(answer)
    return answers


class BodyTooLarge(TransientError):
    """HTTP 413 to a bulk request: fewer records per request may pass."""


_PROXY_HINTS = {
    404: " (no _bulk at this URL: is a proxy's path in the _url right? retried)",
    408: " (request timeout, retried)",
    413: " (over a proxy's body size limit even for one record: raise that limit; retried)",
}


def error_reason(parsed):
    """The error of an OpenSearch answer as "type: reason", or None."""
    if not isinstance(parsed, dict):
        return None
    error = parsed.get("error")
    if isinstance(error, dict):
        text = "%s: %s" % (error.get("type"), error.get("reason"))
    elif isinstance(error, str):
        text = error
    else:
        return None
    # The server's words, in a message pScheduler keeps: bounded, printable.
    text = "".join(c if c.isprintable() else "?" for c in text[:REASON_MAX + 1])
    return text if len(text) <= REASON_MAX else text[:REASON_MAX] + "..."


def _parsed(data):
    """An answer's body as JSON, or None (empty or not JSON: the caller judges the status)."""
    if not data:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        return None
