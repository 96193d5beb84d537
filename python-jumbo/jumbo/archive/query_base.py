"""The report's questions to a store (Queries) and the rows they answer with (Latest, Window):
what both readers (jumbo.archive.sqlite.reader, jumbo.archive.opensearch.reader) implement.
jumbo.archive.queries picks the reader for a URL."""

import collections

from . import path_state

# One latest result per directed path (source, dest, ip_version). `hops` is only filled for
# paths that do not carry the target (it is what localisation needs, and nothing else does).
LATEST_FIELDS = (
    "source", "dest", "ip_version", "source_ip", "dest_ip", "source_site", "dest_site",
    "start", "succeeded", "error", "path_mtu", "local_mtu", "pmtud", "partial",
    "blackhole_ttl", "blackhole_ip", "blackhole_size", "reverse_path_mtu", "reverse_pmtud",
    "hops", "results",
)
Latest = collections.namedtuple("Latest", LATEST_FIELDS)

# The state of one result, used for trends and changes: defined once, in path_state.
STATES = path_state.STATES
state_of = path_state.state_of

# A path's latest result as the history compares its runs with it: the path's key and that
# result's own state (path_state.state_of). The report hands its per-path records, which
# carry the same attributes, without making these.
LatestState = collections.namedtuple("LatestState", "source dest ip_version result_state")


def latest_states(rows, target):
    """[LatestState] of Latest rows."""
    return [LatestState(r.source, r.dest, r.ip_version, state_of(r, target)) for r in rows]


class Window(object):
    """A closed time window on the result start time, as ISO strings (either may be None),
    and optionally the hosts one of whose ends a result must have (`hosts`: a site's page
    draws its trend and changes over its own hosts' results; None: every result)."""

    def __init__(self, since=None, until=None, hosts=None):
        self.since = since
        self.until = until
        self.hosts = tuple(sorted(hosts)) if hosts is not None else None

    def describe(self):
        if not self.since and not self.until:
            return "all stored results"
        return "%s .. %s" % (self.since or "start", self.until or "now")


class Queries(object):
    """The interface; see the store modules for the implementations."""

    name = "?"
    # True where the store's own server does the work of a question (an aggregation over the
    # history), so that asking it in a thread overlaps that work with the report's; False
    # where the answer's rows are this interpreter's work (SQLite), which a thread beside the
    # report's own would only take turns with.
    answers_elsewhere = False

    def close(self):
        pass

    def count(self, window):
        """(number of pmtu results in the window, first start, last start)."""
        raise NotImplementedError

    def latest(self, window, target):
        """Iterable of Latest, one per directed path measured in the window."""
        raise NotImplementedError

    def trend(self, window, target, interval):
        """List of dicts {bucket, results, capable, configured, blackholes, unknown}: counts
        of results in each day/week bucket in each state (capable = state jumbo)."""
        raise NotImplementedError

    def gains(self, window):
        """Latest measured paired-throughput gain per directed path: list of dicts
        {source, dest, ip_version, gain, throughput_standard, throughput_jumbo, start}."""
        raise NotImplementedError

    def latency(self, window):
        """RTT (s) and loss (fraction) per directed path from latency results (the newest in
        the window; averaged per address pair for perfSONAR's own Logstash documents): list
        of tuples (source, dest, source_ip, dest_ip, rtt, loss, samples)."""
        raise NotImplementedError

    def evidence(self, window, target):
        """{path key (jumbo.archive.evidence.path_key): Evidence} of the pmtu paths with a
        partial black hole in some run of the window (jumbo.archive.evidence)."""
        return {}

    def agreement(self, window, target):
        """{path key (jumbo.archive.evidence.path_key): (runs, flows, flows_runs, flows_asked,
        asked_runs)} of the pmtu paths with runs in the `jumbo` state in the window: how many,
        the flows they measured and were asked for (sums), and how many runs gave each count
        (a run stored before the record kept a count gives none: unknown, never zero)."""
        return dict(self.agreement_rows(window, target))

    def agreement_rows(self, window, target):
        """agreement()'s answer as (path key, counts) pairs, as the store sends them: the
        report puts each on its path's record as it comes, without a map of every jumbo path
        (~110 MB for 460,000). A key may come twice, with the same counts."""
        return iter(())

    def history_self_contained(self, window):
        """True when history(..., latest=None) is cheap (the store computes the latest states
        itself), so the model can start it before reading the latest results."""
        return False

    def trend_apart(self, window):
        """True when the trend is a query of its own that does not need the latest results:
        the model then starts it while the latest results are read and hands its answer to
        history(..., trend=)."""
        return False

    def history(self, window, target, interval, limit, flap, latest, trend=None):
        """(trend, changes) in one go; `latest` is the list of the latest results' states
        already read (objects with LatestState's attributes), which lets a store find the
        paths that changed in the same pass as the trend; `trend`, when given, is trend()'s
        answer already."""
        if trend is None:
            trend = self.trend(window, target, interval)
        return trend, self.changes(window, target, limit, flap)

    def changes(self, window, target, limit, flap):
        """{changes: [{source, dest, ip_version, start, from, to, from_mtu, to_mtu,
        from_reverse_mtu, to_reverse_mtu}] newest first, the flapping paths' after the others
        (at most limit), changed_paths: n, flapping: [{source, dest, ip_version, changes}]}."""
        raise NotImplementedError
