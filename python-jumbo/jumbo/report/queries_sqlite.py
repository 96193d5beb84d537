"""The report's questions in SQL, for the embedded store (sqlite:///PATH).

Everything is computed by SQLite: the latest result per path with ROW_NUMBER() over each
path's history, trends with GROUP BY on the day/week, state changes with LAG(). The database
is opened read-only, so a report can never change the store.
"""

import json
import os
import sqlite3
import urllib.parse

from .errors import ReportError, StoreDown
from .queries import Latest, Queries

# The record's columns the report reads (jumbo/record.py names them).
NEEDED = ("source", "dest", "ip_version", "start", "path_mtu", "pmtud", "test_type")


def _path_of(url):
    parsed = urllib.parse.urlparse(url)
    path = urllib.parse.unquote(parsed.path)
    if parsed.netloc and parsed.netloc not in ("", "localhost"):
        path = "//" + parsed.netloc + path
    if url.startswith("sqlite:////"):
        path = "/" + path.lstrip("/")
    return path


def state_sql(target):
    """SQL expression for a result's state; the same rule as queries_opensearch.state_script."""
    t = int(target)
    return (
        "CASE WHEN pmtud = 'blackhole' OR reverse_pmtud = 'blackhole' OR partial = 1 THEN 'blackhole' "
        "WHEN succeeded = 1 AND path_mtu >= %d AND (reverse_path_mtu IS NULL OR reverse_path_mtu >= %d) "
        "THEN 'jumbo' "
        "WHEN succeeded = 1 AND path_mtu IS NOT NULL THEN 'standard' "
        "ELSE 'failed' END" % (t, t))


