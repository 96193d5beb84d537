"""Evidence across runs: a partial black hole seen in any run stays until enough clean flows.

A run probes a few flows, each hashed onto one ECMP member; when a quarter of the members eat
jumbo packets, 4 flows all miss them in (3/4)^4 = 32 % of the runs. The latest run alone then
flips the path between `blackhole` and `jumbo` from hour to hour, though the network never
changed. So a path's partial black hole (record field `partial`) seen in any run of the
report's window holds, whatever the later runs say, until the runs after its last sighting
have shown every flow crossing on enough flows:

    (1 - s) ** F < CONFIDENCE

F: the flows of the clean runs (see `clean`) after the last sighting, together; s: the
smallest failing share seen (blackhole_flows / flows of a sighting run). That is the chance
that F flows all missed a hole that takes a share s of the flows: below 1 in 1000, the hole
is gone. A run stored before the record kept blackhole_flows counts as 1 failing flow of its
`flows` (the smallest share it can have shown), so it asks for the most clean flows.

Both stores answer evidence(window, target) with one Evidence per sighted path (sqlite/
evidence.py: a summary table kept by a trigger, or one pass over the window; opensearch/
evidence.py: aggregations over the window's documents); the model (report/model.py) holds
the paths whose evidence is not cleared as partial black holes.
"""

import collections
import math

CONFIDENCE = 0.001
# The most flows a pmtu run probes (its spec's limit): the smallest share a run with an
# unknown number of flows can have shown.
MAX_FLOWS = 64

# seen/runs: sightings and runs in the window; first/last: the first and last sighting's
# start; share: the smallest failing share seen; ttl/ip/size: the hop and size of the newest
# sighting that located it; clean_flows: the flows of the clean runs after the last sighting.
Evidence = collections.namedtuple(
    "Evidence", "seen runs first last share ttl ip size clean_flows")


def run_share(flows, blackhole_flows):
    """The share of a sighting run's flows that failed (see the module docstring)."""
    if flows and flows > 0:
        return min(1.0, float(blackhole_flows or 1) / flows)
    return 1.0 / MAX_FLOWS


def needed_flows(share):
    """The fewest clean flows F with (1 - share) ** F < CONFIDENCE."""
    if share >= 1.0:
        return 1
    if share <= 0.0:
        return None         # never: nothing failed
    return int(math.floor(math.log(CONFIDENCE) / math.log(1.0 - share))) + 1


def cleared(evidence):
    """True when the clean flows after the last sighting rule the hole out."""
    needed = needed_flows(evidence.share)
    return needed is not None and (evidence.clean_flows or 0) >= needed


def path_key(source, dest, ip_version):
    """A pmtu path's key in the stores (jumbo.archive.record.path_key)."""
    return "%s|%s|%s|pmtu" % (source or "", dest or "", ip_version or "")


# -- a clean run: every flow carried the target --------------------------------------------
# The forward half of path_state.RULE's `jumbo`: succeeded, path MTU >= target, and none of
# the forward conditions of `blackhole` or `unknown` (the reverse direction is another
# path's flows). tests/test_archive_evidence.py checks it against the rule.

def is_clean(result, target):
    get = result.get
    return (bool(get("succeeded")) and get("path_mtu") is not None
            and get("path_mtu") >= target and not get("partial")
            and get("pmtud") not in ("blackhole", "unknown"))


def sql_clean(target, qualifier=""):
    """is_clean as one SQL condition; `target` None leaves the path MTU out (the summary
    table keeps it as a key, the target is applied when it is read)."""
    q = qualifier
    text = ("%ssucceeded = 1 AND IFNULL(%spartial, 0) = 0 AND IFNULL(%spmtud, '') "
            "NOT IN ('blackhole', 'unknown') AND %spath_mtu IS NOT NULL" % (q, q, q, q))
    if target is not None:
        text += " AND %spath_mtu >= %d" % (q, int(target))
    return text


def dsl_clean(target, prefix="jumbo."):
    """is_clean as an OpenSearch query clause."""
    return {"bool": {
        "filter": [{"term": {prefix + "succeeded": True}},
                   {"range": {prefix + "path_mtu": {"gte": int(target)}}}],
        "must_not": [{"term": {prefix + "partial": True}},
                     {"terms": {prefix + "pmtud": ["blackhole", "unknown"]}}]}}
