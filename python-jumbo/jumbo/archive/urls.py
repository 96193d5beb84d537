"""Store URLs: which store a URL names, the default one, and a URL fit for a message.

  sqlite:///relative/path.db, sqlite:////absolute/path.db     jumbo.archive.sqlite.store
  http(s)://[user:pass@]HOST[:PORT][/base-path][?prefix=NAME]  jumbo.archive.opensearch.store
"""

import ipaddress
import os
from urllib.parse import urlsplit

# Where results go when the archive data names no `_url` (the embedded store on a node).
DEFAULT_STORE_URL = "sqlite:////var/lib/jumbo/jumbo.db"
DEFAULT_STORE_ENV = "JUMBO_DEFAULT_STORE"

SCHEMES = ("sqlite", "http", "https")


def default_url():
    return os.environ.get(DEFAULT_STORE_ENV) or DEFAULT_STORE_URL


def redact_url(url):
    """`url` fit for a message: a login (what stands before an `@`) becomes ***, and so does
    a port that is not a number and all after it (`https://user:SECRET` without `@` reads as
    host `user`, port `SECRET`)."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        scheme, rest = "", url
    hidden = ""
    if "@" in rest:
        # Everything before the last `@`: a password may hold `/`, `?` or `#`.
        hidden, rest = "***@", rest.rsplit("@", 1)[1]
    authority, slash, tail = rest.partition("/")
    host = authority
    name, colon, port = host.rpartition(":")
    if colon and not port.isdigit() and "]" not in port:
        # Likely `user:password` without its `@`, and the password may go on past a `/`.
        host, slash, tail = name + ":***", "", ""
    return "%s%s%s%s%s%s" % (scheme, separator, hidden, host, slash, tail)


def check_url(url):
    """Raise ValueError with a readable message if `url` names no store we know. The message
    never carries a login the URL holds (redact_url)."""
    if not isinstance(url, str) or not url:
        raise ValueError("store URL must be a non-empty string")
    try:
        return _check_url(url)
    except ValueError as err:
        raise ValueError(str(err).replace(repr(url), repr(redact_url(url))))


def _check_url(url):
    if "://" not in url:
        # Not echoed: without a scheme, any part of it may be a password.
        raise ValueError("no store scheme in the URL (use sqlite:///PATH or http(s)://HOST:PORT)")
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ValueError("unknown store %r in URL %r (use sqlite:///PATH or http(s)://HOST:PORT)"
                         % (parts.scheme or url, url))
    if parts.scheme == "sqlite":
        if parts.netloc or not parts.path or parts.path == "/":
            raise ValueError("bad SQLite URL %r (use sqlite:///relative.db or sqlite:////abs/path.db)"
                             % url)
    else:
        if not parts.hostname:
            raise ValueError("bad OpenSearch URL %r: no host" % url)
        try:
            parts.port
        except ValueError:
            raise ValueError("bad OpenSearch URL %r: the port is not a number" % url)
    return parts


def _loopback(host):
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plain_http_login_problem(scheme, host, has_login):
    """Why a login must not go to this URL (None: it may). Basic auth and API keys travel in
    clear over http; a loopback address never leaves the host, where an OpenSearch behind a
    local TLS-terminating proxy or a test node listens."""
    if has_login and scheme == "http" and not _loopback(host or ""):
        return ("a login over plain http would travel in clear to %s: use an https _url "
                "(only a loopback address may take a login over http)" % host)
    return None
