"""One directed path of one IP family, as the report judges it: the per-path record.

`PathRecord` is the one place a path's verdict lives. The model (model.py) makes one per
(source, dest, ip_version) from the store's latest results of both directions; the culprit
pass (culprits.py) fills in what limits it; every section of the report counts these records,
and the JSON and CSV outputs list them (`paths`) for tools outside the report (the ranked
action list, external ticketing). `as_dict()` is that listing's schema, in FIELDS order.

A path's `state` is the result rule (jumbo.archive.path_state) over both directions, with one
state of the report's own: `jumbo-one-way`, a path whose forward direction carries the target
but whose reverse direction was never measured (no reflector answer, no result of the reverse
path). It is not capable: a path is capable only when both directions were measured.

How sure a `jumbo` (or `jumbo-one-way`) verdict is: its jumbo runs in the window, the flows
they were asked for and measured, the odds an ECMP member was missed and the word for it
(confidence.py; None on paths that are not jumbo, "unknown" where a flow count was not stored).
"""

import collections

FAMILY = {4: "IPv4", 6: "IPv6"}

FIELDS = ("source", "dest", "ip_version", "family", "source_site", "dest_site", "state",
          "capable", "path_mtu", "reverse_path_mtu", "reverse_measured", "pmtud", "blackhole",
          "partial", "culprit_hop_ip", "culprit_hop_ttl", "culprit_kind", "limiting_host",
          "limiting_host_mtu", "last_measured", "jumbo_runs", "flows_asked", "flows_measured",
          "missed_member_odds", "confidence")


def family(ip_version):
    """'IPv4' / 'IPv6' (or '-' when the record carries none): a path's family as shown."""
    return FAMILY.get(ip_version, "-")


class PathRecord(object):
    """One directed path's latest state (compact: there may be 720,000 of them). It is the
    path's only object in the report: the fields of its latest row the report reads after
    judging it are copied in (the row itself is let go: a second object per path was ~170 MB
    of the report's peak at 718,800 paths)."""
    __slots__ = ("source", "dest", "ip_version", "source_site", "dest_site", "start", "path_mtu",
                 "reverse_path_mtu", "reverse_known", "local_mtu", "pmtud", "partial", "blackhole",
                 "reverse_blackhole", "capable", "state", "failing", "succeeded",
                 "source_ip", "dest_ip", "blackhole_ttl", "blackhole_ip", "blackhole_size", "hops",
                 "reverse_pmtud", "result_state", "jumbo_counts", "culprit", "limiting_host", "confidence")

    def __init__(self, source, dest, ip_version, source_site, dest_site, start, path_mtu,
                 reverse_path_mtu, reverse_known, local_mtu, pmtud, partial, blackhole,
                 reverse_blackhole, capable, state, failing, succeeded, row=None):
        self.source = source
        self.dest = dest
        self.ip_version = ip_version
        self.source_site = source_site
        self.dest_site = dest_site
        self.start = start
        self.path_mtu = path_mtu
        self.reverse_path_mtu = reverse_path_mtu
        # True when the reverse direction was measured (an MTU or a black hole of it is known).
        self.reverse_known = reverse_known
        self.local_mtu = local_mtu
        self.pmtud = pmtud
        self.partial = partial
        self.blackhole = blackhole
        self.reverse_blackhole = reverse_blackhole
        self.capable = capable
        self.state = state
        self.failing = failing
        self.succeeded = succeeded
        # From the latest row (query_base.Latest): the ends' addresses, where the black hole
        # is, the hops (JSON text, or None on a path that carries the target), the reverse
        # direction's PMTUD as the reflector saw it.
        self.source_ip = self.dest_ip = self.blackhole_ttl = self.blackhole_ip = None
        self.blackhole_size = self.hops = self.reverse_pmtud = None
        # The state of the latest result alone (path_state.state_of), as the history compares
        # the path's runs with it: set by the model where the store's history asks for it.
        self.result_state = None
        # The store's counts of the path's jumbo runs (confidence.take_counts), until
        # confidence.attach makes them its `confidence`.
        self.jumbo_counts = None
        if row is not None:
            self.take_row(row)
        # Filled by culprits.locate: (kind, hop ip, hop ttl, hop mtu) of the hop that limits
        # the path, and (host, its interface MTU) when an end host's own MTU does.
        self.culprit = None
        self.limiting_host = None
        # Filled by confidence.attach on jumbo paths: (jumbo runs, flows asked, flows
        # measured, odds of a missed ECMP member, "high" | "low" | "unknown").
        self.confidence = None

    @classmethod
    def unjudged(cls, row, source_site, dest_site):
        """A path as its latest row (query_base.Latest) says, before the model judges it over
        both directions: path_mtu, pmtud, partial, succeeded and reverse_path_mtu (the
        reflector's) are the row's own until then."""
        p = cls.__new__(cls)
        p.source, p.dest, p.ip_version = row.source, row.dest, row.ip_version
        p.source_site, p.dest_site, p.start = source_site, dest_site, row.start
        p.path_mtu, p.reverse_path_mtu, p.local_mtu = row.path_mtu, row.reverse_path_mtu, row.local_mtu
        p.pmtud, p.partial, p.succeeded = row.pmtud, row.partial, row.succeeded
        p.take_row(row)
        p.reverse_known = p.blackhole = p.reverse_blackhole = p.capable = None
        p.state = p.failing = p.result_state = p.jumbo_counts = None
        p.culprit = p.limiting_host = p.confidence = None
        return p

    def take_row(self, row):
        self.source_ip, self.dest_ip = row.source_ip, row.dest_ip
        self.blackhole_ttl, self.blackhole_ip = row.blackhole_ttl, row.blackhole_ip
        self.blackhole_size, self.hops = row.blackhole_size, row.hops
        self.reverse_pmtud = row.reverse_pmtud

    def __getitem__(self, name):
        return getattr(self, name)

    def key(self):
        return (self.source, self.dest, self.ip_version)

    @property
    def family(self):
        return family(self.ip_version)

    def label(self):
        """'src -> dest IPv4': how every table and CSV key names the path."""
        return "%s -> %s %s" % (self.source, self.dest, family(self.ip_version))

    def values(self):
        """The record's values in FIELDS order."""
        c = self.culprit or (None, None, None, None)
        h = self.limiting_host or (None, None)
        k = self.confidence or (None, None, None, None, None)
        return (self.source, self.dest, self.ip_version, family(self.ip_version), self.source_site,
                self.dest_site, self.state, self.capable, self.path_mtu, self.reverse_path_mtu,
                self.reverse_known, self.pmtud, self.blackhole, self.partial, c[1], c[2], c[0],
                h[0], h[1], self.start) + tuple(k)

    def as_dict(self):
        return collections.OrderedDict(zip(FIELDS, self.values()))

    def __eq__(self, other):
        return isinstance(other, PathRecord) and self.values() == other.values()

    def __ne__(self, other):
        return not self == other

    __hash__ = None
