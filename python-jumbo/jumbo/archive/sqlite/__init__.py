"""The embedded SQLite store: its layout and writer (store.py) and the report's reader over
the same file (reader.py)."""
