"""The paths that changed state in a window, found in OpenSearch (jumbo.archive.opensearch
.reader's history): the documents of each path that are not in its latest state, aggregated
on the path with composite (no scripts: a bare OpenSearch has no painless); then only the
histories of those paths are read back (at most MAX_CHANGED_HISTORY) to date the changes."""

from .. import path_state
from ..evidence import path_key
from ..query_base import state_of
from .rows import iso_text, tiebreak
from .search import PAGE

MAX_CHANGED_HISTORY = 5000     # paths whose history is read back to date their changes
TERMS_CHUNK = 60000            # path keys in one terms clause


def _candidates(queries, window, target, latest):
    """Paths with a result in another state than their latest one, found in the store:
    for each latest state X, the documents of the paths whose latest state is X that are
    not in state X, aggregated on the path (composite). The largest group is written as
    'none of the other paths' so the request stays small."""
    groups = {}
    for row in latest:
        groups.setdefault(row.result_state, []).append(row)
    if not groups:
        return []
    states = path_state.filters(target)
    biggest = max(groups, key=lambda k: len(groups[k]))
    found = set()
    for clause in _clauses(groups, biggest, states):
        query = queries.window_filter(window)
        query["bool"]["filter"].append(clause)
        query["bool"]["must_not"] = [states["failed"]]
        for bucket in queries.composite(queries.pmtu, query, [{"p": {"terms": {"field": "jumbo.path"}}}],
                                      {}, "changed paths"):
            found.add(bucket["key"]["p"])
    return sorted(found)


def _keys(rows):
    # the key as the archive wrote it (a missing name is "", not "None": such a path's
    # change would be missed)
    return [path_key(row.source, row.dest, row.ip_version) for row in rows]


def _clauses(groups, biggest, states):
    """The clauses of _candidates, one at a time: each path's key is written only for the
    request that names it (718,800 keys at once were ~60 MB of the report's peak)."""
    def spelled_out(rows, st):
        for i in range(0, len(rows), TERMS_CHUNK):
            yield {"bool": {"filter": [{"terms": {"jumbo.path": _keys(rows[i:i + TERMS_CHUNK])}}],
                            "must_not": [states[st]]}}

    others = sum(len(rows) for st, rows in groups.items() if st != biggest)
    for st, rows in groups.items():
        if st != biggest:
            yield from spelled_out(rows, st)
    if others <= TERMS_CHUNK:
        must_not = [states[biggest]]
        if others:
            must_not.append({"terms": {"jumbo.path": _keys(
                row for st, rows in groups.items() if st != biggest for row in rows)}})
        yield {"bool": {"must_not": must_not}}
    else:   # very large meshes: the biggest group spelled out in chunks too
        yield from spelled_out(groups[biggest], biggest)


def changes(queries, window, target, limit, flap, latest):
    """The changes of state in the window (Queries.changes), given the latest rows."""
    changed = _candidates(queries, window, target, latest)
    # Date the changes: read back the history of the paths that changed (and only those).
    events, counts = [], {}
    for i in range(0, min(len(changed), MAX_CHANGED_HISTORY), 500):
        chunk = changed[i:i + 500]
        query = {"bool": {"filter": queries.window_range(window) + [{"terms": {"jumbo.path": chunk}}]}}
        prev = {}
        after = None
        while True:
            body = {"size": PAGE, "query": query, "track_total_hits": False,
                    "sort": [{"jumbo.path": "asc"}, {"jumbo.start": "asc"}, {"jumbo.id": "asc"}],
                    "_source": ["jumbo." + f for f in ("path", "source", "dest", "ip_version",
                                                       "start", "succeeded", "path_mtu", "pmtud",
                                                       "partial", "reverse_path_mtu",
                                                       "reverse_pmtud")]}
            if after:
                body["search_after"] = after
            parsed = queries.search(queries.pmtu, body, "change history")
            hits = parsed.get("hits", {}).get("hits", []) if parsed else []
            for hit in hits:
                src = hit["_source"]["jumbo"]
                st = state_of(src, target)
                if st == "failed":
                    continue
                key = src["path"]
                before = prev.get(key)
                # each change carries the MTUs (both directions) of the results either side of it
                prev[key] = (st, src.get("path_mtu"), src.get("reverse_path_mtu"))
                if before is not None and before[0] != st:
                    events.append({"source": src["source"], "dest": src["dest"],
                                   "ip_version": src["ip_version"], "start": iso_text(src["start"]),
                                   "from": before[0], "to": st, "from_mtu": before[1],
                                   "to_mtu": src.get("path_mtu"), "from_reverse_mtu": before[2],
                                   "to_reverse_mtu": src.get("reverse_path_mtu")})
                    c = counts.setdefault(key, [src["source"], src["dest"], src["ip_version"], 0, None])
                    c[3] += 1
                    c[4] = iso_text(src["start"])
            if len(hits) < PAGE:
                break
            after = hits[-1]["sort"]
    flapping = [{"source": c[0], "dest": c[1], "ip_version": c[2], "changes": c[3], "last_change": c[4]}
                for c in counts.values() if c[3] >= flap]
    flapping.sort(key=lambda f: (-f["changes"], f["source"], f["dest"]))
    # Newest first, the flapping paths' changes after all others: within the limit, one path
    # flapping every day cannot push out a regression of many paths.
    flaps = set((f["source"], f["dest"], f["ip_version"]) for f in flapping)
    events = sorted(tiebreak(events),
                    key=lambda e: (e["source"], e["dest"], e["ip_version"]) in flaps)
    return {"changes": events[:limit], "changed_paths": len(counts),
            "total_changes": len(events), "flapping": flapping[:limit]}
