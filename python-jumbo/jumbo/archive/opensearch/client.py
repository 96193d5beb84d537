"""The HTTP client of an OpenSearch archive: URL, credentials, TLS, timeouts and retries,
the names under the URL's prefix, and the bulk request. Only the standard library
(http.client, ssl) is used.

URL: http(s)://[user:pass@]HOST[:PORT][/base-path][?prefix=NAME]
  * port defaults to 9200; a base path (e.g. https://archive/opensearch behind the
    perfSONAR Apache proxy) is prepended to every request;
  * `prefix` is prepended to every index, data stream, template and alias name
    (tests use it to stay apart; production leaves it empty).
Credentials: basic auth from the URL or `auth=(user, password)`, or `api_key`
("ApiKey <value>" header). TLS verification is on unless verify_ssl=False;
`ca_file` adds a CA bundle. Every request has a timeout (default 30 s).

Transport outcomes: connection errors, timeouts and TLS errors other than verification are
transient; a TLS verification failure is permanent; a pooled connection the server closed
is retried once.
"""

import base64
import http.client
import json
import socket
import ssl
from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import PermanentError, TransientError
from .layout import CHECK_COMMAND, OWNED_TEST_TYPES, WRITER_ROLE, compact_json, stream_name

DEFAULT_TIMEOUT = 30.0


class SetupError(TransientError):
    """The archive is not set up for this store (missing/stale template, stream or index,
    or privileges refused). Transient: the run waits (retry policy) until an admin has run
    SETUP_COMMAND; the message says what is wrong and names the command."""


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
                 verify_ssl=True, ca_file=None, timeout=DEFAULT_TIMEOUT, prefix="", **_ignored):
        """`_ignored`: options of the archive data that concern the store only."""
        self.scheme, self.host, self.port = scheme, host, port
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

    def _connect(self):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                               context=self.context)
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def close(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - best-effort close of a dead connection
                pass
            self._conn = None

    def request(self, method, path, body=None, ndjson=False):
        """(status, parsed JSON or None). Raises TransientError/PermanentError on transport trouble."""
        if isinstance(body, (dict, list)):
            body = compact_json(body)
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = dict(self.headers)
        if ndjson:
            headers["Content-Type"] = "application/x-ndjson"
        url = self.base_path + path
        for attempt in (1, 2):
            fresh = self._conn is None
            if fresh:
                self._conn = self._connect()
            try:
                self._conn.request(method, url, body=body, headers=headers)
                response = self._conn.getresponse()
                data = response.read()
                status = response.status
                if response.getheader("connection", "").lower() == "close":
                    self.close()
                break
            except ssl.SSLError as err:
                self.close()
                if "CERTIFICATE_VERIFY_FAILED" in str(err) or "certificate" in str(err).lower():
                    raise PermanentError("TLS certificate verification failed for %s: %s"
                                         % (self.url, getattr(err, "reason", None) or err))
                raise TransientError("TLS error talking to %s: %s" % (self.url, err))
            except ssl.CertificateError as err:
                self.close()
                raise PermanentError("TLS certificate of %s does not match: %s" % (self.url, err))
            except socket.timeout:
                self.close()
                raise TransientError("timeout after %gs talking to %s" % (self.timeout, self.url))
            except (OSError, http.client.HTTPException) as err:
                self.close()
                # A pooled keep-alive connection may have been closed by the server: retry once.
                if attempt == 1 and not fresh and not isinstance(err, ConnectionRefusedError):
                    continue
                raise TransientError("cannot reach OpenSearch at %s: %s" % (self.url, err))
        parsed = None
        if data:
            try:
                parsed = json.loads(data.decode("utf-8"))
            except ValueError:
                parsed = None
        return status, parsed

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
        items = (parsed or {}).get("items")
        if not isinstance(items, list) or len(items) != expected:
            raise TransientError("bulk write: unexpected answer from %s" % self.url)
        return [list(item.values())[0] for item in items]


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
        return "%s: %s" % (error.get("type"), error.get("reason"))
    return error if isinstance(error, str) else None
