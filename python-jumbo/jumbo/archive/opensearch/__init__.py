"""The OpenSearch store beside perfSONAR's archive: its layout, client and writer (store.py),
the report's reader over that same client (reader.py) and the one-time set-up (setup.py).

store.py and reader.py are over 400 lines: each is one HTTP client's worth of requests
against one layout (templates, streams, the latest-per-path index), split no further so that
the layout and every request that depends on it are read in one place."""
