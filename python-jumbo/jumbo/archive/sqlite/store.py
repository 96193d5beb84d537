"""The embedded store: one SQLite file, the library's own schema.

URL: sqlite:///relative/path.db or sqlite:////absolute/path.db (node default
/var/lib/jumbo/jumbo.db). Safe for concurrent writers: WAL journal, a busy
timeout (30 s), each batch one IMMEDIATE transaction. A write that still finds
the database locked is a transient error (the archiver retries).

Schema (SCHEMA_VERSION 5, kept in `PRAGMA user_version`):

  results   one row per run and direction (PRIMARY KEY id = jumbo.archive.record id, so a
            result archived twice is one row; INSERT OR IGNORE; a `direction: both`
            jumbo-throughput run is two rows, jumbo.archive.directed). Columns: every jumbo.archive.record field
            with the same name; booleans (succeeded, jumbo, partial) as 0/1, `hops`
            as JSON text; plus
              day   TEXT  'YYYY-MM-DD' of start (UTC), for per-day trends
              path  TEXT  source|dest|ip_version|test_type (jumbo.archive.record.path_key)
              raw   TEXT  the pScheduler result object as archived (JSON), or NULL
            Indexes: results_path_start (path, start)           latest/history per path
                     results_day (day, test_type)               per-day trend
                     results_sites (source_site, dest_site, test_type, start)
  latest    one row per path: path PRIMARY KEY, source, dest, ip_version, test_type,
            start, id (-> results.id). Updated only when the new start >= the stored
            one, so a late retry never replaces a newer result.
  latest_results   VIEW: results rows joined to latest (the newest row of each path).
  latest_rows   (version 3) a copy of each path's newest results row (every column but
            `raw`), clustered by (test_type, path), kept by triggers on `latest`: the report
            reads the newest results of a test type as one range of one table, where the
            join above costs two B-tree lookups per path in a table of millions of rows
            (at 5M results: 0.75 s for 89,700 pmtu paths).
  pmtu_days, pmtu_path_states   (version 2) counts of pmtu results per day and per path, by
            the values a result's state depends on (succeeded, path_mtu, reverse_path_mtu,
            local_mtu for the days, black hole yes/no; NULL kept as -1), kept by a trigger on
            every insert into results. They let the adoption report draw its trend and find the
            paths that changed state without reading the history (its cost follows the number of
            paths, not of stored results). Version 5: pmtu_path_states also sums, per path and
            state inputs, the flows measured and asked (flows, flows_asked) and counts the runs
            that gave each (flows_runs, asked_runs: rows stored before the record kept a count
            give none, so an unknown count is never taken as zero): how sure a jumbo verdict
            is (jumbo.report.confidence). A version-1 store gets them, filled from its history,
            the first time a version-2 writer opens it (and a store of an earlier version its
            latest_rows, filled from latest and results, the first time a version-3 one does).

Query examples for the report:
  SELECT * FROM latest_results WHERE test_type = 'pmtu';
  SELECT day, SUM(jumbo = 1), COUNT(*) FROM results WHERE test_type = 'pmtu' GROUP BY day;
"""

import json
import operator
import os
import sqlite3

from .. import directed, path_state
from .. import record as records
from ..errors import PermanentError, TransientError
from . import evidence, identity

SCHEMA_VERSION = 5
BUSY_TIMEOUT = 30.0

BOOL_FIELDS = ("succeeded", "jumbo", "partial")
_dumps = json.JSONEncoder(separators=(",", ":")).encode
JSON_FIELDS = ("hops",)
_BOOL_INDEXES = [records.FIELDS.index(name) for name in BOOL_FIELDS]
_HOPS_INDEX = records.FIELDS.index("hops")
COLUMNS = records.FIELDS + ("day", "path", "raw")

_TYPES = {
    "ip_version": "INTEGER", "succeeded": "INTEGER", "path_mtu": "INTEGER",
    "local_mtu": "INTEGER", "target_mtu": "INTEGER", "jumbo": "INTEGER", "partial": "INTEGER",
    "blackhole_ttl": "INTEGER", "blackhole_size": "INTEGER", "reverse_path_mtu": "INTEGER",
    "flows": "INTEGER", "flows_asked": "INTEGER", "mss": "INTEGER", "throughput_standard": "REAL",
    "throughput_jumbo": "REAL", "gain": "REAL", "rtt": "REAL", "loss": "REAL",
}


