"""The report's questions in SQL, for the embedded store (sqlite:///PATH).

The store (jumbo/archive/sqlite/store.py) keeps `results` (one row per run, with `path` =
source|dest|ip_version|test_type and `day`, indexed on (path, start) and (day, test_type))
and `latest` (path -> id of its newest result). Everything is computed by SQLite:

  latest per path   `latest_rows`, the store's copy of each path's newest row (version 3;
                    `latest` joined to `results` in an older store; ROW_NUMBER() over each
                    path's history when the window ends in the past)
  trend + changes   ONE pass over the window's results: GROUP BY day for the trend, and in
                    the same pass the paths that were ever in another state than their
                    latest one (joined to a small temp table of latest states); only those
                    paths' histories are then read, through the (path, start) index, with
                    LAG() to date each change
  gains, latency    the latest table / the (day, test_type) index
  evidence          partial black holes across runs (sqlite/evidence.py): the store's
                    evidence tables over the whole history, one pass over a window's results
  agreement         the jumbo runs per path and their flows (how sure a jumbo verdict is):
                    from pmtu_path_states' flow sums over the whole history (version 5),
                    else one GROUP BY pass over the window's results

Over the whole history (no --since/--until) on a version-4 store, the count, the trend and
the changed paths come from the store's summaries instead (`pmtu_days`: results per day and
state inputs; `pmtu_path_states`: per path), which a trigger keeps as results are written:
then no query reads the history, and the report's cost follows the number of paths. A
window (or an older store) takes the pass above, whose cost follows the window.

The database is opened read-only, so a report never changes the store.
"""

import os
import sqlite3
import sys
import threading
import urllib.parse

from ..errors import ReportError, StoreDown
from ..evidence import path_key
from .. import path_state
from ..query_base import Latest, Queries, Window, latest_states, state_of
from . import evidence

# The test whose results carry the measured jumbo gain.
GAIN_TEST = "jumbo-throughput"
NEEDED = ("source", "dest", "ip_version", "start", "path_mtu", "pmtud", "test_type")
LATEST_COLUMNS = ("source", "dest", "ip_version", "source_ip", "dest_ip", "source_site",
                  "dest_site", "start", "succeeded", "error", "path_mtu", "local_mtu", "pmtud",
                  "partial", "blackhole_ttl", "blackhole_ip", "blackhole_size",
                  "reverse_path_mtu", "reverse_pmtud", "hops")


def _path_of(url):
    if not url.startswith("sqlite:///"):
        raise ReportError("bad SQLite URL %r (use sqlite:///relative.db or sqlite:////abs/path.db)" % url)
    return urllib.parse.unquote(url[len("sqlite:///"):].split("?", 1)[0])


def _whole_sums(*columns):
    """SQL: the sum of each column over a group, as an integer (0 for none)."""
    return ", ".join("CAST(IFNULL(SUM(%s), 0) AS INTEGER)" % c for c in columns)


def _quote(name):
    return '"%s"' % name.replace('"', '""')


