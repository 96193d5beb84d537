"""Evidence across runs (jumbo.archive.evidence) in the SQLite store.

Written (store version 4), by a trigger on every pmtu result:
  pmtu_evidence        one row per path ever seen with a partial black hole: sightings,
                       first and last sighting, the smallest failing share, the hop and size
                       of the newest sighting that located it
  pmtu_evidence_clean  per such path and path MTU, the flows of the clean runs (every flow
                       crossed) after its last sighting; a newer sighting counts them again
                       from the results after it (one (path, start) index range, empty unless
                       results arrived out of order). The path MTU is kept so that the
                       report's target applies when it reads.
Read (SqliteQueries.evidence): over the whole history, these two tables with the per-path
run counts of pmtu_path_states: no read of the history. Over a window (or a store without
them), the window's sightings (a range of the partial index results_partial, where the
store has it), then per sighted path its window's runs and clean flows through the
(path, start) index.
"""

from .. import evidence

# A run's failing share, over a results row (alias r) or a trigger's NEW row.
def _share(q, blackhole_flows="blackhole_flows"):
    return ("CASE WHEN %sflows > 0 THEN MIN(1.0, IFNULL(%s%s, 1) * 1.0 / %sflows) ELSE %r END"
            % (q, q, blackhole_flows, q, 1.0 / evidence.MAX_FLOWS))


def _hop(column):
    """The `column` of the newest sighting of row r's path that has it (located)."""
    located = ("blackhole_size IS NOT NULL" if column == "blackhole_size"
               else "(blackhole_ttl IS NOT NULL OR blackhole_ip IS NOT NULL)")
    return ("(SELECT %s FROM results AS h WHERE h.path = r.path AND h.partial = 1 AND %s "
            "ORDER BY h.start DESC LIMIT 1)" % (column, located))


_CLEAN_AFTER = ("INSERT INTO pmtu_evidence_clean SELECT path, path_mtu, SUM(IFNULL(flows, 1)) "
                "FROM results AS r WHERE test_type = 'pmtu' AND %s AND %s GROUP BY path, path_mtu"
                % ("%s", evidence.sql_clean(None, "r.")))

DDL = (
    # The sightings alone (a few rows of millions): a window's are a range of this index.
    "CREATE INDEX IF NOT EXISTS results_partial ON results (start) "
    "WHERE partial = 1 AND test_type = 'pmtu'",
    "CREATE TABLE IF NOT EXISTS pmtu_evidence (path TEXT PRIMARY KEY, seen INTEGER NOT NULL, "
    "first TEXT NOT NULL, last TEXT NOT NULL, share REAL NOT NULL, ttl INTEGER, ip TEXT, "
    "size INTEGER) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS pmtu_evidence_clean (path TEXT NOT NULL, path_mtu INTEGER NOT NULL, "
    "flows INTEGER NOT NULL, PRIMARY KEY (path, path_mtu)) WITHOUT ROWID",
    # A sighting: counted; the hop and size of the newest located one kept; when it is the
    # newest, the clean flows are those after it.
    "CREATE TRIGGER IF NOT EXISTS results_pmtu_evidence AFTER INSERT ON results "
    "WHEN NEW.test_type = 'pmtu' AND NEW.partial = 1 BEGIN "
    "INSERT INTO pmtu_evidence SELECT NEW.path, 1, NEW.start, NEW.start, %s, NEW.blackhole_ttl, "
    "NEW.blackhole_ip, NEW.blackhole_size WHERE 1 "
    "ON CONFLICT (path) DO UPDATE SET seen = seen + 1, first = MIN(first, excluded.first), "
    "last = MAX(last, excluded.last), share = MIN(share, excluded.share), "
    "ttl = CASE WHEN %s THEN excluded.ttl ELSE ttl END, "
    "ip = CASE WHEN %s THEN excluded.ip ELSE ip END, "
    "size = CASE WHEN excluded.size IS NOT NULL AND (excluded.last >= last OR size IS NULL) "
    "THEN excluded.size ELSE size END; "
    "DELETE FROM pmtu_evidence_clean WHERE path = NEW.path "
    "AND NEW.start = (SELECT last FROM pmtu_evidence WHERE path = NEW.path); "
    "%s; "
    "END" % (_share("NEW."),
             "(excluded.ttl IS NOT NULL OR excluded.ip IS NOT NULL) AND (excluded.last >= last "
             "OR (ttl IS NULL AND ip IS NULL))",
             "(excluded.ttl IS NOT NULL OR excluded.ip IS NOT NULL) AND (excluded.last >= last "
             "OR (ttl IS NULL AND ip IS NULL))",
             _CLEAN_AFTER % "r.path = NEW.path AND r.start > NEW.start AND NEW.start = "
             "(SELECT last FROM pmtu_evidence WHERE path = NEW.path)"),
    # A clean run after the last sighting of a sighted path: its flows.
    "CREATE TRIGGER IF NOT EXISTS results_pmtu_clean AFTER INSERT ON results "
    "WHEN NEW.test_type = 'pmtu' AND %s BEGIN "
    "INSERT INTO pmtu_evidence_clean SELECT NEW.path, NEW.path_mtu, IFNULL(NEW.flows, 1) "
    "FROM pmtu_evidence AS e WHERE e.path = NEW.path AND NEW.start > e.last "
    "ON CONFLICT (path, path_mtu) DO UPDATE SET flows = flows + excluded.flows; "
    "END" % evidence.sql_clean(None, "NEW."),
)
# Filled from what is stored (the store's upgrade to version 4).
FILL = (
    "DELETE FROM pmtu_evidence",
    "DELETE FROM pmtu_evidence_clean",
    "INSERT INTO pmtu_evidence SELECT path, COUNT(*), MIN(start), MAX(start), MIN(%s), %s, %s, %s "
    "FROM results AS r WHERE test_type = 'pmtu' AND partial = 1 GROUP BY path"
    % (_share("r."), _hop("blackhole_ttl"), _hop("blackhole_ip"), _hop("blackhole_size")),
    _CLEAN_AFTER % "r.start > (SELECT last FROM pmtu_evidence AS e WHERE e.path = r.path)",
)


