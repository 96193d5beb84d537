"""Archive stores behind one small interface; a URL picks the store.

    from jumbo.archive.stores import open_store
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

Errors live in jumbo.archive.errors, URLs in jumbo.archive.urls (both re-exported here);
open_store in jumbo.archive.stores, so that reading the archive (the report) does not load
the writers.
URLs:
  sqlite:///relative/path.db, sqlite:////absolute/path.db     jumbo.archive.sqlite.store
  http(s)://[user:pass@]HOST[:PORT][/base-path][?prefix=NAME]  jumbo.archive.opensearch.store
"""

from .errors import PermanentError, StoreError, TransientError
from .urls import (DEFAULT_STORE_ENV, DEFAULT_STORE_URL, SCHEMES, check_url, default_url,
                   redact_url)

__all__ = ["DEFAULT_STORE_ENV", "DEFAULT_STORE_URL", "SCHEMES", "PermanentError", "StoreError",
           "TransientError", "check_url", "default_url", "redact_url"]