def _column(name):
    """The definition of a results column (also latest_rows', whose key is its own)."""
    if name in ("test_type", "start", "day", "path"):
        return "%s TEXT NOT NULL" % name
    return "%s %s" % (name, _TYPES.get(name, "TEXT"))


def _schema_sql():
    cols = ["id TEXT PRIMARY KEY" if name == "id" else _column(name) for name in COLUMNS]
    return """
CREATE TABLE IF NOT EXISTS results (
  %s
);
CREATE INDEX IF NOT EXISTS results_path_start ON results (path, start);
CREATE INDEX IF NOT EXISTS results_day ON results (day, test_type);
CREATE INDEX IF NOT EXISTS results_sites ON results (source_site, dest_site, test_type, start);
CREATE TABLE IF NOT EXISTS latest (
  path TEXT PRIMARY KEY,
  source TEXT, dest TEXT, ip_version INTEGER, test_type TEXT NOT NULL,
  start TEXT NOT NULL,
  id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS latest_type ON latest (test_type);
CREATE VIEW IF NOT EXISTS latest_results AS
  SELECT results.* FROM latest JOIN results ON results.id = latest.id;
""" % ",\n  ".join(cols)


# The per-day and per-path summaries of the pmtu history (see the module docstring), laid out
# as in version 4 (version 2 had them without `unknown`). NULLs are stored as -1 (0 for
# succeeded) because a primary key must be NOT NULL to be unique in SQLite; readers turn -1
# back into NULL. The black-hole and unknown flags are the path-state rule's
# (jumbo.archive.path_state): the summaries keep no pmtud, so the rule's pmtud conditions
# are kept as these two flags.
_SUMMARY_KEY = "succeeded, path_mtu, reverse_path_mtu, blackhole, unknown"
_SUMMARY_NEW = ("IFNULL(NEW.succeeded, 0), IFNULL(NEW.path_mtu, -1), IFNULL(NEW.reverse_path_mtu, -1), "
                "%s, %s" % (path_state.sql_blackhole("NEW."), path_state.sql_unknown("NEW.")))
_SUMMARY_DDL = (
    "CREATE TABLE IF NOT EXISTS pmtu_days (day TEXT NOT NULL, local_mtu INTEGER NOT NULL, "
    "succeeded INTEGER NOT NULL, path_mtu INTEGER NOT NULL, reverse_path_mtu INTEGER NOT NULL, "
    "blackhole INTEGER NOT NULL, unknown INTEGER NOT NULL, n INTEGER NOT NULL, "
    "first TEXT NOT NULL, last TEXT NOT NULL, "
    "PRIMARY KEY (day, local_mtu, %s)) WITHOUT ROWID" % _SUMMARY_KEY,
    "CREATE TABLE IF NOT EXISTS pmtu_path_states (path TEXT NOT NULL, succeeded INTEGER NOT NULL, "
    "path_mtu INTEGER NOT NULL, reverse_path_mtu INTEGER NOT NULL, blackhole INTEGER NOT NULL, "
    "unknown INTEGER NOT NULL, n INTEGER NOT NULL, flows INTEGER NOT NULL, "
    "flows_runs INTEGER NOT NULL, flows_asked INTEGER NOT NULL, asked_runs INTEGER NOT NULL, "
    "PRIMARY KEY (path, %s)) WITHOUT ROWID" % _SUMMARY_KEY,
    "CREATE TRIGGER IF NOT EXISTS results_pmtu_summary AFTER INSERT ON results "
    "WHEN NEW.test_type = 'pmtu' BEGIN "
    "INSERT INTO pmtu_days VALUES (NEW.day, IFNULL(NEW.local_mtu, -1), %s, 1, NEW.start, NEW.start) "
    "ON CONFLICT (day, local_mtu, %s) DO UPDATE "
    "SET n = n + 1, first = MIN(first, excluded.first), last = MAX(last, excluded.last); "
    "INSERT INTO pmtu_path_states VALUES (NEW.path, %s, 1, IFNULL(NEW.flows, 0), "
    "NEW.flows IS NOT NULL, IFNULL(NEW.flows_asked, 0), NEW.flows_asked IS NOT NULL) "
    "ON CONFLICT (path, %s) DO UPDATE SET n = n + 1, flows = flows + excluded.flows, "
    "flows_runs = flows_runs + excluded.flows_runs, "
    "flows_asked = flows_asked + excluded.flows_asked, "
    "asked_runs = asked_runs + excluded.asked_runs; "
    "END" % (_SUMMARY_NEW, _SUMMARY_KEY, _SUMMARY_NEW, _SUMMARY_KEY),
)
# Filling them from what is stored (in the same transaction as the trigger).
_SUMMARY_ROW = ("IFNULL(succeeded, 0), IFNULL(path_mtu, -1), IFNULL(reverse_path_mtu, -1), %s, %s"
                % (path_state.sql_blackhole("r."), path_state.sql_unknown("r.")))