class SqliteQueries(Queries):
    name = "sqlite"

    def __init__(self, url):
        self.url = url
        path = _path_of(url)
        if not path or not os.path.exists(path):
            raise StoreDown("store not found: %s (no such file)" % path)
        try:
            self.db = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(path), uri=True)
            self.db.execute("PRAGMA temp_store = MEMORY")
            self.table = self._find_table()
        except sqlite3.DatabaseError as err:
            raise StoreDown("cannot read the store %s: %s" % (path, err))
        self.columns = self._columns(self.table)
        # The archiver keeps a `path` key (source|dest|ip_version|test_type) indexed with start:
        # partitioning on it lets SQLite walk the index instead of sorting the history.
        self.part = "path" if "path" in self.columns else "source, dest, ip_version"
        self.pathcol = "path, " if "path" in self.columns else ""

    # -- discovery: align with whatever table the archiver created -------------------------
    def _columns(self, table):
        return [row[1] for row in self.db.execute("PRAGMA table_info(%s)" % _quote(table))]

    def _find_table(self):
        tables = [r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")]
        preferred = ["results", "records", "adoption", "jumbo_results"]
        tables.sort(key=lambda t: (preferred.index(t) if t in preferred else len(preferred), t))
        for table in tables:
            if "latest" in table:
                continue
            cols = set(self._columns(table))
            if all(c in cols for c in NEEDED):
                return table
        raise ReportError("the store holds no table of jumbo results (is it a jumbo store?)")

    def _col(self, name, default="NULL"):
        return name if name in self.columns else default

    def _where(self, window, test_type="pmtu"):
        clauses, args = [], []
        if test_type:
            clauses.append("test_type = ?")
            args.append(test_type)
        if window.since:
            clauses.append("start >= ?")
            args.append(window.since)
        if window.until:
            clauses.append("start < ?")
            args.append(window.until)
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    def _run(self, sql, args=()):
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as err:
            raise StoreDown("the store failed a query: %s" % err)

    def close(self):
        self.db.close()

    # -- the questions ---------------------------------------------------------------------
    def count(self, window):
        where, args = self._where(window)
        row = self._run("SELECT COUNT(*), MIN(start), MAX(start) FROM %s %s"
                        % (_quote(self.table), where), args)[0]
        return row[0], row[1], row[2]

    def latest(self, window, target):
        where, args = self._where(window)
        c = self._col
        state = state_sql(target)
        cols = ("source, dest, ip_version, {si}, {di}, {ss}, {ds}, start, succeeded, {err}, "
                "path_mtu, {lm}, pmtud, {pa}, {bt}, {bi}, {bs}, {rp}, {rpd}, {hops}").format(
            si=c("source_ip"), di=c("dest_ip"), ss=c("source_site"), ds=c("dest_site"),
            err=c("error"), lm=c("local_mtu"), pa=c("partial", "0"), bt=c("blackhole_ttl"),
            bi=c("blackhole_ip"), bs=c("blackhole_size"), rp=c("reverse_path_mtu"),
            rpd=c("reverse_pmtud"), hops=c("hops"))
        # Built plainly for readability: rank each path's results newest first, keep rank 1.
        sql = (
            "SELECT source, dest, ip_version, source_ip, dest_ip, source_site, dest_site, start, "
            "succeeded, error, path_mtu, local_mtu, pmtud, partial, blackhole_ttl, blackhole_ip, "
            "blackhole_size, reverse_path_mtu, reverse_pmtud, "
            "CASE WHEN st = 'jumbo' THEN NULL ELSE hops END AS hops, n FROM ("
            "  SELECT " + _aliased(cols) + ", " + state + " AS st, "
            "  ROW_NUMBER() OVER (PARTITION BY " + self.part + " ORDER BY start DESC) AS rn, "
            "  COUNT(*) OVER (PARTITION BY " + self.part + ") AS n "
            "  FROM " + _quote(self.table) + " " + where +
            ") WHERE rn = 1")
        cur = self.db.cursor()
        try:
            cur.execute(sql, args)
            for row in cur:
                row = list(row)
                row[8] = bool(row[8])
                row[13] = bool(row[13])
                if row[19]:
                    try:
                        row[19] = json.loads(row[19])
                    except ValueError:
                        row[19] = None
                yield Latest(*row)
        except sqlite3.DatabaseError as err:
            raise StoreDown("the store failed a query: %s" % err)

    def trend(self, window, target, interval):
        where, args = self._where(window)
        if interval == "week":
            bucket = "date(%s, '-6 days', 'weekday 1')" % (
                "day" if "day" in self.columns else "start")
        else:
            bucket = "day" if "day" in self.columns else "substr(start, 1, 10)"
        sql = (
            "SELECT b, COUNT(*), COUNT(DISTINCT source || '|' || dest || '|' || ip_version), "
            "SUM(st = 'jumbo'), SUM(lm >= %d), SUM(st = 'blackhole') FROM ("
            " SELECT %s AS b, source, dest, ip_version, %s AS lm, %s AS st FROM %s %s"
            ") GROUP BY b ORDER BY b" % (int(target), bucket, self._col("local_mtu"),
                                          state_sql(target), _quote(self.table), where))
        return [{"bucket": r[0], "results": r[1], "paths": r[2], "capable": r[3] or 0,
                 "configured": r[4] or 0, "blackholes": r[5] or 0}
                for r in self._run(sql, args)]

    def gains(self, window):
        if "gain" not in self.columns:
            return []
        where, args = self._where(window, test_type=None)
        where = (where + " AND " if where else "WHERE ") + "gain IS NOT NULL"
        sql = (
            "SELECT source, dest, ip_version, gain, {ts}, {tj}, start FROM ("
            " SELECT *, ROW_NUMBER() OVER (PARTITION BY {part} ORDER BY start DESC) rn"
            " FROM {table} {where}) WHERE rn = 1").format(
                ts=self._col("throughput_standard"), tj=self._col("throughput_jumbo"),
                part=self.part, table=_quote(self.table), where=where)
        keys = ("source", "dest", "ip_version", "gain", "throughput_standard", "throughput_jumbo", "start")
        return [dict(zip(keys, r)) for r in self._run(sql, args)]

    def latency(self, window):
        if "rtt" not in self.columns:
            return []
        where, args = self._where(window, test_type="latency")
        sql = ("SELECT source, dest, %s, %s, AVG(rtt), AVG(%s), COUNT(*) FROM %s %s "
               "GROUP BY source, dest" % (self._col("source_ip"), self._col("dest_ip"),
                                          self._col("loss", "0"), _quote(self.table), where))
        keys = ("source", "dest", "source_ip", "dest_ip", "rtt", "loss", "samples")
        return [dict(zip(keys, r)) for r in self._run(sql, args) if r[4] is not None]

    def changes(self, window, target, limit, flap):
        where, args = self._where(window)
        self._run("DROP TABLE IF EXISTS temp.report_changes")
        self._run(
            "CREATE TEMP TABLE report_changes AS "
            "SELECT source, dest, ip_version, start, prev, st FROM ("
            " SELECT source, dest, ip_version, start, st,"
            "  LAG(st) OVER (PARTITION BY " + self.part + " ORDER BY start) AS prev FROM ("
            "   SELECT source, dest, ip_version, " + self.pathcol + " start, %s AS st FROM %s %s"
            "  ) WHERE st != 'failed'"
            ") WHERE prev IS NOT NULL AND prev != st" % (state_sql(target), _quote(self.table), where),
            args)
        rows = self._run("SELECT source, dest, ip_version, start, prev, st FROM temp.report_changes "
                         "ORDER BY start DESC, source, dest LIMIT ?", (int(limit),))
        changed = self._run("SELECT COUNT(*) FROM (SELECT 1 FROM temp.report_changes "
                            "GROUP BY source, dest, ip_version)")[0][0]
        total = self._run("SELECT COUNT(*) FROM temp.report_changes")[0][0]
        flapping = self._run(
            "SELECT source, dest, ip_version, COUNT(*) AS n, MAX(start) FROM temp.report_changes "
            "GROUP BY source, dest, ip_version HAVING n >= ? ORDER BY n DESC, source, dest LIMIT ?",
            (int(flap), int(limit)))
        self._run("DROP TABLE IF EXISTS temp.report_changes")
        return {
            "changes": [{"source": r[0], "dest": r[1], "ip_version": r[2], "start": r[3],
                         "from": r[4], "to": r[5]} for r in rows],
            "changed_paths": changed,
            "total_changes": total,
            "flapping": [{"source": r[0], "dest": r[1], "ip_version": r[2], "changes": r[3],
                          "last_change": r[4]} for r in flapping],
        }


def _quote(name):
    return '"%s"' % name.replace('"', '""')


def _aliased(cols):
    """'a, NULL, b' -> 'a AS source, NULL AS ..., ...' in LATEST order (first 20 fields)."""
    from .queries import LATEST_FIELDS
    parts = [p.strip() for p in cols.split(",")]
    return ", ".join("%s AS %s" % (p, name) for p, name in zip(parts, LATEST_FIELDS[:20]))
