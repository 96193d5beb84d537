"""How sure a path's jumbo verdict is: its jumbo runs in the window, the flows they were asked
for and measured, and the odds that an ECMP member carrying a hole was never hashed onto.

A single-ended run asked for 16 flows may measure 12 (the dest's ICMP budget leaves no time
for the others: `flows-not-measured`). Its verdict stands on the 12: all at the target is
`jumbo` (the README says the same). What fewer flows cost is sureness, stated here per path:

  jumbo_runs          the path's runs in the window whose state was jumbo (the store's
                      agreement answer, jumbo.archive.query_base.Queries.agreement)
  flows_asked         the flows those runs were asked for; None (unknown) when a run was
                      stored before the record kept the count
  flows_measured      the flows they measured (of the runs that stored a count)
  missed_member_odds  (1 - 1/m) ** flows_measured with m = ECMP_MEMBERS: the odds that one
                      given member of an m-way ECMP group was never hit, each flow hashed
                      onto a member uniformly and independently (each run opens new source
                      ports, so runs are independent draws). m = 16 is the assumption: the
                      widest group the odds cover; a narrower one is missed less often.
  confidence          "high" when those odds are at most HIGH_ODDS (1 in 1,000, the bound the
                      report's evidence across runs clears a partial black hole with),
                      "low" above it, "unknown" when a flow count is missing (never taken as
                      sure). None for a path that is not jumbo.

A run in another state between two jumbo runs shows in the changes; its jumbo runs still
count here (they probed the same ECMP group).
"""

import collections
import threading

ECMP_MEMBERS = 16
HIGH_ODDS = 0.001
JUMBO_STATES = ("jumbo", "jumbo-one-way")
# Shown first, the least sure first: at most this many rows in text and HTML.
SHOWN = 10


def missed_member_odds(flows, members=ECMP_MEMBERS):
    """Odds that k uniformly hashed flows never hit one given member of an m-way group."""
    if flows is None:
        return None
    return (1.0 - 1.0 / members) ** flows


def of_counts(counts):
    """(jumbo_runs, flows_asked, flows_measured, odds, confidence) of a jumbo path from the
    store's (runs, flows, flows_runs, flows_asked, asked_runs)."""
    runs, flows, flows_runs, asked, asked_runs = counts or (0, 0, 0, 0, 0)
    measured = flows if flows_runs else None
    asked = asked if runs and asked_runs == runs else None
    odds = missed_member_odds(measured)
    if odds is None or asked is None or not measured:
        word = "unknown"
    else:
        word = "high" if odds <= HIGH_ODDS else "low"
    return runs, asked, measured, odds, word


def take_counts(rows, answers):
    """Each path's counts from the store's agreement answer (Queries.agreement_rows: (path
    key, counts) pairs), put on its record (`rows`: {(source, dest, ip_version): PathRecord})
    as they come. A key that names no path of `rows` (another site's, or a damaged one) is
    passed over: its path keeps no counts, and reads as unknown."""
    for key, counts in answers:
        parts = key.split("|")
        if len(parts) != 4 or parts[3] != "pmtu":
            continue
        source, dest, version = parts[0], parts[1], parts[2]
        try:
            version = int(version) if version else None
        except ValueError:
            continue
        p = rows.get((source, dest, version))
        if p is None:   # evidence.path_key writes a missing name as ""
            p = rows.get((source or None, dest or None, version))
        if p is not None:
            p.jumbo_counts = counts


class CountsFeed(object):
    """An archive's agreement answer read in a thread of its own from the report's start (the
    archive aggregates while the latest results are read), held as two flat lists until the
    paths' records are all made (ready), then put on them: ~40 MB for 460,000 jumbo paths
    where a map of them was ~110 MB."""

    def __init__(self):
        self.rows = None
        self._ready = threading.Event()

    def read(self, answers):
        answers = iter(answers)
        keys, values = [], []
        if not self._ready.is_set():
            for key, counts in answers:
                keys.append(key)
                values.append(counts)
                if self._ready.is_set():
                    break
        self._ready.wait()
        if self.rows is None:       # the report stopped before its records were made
            return
        take_counts(self.rows, zip(keys, values))
        del keys[:], values[:]
        take_counts(self.rows, answers)

    def ready(self, rows):
        """The records by key, complete: the counts go on them (once; None: never)."""
        if not self._ready.is_set():
            self.rows = rows
            self._ready.set()