_SUMMARY_FILL = (
    "INSERT INTO pmtu_days SELECT day, IFNULL(local_mtu, -1), %s, COUNT(*), MIN(start), MAX(start) "
    "FROM results AS r WHERE test_type = 'pmtu' GROUP BY 1, 2, 3, 4, 5, 6, 7" % _SUMMARY_ROW,
    "INSERT INTO pmtu_path_states SELECT path, %s, COUNT(*), SUM(IFNULL(flows, 0)), "
    "COUNT(flows), SUM(IFNULL(flows_asked, 0)), COUNT(flows_asked) "
    "FROM results AS r WHERE test_type = 'pmtu' GROUP BY 1, 2, 3, 4, 5, 6" % _SUMMARY_ROW,
)
# An older layout is dropped first (its rows are counted again from the results).
_SUMMARY_DROP = ("DROP TRIGGER IF EXISTS results_pmtu_summary", "DROP TABLE IF EXISTS pmtu_days",
                 "DROP TABLE IF EXISTS pmtu_path_states")

# Version 3: latest_rows (see the module docstring). `latest` is written by upsert: its DO
# UPDATE fires the update trigger, and only when the new result is the newer one. (Delete,
# then insert: a trigger's INSERT OR REPLACE takes the upsert's conflict policy, ABORT.)
LATEST_ROW_COLUMNS = tuple(name for name in COLUMNS if name != "raw")
# The columns are named on both sides: a column an upgrade added (ALTER TABLE) is the table's
# last, wherever the record's field order puts it.
_LATEST_ROW_NAMES = ", ".join(LATEST_ROW_COLUMNS)
_LATEST_ROW_COPY = ("DELETE FROM latest_rows WHERE test_type = NEW.test_type AND path = NEW.path; "
                    "INSERT INTO latest_rows (%s) SELECT %s FROM results WHERE id = NEW.id;"
                    % (_LATEST_ROW_NAMES, _LATEST_ROW_NAMES))
_LATEST_ROW_TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS latest_rows_insert AFTER INSERT ON latest BEGIN %s END"
    % _LATEST_ROW_COPY,
    "CREATE TRIGGER IF NOT EXISTS latest_rows_update AFTER UPDATE OF id ON latest BEGIN %s END"
    % _LATEST_ROW_COPY,
)
_LATEST_ROWS_DDL = (
    "CREATE TABLE IF NOT EXISTS latest_rows (%s, PRIMARY KEY (test_type, path)) WITHOUT ROWID"
    % ", ".join(_column(name) for name in LATEST_ROW_COLUMNS),
) + _LATEST_ROW_TRIGGERS
_LATEST_ROWS_FILL = (
    "DELETE FROM latest_rows",
    "INSERT INTO latest_rows (%s) SELECT %s FROM latest JOIN results AS r ON r.id = latest.id"
    % (_LATEST_ROW_NAMES, ", ".join("r." + name for name in LATEST_ROW_COLUMNS)),
)


def _add_columns(conn):
    """Versions 4 and 5: the record fields a store of an earlier version has no column for
    (blackhole_flows, flows_asked), added to results and latest_rows (whose copy triggers name every
    column, so they are made again)."""
    for table, names in (("results", COLUMNS), ("latest_rows", LATEST_ROW_COLUMNS)):
        have = set(row[1] for row in conn.execute("PRAGMA table_info(%s)" % table))
        if have:
            for name in names:
                if name not in have:
                    conn.execute("ALTER TABLE %s ADD COLUMN %s" % (table, _column(name)))
    conn.execute("DROP TRIGGER IF EXISTS latest_rows_insert")
    conn.execute("DROP TRIGGER IF EXISTS latest_rows_update")


