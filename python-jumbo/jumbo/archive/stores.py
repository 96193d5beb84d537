"""open_store(url): the store a URL names (see jumbo.archive for the interface)."""

import importlib

from .urls import check_url, default_url

# Each kind of store, loaded by name once a URL names it (as jumbo.archive.queries.READERS):
# the archiver on an SQLite node never loads the HTTP and TLS stack.
STORES = {"sqlite": ("jumbo.archive.sqlite.store", "SQLiteStore"),
          "opensearch": ("jumbo.archive.opensearch.store", "OpenSearchStore")}


def store_class(kind):
    """The store class of a kind of store ("sqlite" or "opensearch")."""
    module, name = STORES[kind]
    return getattr(importlib.import_module(module), name)


def open_store(url=None, **options):
    """The store named by `url` (default: the embedded SQLite store). Options go to the store."""
    url = url or default_url()
    parts = check_url(url)
    if parts.scheme == "sqlite":
        return store_class("sqlite").from_url(url, **options)
    return store_class("opensearch").from_url(url, **options)