def attach(paths):
    """Each jumbo path's record gets its confidence (path_record.PathRecord.confidence) from
    the counts take_counts put there. Few distinct counts recur over many paths (a mesh runs
    every path alike): one tuple each."""
    made = {}
    for p in paths:
        if p.state in JUMBO_STATES:
            counts = p.jumbo_counts
            found = made.get(counts)
            if found is None:
                found = made[counts] = of_counts(counts)
            p.confidence = found
        p.jumbo_counts = None


def summary(paths):
    """The report's `confidence` section: the assumption, the counts by word, the least sure."""
    counts = collections.Counter()
    rows = []
    for p in paths:
        if p.confidence is None:
            continue
        counts[p.confidence[4]] += 1
        if p.confidence[4] != "high":
            rows.append(p)
    order = {"unknown": 0, "low": 1}
    rows.sort(key=lambda p: (order[p.confidence[4]], -(p.confidence[3] or 0), p.key()))
    return collections.OrderedDict([
        ("ecmp_members", ECMP_MEMBERS), ("high_odds", HIGH_ODDS),
        ("jumbo_paths", sum(counts.values())), ("high", counts["high"]), ("low", counts["low"]),
        ("unknown", counts["unknown"]),
        ("least_sure", [_row(p) for p in rows[:SHOWN]])])


def _row(p):
    runs, asked, measured, odds, word = p.confidence
    return collections.OrderedDict([
        ("source", p.source), ("dest", p.dest), ("ip_version", p.ip_version),
        ("family", p.family), ("state", p.state), ("jumbo_runs", runs), ("flows_asked", asked),
        ("flows_measured", measured), ("missed_member_odds", odds), ("confidence", word)])


def _count(value):
    return "unknown" if value is None else str(value)


def _odds(value):
    return "unknown" if value is None else "%.2g" % value


def describe(row):
    """'12 of 16 flows in 1 jumbo run, odds 0.46 of a missed member': one path's figures."""
    return ("%s of %s flows measured in %d jumbo run%s; odds of a missed ECMP member %s"
            % (_count(row["flows_measured"]), _count(row["flows_asked"]), row["jumbo_runs"],
               "" if row["jumbo_runs"] == 1 else "s", _odds(row["missed_member_odds"])))


def headline(c):
    """The headline's sentence on the jumbo verdicts' sureness."""
    return ("%d jumbo paths: %d sure (odds of missing an ECMP member of up to %d <= %g), %d not"
            " sure, %d unknown (flow counts not stored)" % (
                c["jumbo_paths"], c["high"], c["ecmp_members"], c["high_odds"], c["low"],
                c["unknown"]))


def text(r):
    c = r.get("confidence")
    if not c:
        return []
    out = ["How sure the jumbo verdicts are: " + headline(c)]
    for row in c["least_sure"]:
        out.append("  %s -> %s %s  %s: %s" % (row["source"], row["dest"], row["family"],
                                             row["confidence"], describe(row)))
    return out


def html_rows(r):
    c = r.get("confidence") or {}
    return [(row["source"], row["dest"], row["family"], row["confidence"],
             row["jumbo_runs"], _count(row["flows_asked"]), _count(row["flows_measured"]),
             _odds(row["missed_member_odds"])) for row in c.get("least_sure", ())]


HTML_HEADERS = ["source", "dest", "family", "confidence", "jumbo runs", "flows asked",
                "flows measured", "odds of a missed ECMP member"]


def csv_rows(r):
    c = r.get("confidence")
    if not c:
        return
    for k in ("ecmp_members", "high_odds", "jumbo_paths", "high", "low", "unknown"):
        yield ("confidence", "mesh", k, c[k])