# What each version adds to the one before it, and how it is filled from what is stored; a
# step is SQL text or a function of the connection. Version 2's summaries are made (again)
# by version 5's step, in version 5's layout (with `unknown`, and the flow sums), so a store
# of any earlier version counts its history once; version 4 adds the evidence of partial
# black holes across runs (jumbo.archive.sqlite.evidence); version 5 the record's
# flows_asked (NULL in the rows stored before: unknown) and the flow sums.
_UPGRADES = (
    (3, (_add_columns,) + _LATEST_ROWS_DDL + _LATEST_ROWS_FILL),
    (4, (_add_columns,) + _LATEST_ROW_TRIGGERS + evidence.DDL + evidence.FILL),
    (5, (_add_columns,) + _LATEST_ROW_TRIGGERS + _SUMMARY_DROP + _SUMMARY_DDL + _SUMMARY_FILL),
)


_INSERT = "INSERT OR IGNORE INTO results (%s) VALUES (%s)" % (
    ", ".join(COLUMNS), ", ".join("?" * len(COLUMNS)))
_LATEST = """
INSERT INTO latest (path, source, dest, ip_version, test_type, start, id)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET start = excluded.start, id = excluded.id
WHERE excluded.start > latest.start
   OR (excluded.start = latest.start AND excluded.id >= latest.id)
"""


_FIELD_VALUES = operator.itemgetter(*records.FIELDS)


def row_values(record, raw, raw_text=None, path=None):
    """The results row of a record; `raw_text`, when given, is `raw` as JSON text already;
    `path`, when given, is records.path_key(record)."""
    try:
        values = list(_FIELD_VALUES(record))
    except KeyError:
        values = [record.get(name) for name in records.FIELDS]
    for index in _BOOL_INDEXES:
        if values[index] is not None:
            values[index] = 1 if values[index] else 0
    hops = values[_HOPS_INDEX]
    if hops is not None:
        values[_HOPS_INDEX] = _dumps(hops)
    values.append(record["start"][:10])
    values.append(path if path is not None else records.path_key(record))
    if raw is None:
        values.append(None)
    else:
        values.append(raw_text if raw_text is not None else _dumps(raw))
    return values


def row_to_record(row, names):
    rec = {}
    for name, value in zip(names, row):
        if name in BOOL_FIELDS and value is not None:
            value = bool(value)
        elif name in JSON_FIELDS and value is not None:
            value = json.loads(value)
        rec[name] = value
    return rec


def _mark_new(conn):
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(identity.MARKER_DDL)