def _rows(queries, sql, args):
    out = {}
    for path, seen, first, last, share, ttl, ip, size, runs, clean in queries.run(sql, args):
        out[path] = evidence.Evidence(seen, runs or seen, first, last, share, ttl, ip, size,
                                      clean or 0)
    return out


def read(queries, window, target):
    """{path key: Evidence} of the pmtu paths sighted in `window` (see the module docstring)."""
    if not queries.has_path or "partial" not in queries.columns:
        return {}
    if queries.has_evidence and not window.since and not window.until:
        return _rows(queries, (
            "SELECT e.path, e.seen, e.first, e.last, e.share, e.ttl, e.ip, e.size, "
            "(SELECT SUM(n) FROM pmtu_path_states AS s WHERE s.path = e.path), "
            "(SELECT SUM(flows) FROM pmtu_evidence_clean AS c WHERE c.path = e.path "
            "AND c.path_mtu >= ?) FROM pmtu_evidence AS e"), (int(target),))
    bounds, bargs = [], []
    for clause, value in ((">=", window.since), ("<", window.until)):
        if value:
            bounds.append(" AND r.start %s ?" % clause)
            bargs.append(value)
    bounds = "".join(bounds)
    blackhole_flows = "blackhole_flows" if "blackhole_flows" in queries.columns else "NULL"
    table = '"%s"' % queries.table.replace('"', '""')
    hop = "(SELECT %%s FROM %s AS r WHERE r.path = s.path AND r.partial = 1%s AND %%s " \
          "ORDER BY r.start DESC LIMIT 1)" % (table, bounds)
    located = "(r.blackhole_ttl IS NOT NULL OR r.blackhole_ip IS NOT NULL)"
    sql = ("SELECT s.path, s.seen, s.first, s.last, s.share, %s, %s, %s, "
           "(SELECT COUNT(*) FROM %s AS r WHERE r.path = s.path%s), "
           "(SELECT SUM(IFNULL(r.flows, 1)) FROM %s AS r WHERE r.path = s.path AND r.start > s.last%s "
           "AND %s) FROM (SELECT path, COUNT(*) AS seen, MIN(start) AS first, MAX(start) AS last, "
           "MIN(%s) AS share FROM %s AS r WHERE partial = 1 AND test_type = 'pmtu'%s GROUP BY path) AS s"
           % (hop % ("r.blackhole_ttl", located), hop % ("r.blackhole_ip", located),
              hop % ("r.blackhole_size", "r.blackhole_size IS NOT NULL"),
              table, bounds, table, bounds, evidence.sql_clean(target, "r."),
              _share("", blackhole_flows), table, bounds))
    # the arguments in the order of the placeholders: three hops, runs, clean, the sightings
    # (whose literal conditions match the partial index results_partial)
    return _rows(queries, sql, bargs * 6)
