"""Which files are this suite's SQLite stores, and how a new one comes to exist.

A store is marked by its own table, `jumbo_store` (one row: format = 'jumbo'). Opening a
path that exists and is not a store fails (PermanentError) and leaves the file as it was:
an empty file, a file that is not SQLite, or another program's SQLite database is never
turned into a store. Stores written before the marker existed (versions 1 to 3: `results`
and `latest` tables and a matching user_version) are recognised and get the marker.

A new store is built whole in a temporary file of the same directory (mkstemp: O_EXCL,
mode 0600 then 0644) and linked to its name only when complete; the link fails if the name
appeared meanwhile (then that file is checked like any other). So no other process ever
sees the store half-made, and nothing planted at the name (a symbolic link, a file) is
followed or adopted.
"""

import os
import sqlite3
import stat
import tempfile

from ..errors import PermanentError

HEADER = b"SQLite format 3\x00"
MARKER_TABLE = "jumbo_store"
MARKER_DDL = ("CREATE TABLE IF NOT EXISTS jumbo_store (name TEXT PRIMARY KEY, value TEXT); "
              "INSERT OR IGNORE INTO jumbo_store VALUES ('format', 'jumbo');")
_LEGACY_TABLES = {"results", "latest"}


def check_existing(path):
    """None if nothing is at `path`; True if it is a store file (to be opened); raises
    PermanentError for anything else, without changing it."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        info = os.stat(path)  # a link an admin made to a store elsewhere: the target decides
    if not stat.S_ISREG(info.st_mode):
        raise PermanentError("SQLite store %s: not a regular file; refusing to use it" % path)
    if info.st_size == 0:
        raise PermanentError("SQLite store %s: an empty file, not a jumbo store; refusing to "
                             "turn it into one (remove it to let the archiver create the store)"
                             % path)
    with open(path, "rb") as handle:
        if handle.read(len(HEADER)) != HEADER:
            raise PermanentError("SQLite store %s: not an SQLite database; refusing to use it"
                                 % path)
    return True


def check_marker(conn, path, schema_version):
    """After opening an existing SQLite file: ours (marked, or an unmarked store of an
    earlier version, marked now) or PermanentError. `conn` is in autocommit mode."""
    tables = set(row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'"))
    if MARKER_TABLE in tables:
        row = conn.execute("SELECT value FROM jumbo_store WHERE name = 'format'").fetchone()
        if row and row[0] == "jumbo":
            return
    else:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if _LEGACY_TABLES <= tables and 1 <= version <= schema_version:
            conn.executescript(MARKER_DDL)
            return
    raise PermanentError("SQLite store %s: an SQLite database of another program (no %s "
                         "table); refusing to add the archive's tables to it"
                         % (path, MARKER_TABLE))


def create(path, build):
    """Create the store at `path`: `build(connection)` fills a temporary file of the same
    directory, which is then linked to `path`. Returns False if `path` appeared meanwhile."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".jumbo-new-", suffix=".db", dir=directory)
    try:
        os.close(fd)
        conn = sqlite3.connect(temp, isolation_level=None)
        try:
            build(conn)
        finally:
            conn.close()
        os.chmod(temp, 0o644)
        try:
            os.link(temp, path)
        except FileExistsError:
            return False
        return True
    finally:
        for name in (temp, temp + "-wal", temp + "-shm", temp + "-journal"):
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