class SQLiteStore(object):
    kind = "sqlite"

    def __init__(self, path, timeout=BUSY_TIMEOUT):
        self.path = path
        self.url = "sqlite:///" + path
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise PermanentError("SQLite store directory %s does not exist" % directory)
        try:
            # Only a store of ours is opened; a new one is made whole, then named (identity).
            if not identity.check_existing(path):
                identity.create(path, _mark_new)
                identity.check_existing(path)
            # By absolute path: SQLite built with SQLITE_USE_URI (Debian's) reads a name
            # starting with `file:` as a URI (`file:..%2Fx.db?mode=rwc` opens ../x.db).
            self.conn = sqlite3.connect(os.path.abspath(path), timeout=timeout,
                                        isolation_level=None, check_same_thread=False)
            self.conn.execute("PRAGMA busy_timeout = %d" % int(timeout * 1000))
            try:
                identity.check_marker(self.conn, path, SCHEMA_VERSION)
            except PermanentError:
                self.conn.close()
                raise
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            if self.conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                self.conn.executescript(_schema_sql())
                self._upgrade()
        except sqlite3.OperationalError as err:
            raise self._classify(err)
        except sqlite3.DatabaseError as err:
            raise PermanentError("SQLite store %s: %s" % (path, err))
        except OSError as err:
            raise PermanentError("SQLite store %s: %s" % (path, err.strerror or err))

    def _upgrade(self):
        """From the store's version to SCHEMA_VERSION (_UPGRADES: the summary tables, then
        latest_rows, each with its triggers and its content from what is stored), in one
        transaction; the version is read again under the lock so that two writers opening
        the same old store do not both fill them."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                for target, statements in _UPGRADES:
                    if version < target:
                        for step in statements:
                            if callable(step):
                                step(self.conn)
                            else:
                                self.conn.execute(step)
                self.conn.execute("PRAGMA user_version = %d" % SCHEMA_VERSION)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    @classmethod
    def from_url(cls, url, timeout=None, **_ignored):
        path = url[len("sqlite:///"):]
        return cls(path, timeout=timeout or BUSY_TIMEOUT)

    def _classify(self, err):
        text = str(err)
        if "locked" in text or "busy" in text:
            return TransientError("SQLite store %s: %s" % (self.path, text))
        return PermanentError("SQLite store %s: %s" % (self.path, text))

    def put_many(self, items):
        return self.write(self.prepare(items))

    def prepare(self, items):
        """CPU-only half of put_many (no database access): (outcomes, rows, latest)."""
        outcomes = [None] * len(items)
        rows, latest = [], {}
        for index, item in enumerate(items):
            try:
                # One row per directed observation: two for a `direction: both` run.
                directed_records = directed.normalize(item)
            except records.BadRecord as err:
                outcomes[index] = PermanentError(str(err))
                continue
            for rec, raw in directed_records:
                # The archiver's Envelope keeps the text of `result` as it was read: no
                # re-encoding.
                text = getattr(item, "result_text", None) if raw is not None else None
                if text is not None and raw is not item.get("result"):
                    text = None
                key = records.path_key(rec)
                rows.append(row_values(rec, raw, text, key))
                best = latest.get(key)
                if best is None or (rec["start"], rec["id"]) >= (best[5], best[6]):
                    latest[key] = (key, rec["source"], rec["dest"], rec["ip_version"],
                                   rec["test_type"], rec["start"], rec["id"])
        return outcomes, rows, latest

    @staticmethod
    def merge(prepared):
        """One prepared batch of several (in order), written as one transaction."""
        outcomes, rows, latest = [], [], {}
        for part_outcomes, part_rows, part_latest in prepared:
            outcomes.extend(part_outcomes)
            rows.extend(part_rows)
            for key, entry in part_latest.items():
                best = latest.get(key)
                if best is None or (entry[5], entry[6]) >= (best[5], best[6]):
                    latest[key] = entry
        return outcomes, rows, latest

    def write(self, prepared):
        """The database half: one IMMEDIATE transaction. Returns the outcomes."""
        outcomes, rows, latest = prepared
        if not rows:
            return outcomes
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany(_INSERT, rows)
                self.conn.executemany(_LATEST, list(latest.values()))
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as err:
            raise self._classify(err)
        except sqlite3.DatabaseError as err:
            raise PermanentError("SQLite store %s: %s" % (self.path, err))
        return outcomes

    def _select(self, sql, args=()):
        cursor = self.conn.execute(sql, args)
        names = [d[0] for d in cursor.description]
        for row in cursor:
            yield row_to_record(row, names)

    def latest(self, test_type=None):
        """The newest record of each path (optionally of one test type)."""
        sql = "SELECT %s FROM latest_results" % ", ".join(records.FIELDS)
        if test_type:
            return list(self._select(sql + " WHERE test_type = ? ORDER BY path", (test_type,)))
        return list(self._select(sql + " ORDER BY path"))

    def get(self, record_id):
        rows = list(self._select("SELECT %s FROM results WHERE id = ?"
                                 % ", ".join(records.FIELDS), (record_id,)))
        return rows[0] if rows else None

    def count(self, test_type=None):
        if test_type:
            return self.conn.execute("SELECT COUNT(*) FROM results WHERE test_type = ?",
                                     (test_type,)).fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def export(self):
        """Every stored result, oldest first: envelopes when the raw result was kept, else records."""
        cursor = self.conn.execute("SELECT %s, raw FROM results ORDER BY start, id"
                                   % ", ".join(records.FIELDS))
        names = [d[0] for d in cursor.description]
        for row in cursor:
            raw = row[-1]
            rec = row_to_record(row[:-1], names[:-1])
            if raw:
                yield {"run-href": rec["run_href"], "task-href": rec["task_href"],
                       "result": json.loads(raw)}
            else:
                yield rec

    def close(self):
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
