"""jumbo.archive.sqlite.identity: which files are the suite's SQLite stores (marked by their
`jumbo_store` table, or a version 1-3 store recognised by its tables and user_version) and
how a new one comes to exist (built whole, then linked to its name). Anything else at the
name is refused with PermanentError and left byte for byte as it was."""

import os
import sqlite3
import stat

import pytest

from jumbo.archive.errors import PermanentError, StoreError
from jumbo.archive.sqlite import identity
from jumbo.core.errors import JumboError


def _sqlite(path, script):
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.executescript(script)
    finally:
        conn.close()


def _marked(conn):
    conn.executescript(identity.MARKER_DDL)


def _refused(path, words):
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(PermanentError) as caught:
        identity.check_existing(str(path))
    assert words in str(caught.value) and str(path) in str(caught.value)
    assert isinstance(caught.value, StoreError) and isinstance(caught.value, JumboError)
    if before is not None:
        assert path.read_bytes() == before
    return caught.value


def test_nothing_at_the_name_is_none(tmp_path):
    assert identity.check_existing(str(tmp_path / "jumbo.db")) is None


def test_a_new_store_is_built_whole_then_named(tmp_path):
    path = tmp_path / "jumbo.db"
    seen = []

    def build(conn):
        seen.append(os.path.exists(str(path)))  # not yet visible under its name
        _marked(conn)
    assert identity.create(str(path), build) is True
    assert seen == [False]
    assert identity.check_existing(str(path)) is True
    assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o644
    assert sorted(os.listdir(str(tmp_path))) == ["jumbo.db"]  # no temporary file left
    conn = sqlite3.connect(str(path))
    try:
        identity.check_marker(conn, str(path), 4)
        assert conn.execute("SELECT * FROM jumbo_store").fetchall() == [("format", "jumbo")]
    finally:
        conn.close()


def test_a_name_taken_meanwhile_is_not_replaced(tmp_path):
    path = tmp_path / "jumbo.db"

    def build(conn):
        path.write_bytes(b"planted")
        _marked(conn)
    assert identity.create(str(path), build) is False
    assert path.read_bytes() == b"planted"
    assert os.listdir(str(tmp_path)) == ["jumbo.db"]


def test_a_build_that_fails_leaves_nothing(tmp_path):
    def build(conn):
        _marked(conn)
        raise sqlite3.OperationalError("disk I/O error")
    with pytest.raises(sqlite3.OperationalError):
        identity.create(str(tmp_path / "jumbo.db"), build)
    assert os.listdir(str(tmp_path)) == []


def test_what_is_not_a_store_file_is_refused_and_left_alone(tmp_path):
    _refused(tmp_path, "not a regular file")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    _refused(empty, "an empty file, not a jumbo store")
    text = tmp_path / "notes.db"
    text.write_bytes(b"SQLite format 2\x00 and then some text")
    _refused(text, "not an SQLite database")
    fifo = tmp_path / "fifo.db"
    os.mkfifo(str(fifo))
    _refused(fifo, "not a regular file")


def test_a_link_to_a_store_is_followed_a_dangling_one_is_an_error(tmp_path):
    store = tmp_path / "real.db"
    identity.create(str(store), _marked)
    link = tmp_path / "link.db"
    link.symlink_to(store)
    assert identity.check_existing(str(link)) is True
    dangling = tmp_path / "dangling.db"
    dangling.symlink_to(tmp_path / "nowhere.db")
    with pytest.raises(OSError):  # the store wraps it in a PermanentError
        identity.check_existing(str(dangling))
    assert not (tmp_path / "nowhere.db").exists()


def _check_marker(path, version=4):
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        identity.check_marker(conn, str(path), version)
        return conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()


def test_another_programs_database_is_refused_and_not_changed(tmp_path):
    other = tmp_path / "other.db"
    _sqlite(other, "CREATE TABLE mail (id INTEGER); PRAGMA user_version = 2;")
    assert identity.check_existing(str(other)) is True  # SQLite: the marker decides
    before = other.read_bytes()
    with pytest.raises(PermanentError) as caught:
        _check_marker(other)
    assert "another program (no jumbo_store table)" in str(caught.value)
    assert other.read_bytes() == before


@pytest.mark.parametrize("script", [
    # The marker table with another format, or no row.
    "CREATE TABLE jumbo_store (name TEXT PRIMARY KEY, value TEXT);"
    "INSERT INTO jumbo_store VALUES ('format', 'other');",
    "CREATE TABLE jumbo_store (name TEXT PRIMARY KEY, value TEXT);",
    # Legacy tables, but a version beyond ours, or 0 (not written by an archiver).
    "CREATE TABLE results (x); CREATE TABLE latest (y); PRAGMA user_version = 5;",
    "CREATE TABLE results (x); CREATE TABLE latest (y);",
    # Only one of the two legacy tables.
    "CREATE TABLE results (x); PRAGMA user_version = 2;",
])
def test_a_lookalike_is_refused(tmp_path, script):
    path = tmp_path / "lookalike.db"
    _sqlite(path, script)
    with pytest.raises(PermanentError):
        _check_marker(path)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_store_of_an_earlier_version_is_recognised_and_marked(tmp_path, version):
    path = tmp_path / "old.db"
    _sqlite(path, "CREATE TABLE results (x); CREATE TABLE latest (y); "
                  "PRAGMA user_version = %d;" % version)
    tables = _check_marker(path, version=3)
    assert ("jumbo_store",) in tables
    _check_marker(path, version=3)  # now by its marker
    conn = sqlite3.connect(str(path))
    try:
        assert conn.execute("SELECT value FROM jumbo_store").fetchall() == [("jumbo",)]
    finally:
        conn.close()
