"""Archive stores behind one small interface; a URL picks the store.

    store = open_store("sqlite:////var/lib/jumbo/jumbo.db")
    store = open_store("https://user:pass@archive.example.org:9200", verify_ssl=True)

    outcomes = store.put_many(items)   # one outcome per item: None (stored) or a StoreError
    rows = store.latest()              # newest record per path (source|dest|ip_version|test_type)
    for item in store.export(): ...    # everything, as envelopes (or flat records), for replay
    store.close()

`items` are archiver envelopes, bare pScheduler result objects or flat records
(see jumbo.archive.record). put_many is idempotent: the same run stored twice is one
row/document; a record older than the stored latest entry of its path never
replaces it.

Errors: a StoreError raised by put_many concerns the whole batch; an error in
the outcome list concerns that item. `transient` errors (store down, timeout,
HTTP 429/5xx, database locked) may succeed later and are retried by the
archiver; the others (bad credentials, TLS verification failure, mapping
conflict, malformed record) will not.

URLs:
  sqlite:///relative/path.db, sqlite:////absolute/path.db     jumbo.archive.sqlite.store
  http(s)://[user:pass@]HOST[:PORT][/base-path][?prefix=NAME]  jumbo.archive.opensearch.store
"""

from urllib.parse import urlsplit

# Where results go when the archive data names no `_url` (the embedded store on a node).
DEFAULT_STORE_URL = "sqlite:////var/lib/jumbo/jumbo.db"
DEFAULT_STORE_ENV = "JUMBO_DEFAULT_STORE"

SCHEMES = ("sqlite", "http", "https")


class StoreError(Exception):
    """A failed write. `transient` says whether trying again later can succeed."""

    def __init__(self, message, transient=False):
        Exception.__init__(self, message)
        self.message = message
        self.transient = transient

    def __str__(self):
        return self.message


class TransientError(StoreError):
    def __init__(self, message):
        StoreError.__init__(self, message, transient=True)


class PermanentError(StoreError):
    def __init__(self, message):
        StoreError.__init__(self, message, transient=False)


def default_url():
    import os
    return os.environ.get(DEFAULT_STORE_ENV) or DEFAULT_STORE_URL


def redact_url(url):
    """`url` fit for a message: what stands before an `@` (user:password) becomes ***."""
    if "@" not in url:
        return url
    scheme, separator, rest = url.partition("://")
    if not separator:
        scheme, rest = "", url
    return "%s%s***@%s" % (scheme, separator, rest.rsplit("@", 1)[1])


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


def open_store(url=None, **options):
    """The store named by `url` (default: the embedded SQLite store). Options go to the store."""
    url = url or default_url()
    parts = check_url(url)
    if parts.scheme == "sqlite":
        from .sqlite.store import SQLiteStore
        return SQLiteStore.from_url(url, **options)
    from .opensearch.store import OpenSearchStore
    return OpenSearchStore.from_url(url, **options)