class SqliteQueries(Queries):
    name = "sqlite"

    def __init__(self, url):
        self.url = url
        self.path = _path_of(url)
        if not self.path or not os.path.exists(self.path):
            raise StoreDown("store not found: %s (no such file)" % self.path)
        try:
            self._local = threading.local()
            self._all = []
            self.table = self._find_table()
            self.columns = set(self._columns(self.table))
            tables = set(r[0] for r in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"))
        except sqlite3.DatabaseError as err:
            raise StoreDown("cannot read the store %s: %s" % (self.path, err))
        self.has_path = "path" in self.columns
        self.has_latest = self.has_path and "latest" in tables
        # The version-3 copy of each path's newest row (jumbo/archive/sqlite/store.py).
        self.has_latest_rows = self.table == "results" and "latest_rows" in tables
        self.part = "path" if self.has_path else "source, dest, ip_version"
        # The summaries (jumbo/archive/sqlite/store.py), only for the store's own table, and
        # only in version 4's layout: the earlier one has no `unknown` flag (a report opens the
        # store read-only, so an older store keeps it until a writer upgrades it).
        self.has_summary = (self.has_latest and self.table == "results"
                            and "pmtu_days" in tables and "pmtu_path_states" in tables
                            and "unknown" in self._columns("pmtu_days"))
        self.has_evidence = self.has_summary and "pmtu_evidence" in tables
        self.has_flow_sums = self.has_summary and "asked_runs" in self._columns("pmtu_path_states")

    @property
    def db(self):
        """One read-only connection per thread: the model runs independent queries in parallel."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(self.path)),
                                 uri=True, timeout=30, check_same_thread=False)
            db.execute("PRAGMA cache_size = -4000")
            self._local.db = db
            self._all.append(db)
        return db

    def _columns(self, table):
        return [row[1] for row in self.db.execute("PRAGMA table_info(%s)" % _quote(table))]

    def _find_table(self):
        tables = [r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        if "results" in tables:
            tables.remove("results")
            tables.insert(0, "results")
        for table in tables:
            cols = set(self._columns(table))
            if all(c in cols for c in NEEDED):
                return table
        raise ReportError("%s holds no table of jumbo results (is it a jumbo store?)" % self.path)

    def _col(self, name, default="NULL"):
        return name if name in self.columns else default

    def _where(self, window, test_type="pmtu", column="start"):
        clauses, args = [], []
        if test_type:
            clauses.append("test_type = ?")
            args.append(test_type)
        if window.since:
            clauses.append("%s >= ?" % column)
            args.append(window.since)
        if window.until:
            clauses.append("%s < ?" % column)
            args.append(window.until)
        if window.hosts is not None:
            marks = ", ".join("?" * len(window.hosts))
            clauses.append("(source IN (%s) OR dest IN (%s))" % (marks, marks))
            args.extend(window.hosts + window.hosts)
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    def run(self, sql, args=(), db=None):
        try:
            return (db or self.db).execute(sql, args).fetchall()
        except sqlite3.DatabaseError as err:
            raise StoreDown("the store failed a query: %s" % err)

    def close(self):
        for db in self._all:
            db.close()
        self._all = []

    def _selected(self, prefix="", target=None):
        """The latest row's columns (NULL for one this store lacks). With a target, `hops`
        only where the path does not carry it (the report reads no hops there): SQLite
        decides from path_state's own rule, so those rows cost Python neither a state nor a
        copy of the row."""
        jumbo = None
        if target is not None and self._rule_columns:
            jumbo = "CASE WHEN (%s) = 'jumbo' THEN NULL ELSE %shops END" % (
                path_state.sql(target), prefix)
        return ", ".join(jumbo if c == "hops" and jumbo else prefix + c if c in self.columns
                         else "NULL" for c in LATEST_COLUMNS)

    # -- the questions ---------------------------------------------------------------------
    def _summarised(self, window):
        return (self.has_summary and not window.since and not window.until
                and window.hosts is None)

    def count(self, window):
        if self._summarised(window):
            n, first, last = self.run("SELECT SUM(n), MIN(first), MAX(last) FROM pmtu_days")[0]
            if not n:
                return 0, None, None
            return n, first, last
        if not window.since and not window.until and "day" in self.columns:
            # Covered by the (day, test_type) index; then only the first and last day's rows.
            n, first_day, last_day = self.run(
                "SELECT COUNT(*), MIN(day), MAX(day) FROM %s WHERE test_type = 'pmtu'"
                % _quote(self.table))[0]
            if not n:
                return 0, None, None
            first = self.run("SELECT MIN(start) FROM %s WHERE day = ? AND test_type = 'pmtu'"
                              % _quote(self.table), (first_day,))[0][0]
            last = self.run("SELECT MAX(start) FROM %s WHERE day = ? AND test_type = 'pmtu'"
                             % _quote(self.table), (last_day,))[0][0]
            return n, first, last
        where, args = self._where(window)
        row = self.run("SELECT COUNT(*), MIN(start), MAX(start) FROM %s %s"
                        % (_quote(self.table), where), args)[0]
        return row[0], row[1], row[2]

    def _newest(self, test_type, window):
        """FROM and WHERE of the newest result `r` of each path of `test_type` started in
        `window` (since only: has_latest and no `until`), and their arguments: the store's
        copy of those rows (latest_rows), or `latest` joined to the results."""
        if self.has_latest_rows:
            sql = "FROM latest_rows AS r WHERE r.test_type = ?"
        else:
            sql = ("FROM latest JOIN %s AS r ON r.id = latest.id WHERE latest.test_type = ?"
                   % _quote(self.table))
        args = [test_type]
        if window.since:
            sql += " AND r.start >= ?"
            args.append(window.since)
        return sql, args

    def _latest_sql(self, window, target=None):
        if self.has_latest and not window.until:
            # The store keeps the newest result of each path: no scan of the history.
            sql, args = self._newest("pmtu", window)
            return "SELECT %s, NULL %s" % (self._selected("r.", target), sql), args
        where, args = self._where(window)
        sql = ("SELECT %s, n FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY start DESC) "
               "AS rn, COUNT(*) OVER (PARTITION BY %s) AS n FROM %s %s) WHERE rn = 1"
               % (self._selected("", target), self.part, self.part, _quote(self.table), where))
        return sql, args

    @property
    def _rule_columns(self):
        """Whether the store has every column path_state's rule reads (an old one may not)."""
        return set(path_state.FIELDS) <= self.columns

    def latest(self, window, target):
        sql, args = self._latest_sql(window, target)
        decided = self._rule_columns         # the query already dropped the jumbo rows' hops
        try:
            for row in self.db.execute(sql, args):
                row = list(row)
                row[8] = bool(row[8])
                row[13] = bool(row[13])
                # hosts, addresses, sites, start times (a mesh's runs share their scheduled
                # times), enums repeat
                for i in (0, 1, 3, 4, 5, 6, 7, 12, 18):
                    if row[i].__class__ is str:
                        row[i] = sys.intern(row[i])
                # hops stay JSON text (parsed lazily, by localisation, where it needs them);
                # dropped where the path carries the target.
                latest = Latest(*row)
                if latest.hops and not decided and state_of(latest, target) == "jumbo":
                    latest = latest._replace(hops=None)
                yield latest
        except sqlite3.DatabaseError as err:
            raise StoreDown("the store failed a query: %s" % err)

    def history_self_contained(self, window):
        return self.has_latest and not window.until

    def trend(self, window, target, interval):
        return self.history(window, target, interval, 0, 3, None)[0]

    def changes(self, window, target, limit, flap):
        return self.history(window, target, "day", limit, flap, None)[1]

    def history(self, window, target, interval, limit, flap, latest, trend=None):
        # (trend is never given: trend_apart() is False, the trend comes with the one pass)
        if latest is None and self._summarised(window):
            return self._history_from_summaries(target, interval, limit, flap)
        where, args = self._where(window)
        day = "day" if "day" in self.columns else "substr(start, 1, 10)"
        bucket = ("date(%s, '-6 days', 'weekday 1')" % day) if interval == "week" else day
        # A path's key as the archive writes it (evidence.path_key: a missing name is ""),
        # built the same way on a legacy table without the column.
        pathcol = ("path" if self.has_path else
                   "IFNULL(source, '') || '|' || IFNULL(dest, '') || '|' || IFNULL(ip_version, '')")
        db = self.db
        self.run("DROP TABLE IF EXISTS temp.report_latest")
        self.run("CREATE TEMP TABLE report_latest (path TEXT PRIMARY KEY, st TEXT) WITHOUT ROWID")
        if latest is None and self.history_self_contained(window):
            # The latest state of each path, computed by SQLite from the latest table.
            newest, largs = self._newest("pmtu", window)
            self.run("INSERT OR REPLACE INTO temp.report_latest SELECT r.path, %s %s"
                      % (path_state.sql(target), newest), largs)
        else:
            if latest is None:
                latest = latest_states(self.latest(window, target), target)
            cut = None if self.has_path else -len("|pmtu")
            try:
                db.executemany("INSERT OR REPLACE INTO temp.report_latest VALUES (?, ?)",
                               ((path_key(r.source, r.dest, r.ip_version)[:cut],
                                 r.result_state) for r in latest))
            except sqlite3.DatabaseError as err:
                raise StoreDown("the store failed a query: %s" % err)
        # One pass: the trend per bucket, and per bucket the paths seen in another state than
        # their latest one (the only paths that can have changed).
        sql = (
            "SELECT b, COUNT(*), SUM(h.st = 'jumbo'), SUM(cfg), SUM(h.st = 'blackhole'), "
            "SUM(h.st = 'unknown'), "
            "group_concat(CASE WHEN h.st != 'failed' AND h.st IS NOT l.st THEN p END, char(10)) FROM ("
            " SELECT %s AS b, %s AS p, %s AS cfg, %s AS st FROM %s %s"
            ") AS h LEFT JOIN temp.report_latest AS l ON l.path = h.p "
            "GROUP BY b ORDER BY b" % (bucket, pathcol, "%s >= %d" % (self._col("local_mtu"), int(target)),
                                      path_state.sql(target), _quote(self.table), where))
        trend, candidates = [], set()
        for r in self.run(sql, args):
            trend.append({"bucket": r[0], "results": r[1], "capable": r[2] or 0,
                          "configured": r[3] or 0, "blackholes": r[4] or 0, "unknown": r[5] or 0})
            if r[6]:
                candidates.update(r[6].split("\n"))
        self.run("DROP TABLE IF EXISTS temp.report_latest")
        return trend, self._changes(window, target, limit, flap, sorted(candidates), pathcol)

    def _history_from_summaries(self, target, interval, limit, flap):
        """history() over the whole history from pmtu_days / pmtu_path_states: the trend is a
        GROUP BY over (days x distinct state inputs) rows, the candidate paths a GROUP BY over
        the per-path states (paths x states); only the candidates' histories
        are then read, as in the pass over the results."""
        bucket = "date(day, '-6 days', 'weekday 1')" if interval == "week" else "day"
        st = path_state.sql(target, null=-1, blackhole_flag="blackhole", unknown_flag="unknown")
        trend = [{"bucket": r[0], "results": r[1], "capable": r[2] or 0, "configured": r[3] or 0,
                  "blackholes": r[4] or 0, "unknown": r[5] or 0}
                 for r in self.run(
                     "SELECT b, SUM(n), SUM(n * (st = 'jumbo')), SUM(n * cfg), SUM(n * (st = 'blackhole')), "
                     "SUM(n * (st = 'unknown')) "
                     "FROM (SELECT %s AS b, n, NULLIF(local_mtu, -1) >= %d AS cfg, %s AS st FROM pmtu_days) "
                     "GROUP BY b ORDER BY b" % (bucket, int(target), st))]
        # A path can only have changed state if it was seen in two states other than failed
        # (failed results do not count as changes); those are read back to date the changes.
        candidates = [r[0] for r in self.run(
            "SELECT path FROM (SELECT path, %s AS st FROM pmtu_path_states) WHERE st != 'failed' "
            "GROUP BY path HAVING COUNT(DISTINCT st) > 1 ORDER BY path" % st)]
        return trend, self._changes(Window(), target, limit, flap, candidates, "path")

    def _changes(self, window, target, limit, flap, candidates, pathcol):
        empty = {"changes": [], "changed_paths": 0, "total_changes": 0, "flapping": []}
        if not candidates:
            return empty
        self.run("DROP TABLE IF EXISTS temp.report_cand")
        self.run("CREATE TEMP TABLE report_cand (path TEXT PRIMARY KEY) WITHOUT ROWID")
        self.db.executemany("INSERT OR IGNORE INTO temp.report_cand VALUES (?)", ((c,) for c in candidates))
        where, args = self._where(window)
        where = (where + " AND " if where else "WHERE ") + "%s IN (SELECT path FROM temp.report_cand)" % pathcol
        self.run("DROP TABLE IF EXISTS temp.report_changes")
        self.run(
            "CREATE TEMP TABLE report_changes AS "
            "SELECT p, source, dest, ip_version, start, prev, st, prev_mtu, mtu, prev_rmtu, rmtu FROM ("
            " SELECT p, source, dest, ip_version, start, st, mtu, rmtu,"
            "  LAG(st) OVER (PARTITION BY p ORDER BY start) AS prev,"
            "  LAG(mtu) OVER (PARTITION BY p ORDER BY start) AS prev_mtu,"
            "  LAG(rmtu) OVER (PARTITION BY p ORDER BY start) AS prev_rmtu FROM ("
            "   SELECT %s AS p, source, dest, ip_version, start, path_mtu AS mtu, %s AS rmtu,"
            "    %s AS st FROM %s %s"
            "  ) WHERE st != 'failed'"
            ") WHERE prev IS NOT NULL AND prev != st" % (pathcol, self._col("reverse_path_mtu"),
                                                       path_state.sql(target), _quote(self.table), where),
            args)
        rows = self.run("SELECT source, dest, ip_version, start, prev, st, prev_mtu, mtu, prev_rmtu, rmtu "
                        "FROM temp.report_changes "
                        # the flapping paths' changes after all others: within the limit, one
                        # path flapping every day cannot push out a regression of many paths
                        "ORDER BY p IN (SELECT p FROM temp.report_changes GROUP BY p "
                        "HAVING COUNT(*) >= ?), start DESC, source, dest LIMIT ?",
                        (int(flap), int(limit)))
        changed = self.run("SELECT COUNT(DISTINCT p), COUNT(*) FROM temp.report_changes")[0]
        flapping = self.run(
            "SELECT source, dest, ip_version, COUNT(*) AS n, MAX(start) FROM temp.report_changes "
            "GROUP BY p HAVING n >= ? ORDER BY n DESC, source, dest LIMIT ?", (int(flap), int(limit)))
        self.run("DROP TABLE IF EXISTS temp.report_changes")
        self.run("DROP TABLE IF EXISTS temp.report_cand")
        return {
            "changes": [{"source": r[0], "dest": r[1], "ip_version": r[2], "start": r[3],
                         "from": r[4], "to": r[5], "from_mtu": r[6], "to_mtu": r[7],
                         "from_reverse_mtu": r[8], "to_reverse_mtu": r[9]} for r in rows],
            "changed_paths": changed[0], "total_changes": changed[1],
            "flapping": [{"source": r[0], "dest": r[1], "ip_version": r[2], "changes": r[3],
                          "last_change": r[4]} for r in flapping],
        }

    def evidence(self, window, target):
        return evidence.read(self, window, target)

    def agreement_rows(self, window, target):
        # Whole numbers from SQLite itself (CAST: a hostile or damaged store's text or real
        # values count as SQLite reads them), so each row goes into the answer as it comes,
        # with no conversion per value in Python.
        if self.has_flow_sums and self._summarised(window):
            st = path_state.sql(target, null=-1, blackhole_flag="blackhole", unknown_flag="unknown")
            sql = ("SELECT path, %s FROM pmtu_path_states WHERE %s = 'jumbo' GROUP BY path"
                   % (_whole_sums("n", "flows", "flows_runs", "flows_asked", "asked_runs"), st))
            args = []
        else:
            where, args = self._where(window)
            pathcol = "path" if self.has_path else "source || '|' || dest || '|' || ip_version || '|pmtu'"
            flows, asked = self._col("flows"), self._col("flows_asked")
            sql = ("SELECT %s, COUNT(*), %s, COUNT(%s), %s, COUNT(%s) FROM %s %s %s %s = 'jumbo' "
                   "GROUP BY 1" % (pathcol, _whole_sums(flows), flows, _whole_sums(asked), asked,
                                   _quote(self.table), where, "AND" if where else "WHERE",
                                   path_state.sql(target)))
        shared = {}     # few distinct counts, many paths: one tuple each
        try:
            for r in self.db.execute(sql, args):
                counts = r[1:]
                yield r[0], shared.setdefault(counts, counts)
        except sqlite3.DatabaseError as err:
            raise StoreDown("the store failed a query: %s" % err)

    def gains(self, window):
        # The measured gain comes from the paired test (jumbo-throughput) only.
        if "gain" not in self.columns:
            return []
        cols = "r.source, r.dest, r.ip_version, r.gain, %s, %s, r.start" % (
            "r." + self._col("throughput_standard"), "r." + self._col("throughput_jumbo"))
        if self.has_latest and not window.until:
            newest, args = self._newest(GAIN_TEST, window)
            sql = "SELECT %s %s AND r.gain IS NOT NULL" % (cols, newest)
        else:
            where, args = self._where(window, test_type=GAIN_TEST)
            where = (where + " AND " if where else "WHERE ") + "gain IS NOT NULL"
            sql = ("SELECT %s FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY start DESC) rn "
                   "FROM %s %s) AS r WHERE rn = 1" % (cols, self.part, _quote(self.table), where))
        keys = ("source", "dest", "ip_version", "gain", "throughput_standard", "throughput_jumbo", "start")
        best = {}
        for r in self.run(sql, args):
            item = dict(zip(keys, r))
            key = (item["source"], item["dest"], item["ip_version"])
            if key not in best or item["start"] > best[key]["start"]:
                best[key] = item
        return list(best.values())

    def latency(self, window):
        if "rtt" not in self.columns:
            return []
        cols = "r.source, r.dest, %s, %s, r.rtt, %s" % (
            "r." + self._col("source_ip"), "r." + self._col("dest_ip"),
            "r." + self._col("loss") if "loss" in self.columns else "0")
        if self.has_latest and not window.until:
            # The newest latency result of each path (the latest table: no scan).
            newest, args = self._newest("latency", window)
            sql = "SELECT %s, 1 %s AND r.rtt IS NOT NULL" % (cols, newest)
        else:
            clauses, args = ["test_type = 'latency'", "rtt IS NOT NULL"], []
            if window.since:
                clauses.append("start >= ?")
                args.append(window.since)
            if window.until:
                clauses.append("start < ?")
                args.append(window.until)
            sql = ("SELECT %s, 1 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY start DESC) rn "
                   "FROM %s WHERE %s) AS r WHERE rn = 1" % (cols, self.part, _quote(self.table),
                                                           " AND ".join(clauses)))
        def shared(text):     # hosts and addresses repeat across ~90,000 rows
            return sys.intern(text) if text.__class__ is str else text
        return [(shared(source), shared(dest), shared(source_ip), shared(dest_ip), rtt, loss, n)
                for source, dest, source_ip, dest_ip, rtt, loss, n in self.run(sql, args)]
