"""What `python3 -m jumbo.archive.opensearch.setup` does, and what the store checks at its
first write: whether the archive is set up (problems, describe), the set-up itself (install),
the copy of adoption records of the earlier layout, and the writer's least privileges.
Each takes a store (jumbo.archive.opensearch.store.OpenSearchStore) to talk through.

Size: install is over 40 lines: its steps (legacy templates out, templates, streams,
indices, rollover, the copy) must run in this order, each with its own error, and read best
in order.
"""

import json

from ..errors import PermanentError
from . import install_state
from .layout import (CHECK_COMMAND, HISTORY_INDEX, INDEX_MAPPINGS, JUMBO_INDICES,
                     LEGACY_TEMPLATES, MANAGED_BY, OWNED_TEST_TYPES, SETUP_COMMAND,
                     TEMPLATE_VERSION, WRITER_ROLE, templates)


# The install's step that the archive's state does not show (see install()).
MIGRATED = "migrated-earlier-layout"


def writer_role(prefix=""):
    """The least privileges the archiver's user needs (OpenSearch security plugin role).

    _bulk is checked at cluster level (`indices:data/write/bulk`) and then per index.
    perfSONAR's shipped `pscheduler_writer` role has no cluster permission and nothing on
    jumbo_*, so it is not enough on its own.
    """
    streams = [prefix + "pscheduler_" + t for t in OWNED_TEST_TYPES]
    return {
        "cluster_permissions": ["indices:data/write/bulk", "cluster:monitor/main"],
        "index_permissions": [
            {"index_patterns": streams + [prefix + i for i in JUMBO_INDICES],
             "allowed_actions": ["indices:data/write/bulk*", "indices:data/write/index",
                                 "indices:admin/mappings/get"]},
            {"index_patterns": streams,
             "allowed_actions": ["indices:admin/data_stream/get"]},
            {"index_patterns": [prefix + i for i in JUMBO_INDICES],
             "allowed_actions": ["indices:data/read/search"]},
        ],
    }


def _meta_current(mappings):
    meta = (mappings or {}).get("_meta") or {}
    return meta.get("managed-by") == MANAGED_BY and meta.get("version") == TEMPLATE_VERSION


def _write_index(parsed):
    """The newest backing index of a data stream's _mapping answer (.ds-NAME-00000N)."""
    names = sorted(parsed or {})
    return names[-1] if names else None


def problems(store, quick=True):
    """What is missing or stale, as (what, name, detail); empty when ready.
    Read-only requests that the writer role allows: two when everything is in place (one
    record's reply must fit in pScheduler's 2 minutes even on a slow archive), else one or
    two per name, to say which is missing or refused."""
    if quick and ready_at_once(store):
        return []
    return _problems_one_by_one(store)


def ready_at_once(store):
    """True if every owned stream uses its template and every write index and jumbo index
    carries the current mapping version; False when that cannot be told in two requests (a
    name missing, a privilege refused: the detailed check says which)."""
    write_indices = []
    if store.pscheduler_streams:
        wanted = {store.stream(t): store.name("jumbo_pscheduler_" + t) for t in OWNED_TEST_TYPES}
        status, parsed = store.request("GET", "/_data_stream/" + ",".join(sorted(wanted)))
        if status != 200:
            return False
        found = {entry.get("name"): entry for entry in (parsed or {}).get("data_streams") or []}
        for stream, template in wanted.items():
            entry = found.get(stream) or {}
            if entry.get("template") != template or not entry.get("indices"):
                return False
            write_indices.append(entry["indices"][-1]["index_name"])
    names = write_indices + [store.name(base) for base in JUMBO_INDICES]
    status, parsed = store.request("GET", "/%s/_mapping?filter_path=*.mappings._meta"
                                   % ",".join(names))
    if status != 200:
        return False
    return all(_meta_current(((parsed or {}).get(name) or {}).get("mappings")) for name in names)


def _problems_one_by_one(store):
    found = []
    if store.pscheduler_streams:
        for ptype in OWNED_TEST_TYPES:
            stream = store.stream(ptype)
            template = store.name("jumbo_pscheduler_" + ptype)
            status, parsed = store.request("GET", "/_data_stream/" + stream)
            if status == 403:
                found.append(("privilege", stream, "HTTP %d on GET _data_stream" % status))
                continue
            if status == 404:
                found.append(("missing", stream, "data stream does not exist"))
                continue
            store.check(status, parsed, "reading data stream %s" % stream)
            streams = (parsed or {}).get("data_streams") or [{}]
            if streams[0].get("template") != template:
                found.append(("stale", stream, "data stream uses template %r, not %r"
                              % (streams[0].get("template"), template)))
                continue
            status, parsed = store.request("GET", "/%s/_mapping" % stream)
            if status == 403:
                found.append(("privilege", stream, "HTTP %d on GET _mapping" % status))
                continue
            store.check(status, parsed, "reading mapping of %s" % stream)
            index = _write_index(parsed)
            if not _meta_current(parsed[index]["mappings"]):
                found.append(("stale", stream, "write index %s predates template version %d"
                              % (index, TEMPLATE_VERSION)))
    for base in JUMBO_INDICES:
        index = store.name(base)
        status, parsed = store.request("GET", "/%s/_mapping" % index)
        if status == 403:
            found.append(("privilege", index, "HTTP %d on GET _mapping" % status))
        elif status == 404:
            found.append(("missing", index, "index does not exist"))
        else:
            store.check(status, parsed, "reading mapping of %s" % index)
            if not _meta_current((parsed or {}).get(index, {}).get("mappings")):
                found.append(("stale", index, "mapping predates version %d" % TEMPLATE_VERSION))
    return found


def describe(store, found):
    lines = ["OpenSearch at %s is not set up for the jumbo archiver:" % store.url]
    lines.extend("  %s: %s (%s)" % (name, detail, what) for what, name, detail in found)
    if any(what == "privilege" for what, _, _ in found):
        lines.append("The archive user lacks privileges: give it the role `%s` "
                     "(python3 -m jumbo.archive.opensearch.setup role prints it)." % WRITER_ROLE)
    lines.append("An admin runs once: %s" % SETUP_COMMAND)
    lines.append("Check with: %s" % CHECK_COMMAND)
    return "\n".join(lines)


def install(store, progress=None):
    """Install/upgrade what this suite owns (see the module docstring). Returns the actions
    taken; raises PermanentError when refused (HTTP 401/403) or on any other failure.

    Resumable: what is in place is read first in one request (install_state), and only what
    is missing or stale is done, each step on its own, so a try cut short (the archiver's
    process replaced after its `retry`) leaves progress the next try builds on. Writes that
    find their work done (a stream or index another process created meanwhile) count as
    done. `progress` (jumbo.archive.opensearch.ready.Progress) keeps the one step the
    archive's state does not show, the copy of records of the earlier layout, across
    processes; without it the copy runs every time (it copies nothing twice)."""
    done = []
    state = install_state.read(store)
    for legacy in LEGACY_TEMPLATES:
        name = store.name(legacy)
        if state.ours(name):
            _retire_legacy(store, name)
            done.append("removed legacy template %s (it matched perfSONAR's streams)" % name)
    for name, body in templates(store.prefix):
        if state.template_current(name):
            continue
        status, parsed = store.request("PUT", "/_index_template/" + name, body)
        store.check(status, parsed, "installing index template %s" % name)
        done.append("template %s (version %d)" % (name, TEMPLATE_VERSION))
    for ptype in OWNED_TEST_TYPES:
        stream = store.stream(ptype)
        write_index = state.write_index(stream)
        if write_index is None:
            status, parsed = store.request("PUT", "/_data_stream/" + stream)
            if not _already_exists(status, parsed):
                store.check(status, parsed, "creating data stream %s" % stream)
                done.append("created data stream %s" % stream)
        elif not state.current(write_index):
            status, parsed = store.request("POST", "/%s/_rollover" % stream)
            store.check(status, parsed, "rolling over %s" % stream)
            done.append("rolled %s over to %s (new write index on the current template)"
                        % (stream, parsed.get("new_index")))
    for base in JUMBO_INDICES:
        index = store.name(base)
        if index not in state.indices:
            status, parsed = store.request("PUT", "/" + index)
            if not _already_exists(status, parsed):
                store.check(status, parsed, "creating index %s" % index)
                done.append("created index %s" % index)
        elif not state.current(index):
            mapping = INDEX_MAPPINGS[base]
            status, parsed = store.request("PUT", "/%s/_mapping" % index,
                                           {"_meta": mapping["_meta"],
                                            "properties": mapping["properties"]})
            store.check(status, parsed, "updating mapping of %s" % index)
            done.append("updated mapping of %s" % index)
    if progress is None or not progress.done(MIGRATED):
        moved = migrate_legacy_records(store)
        if progress is not None:
            progress.note(MIGRATED)
        if moved:
            done.append("copied %d adoption record(s) of the earlier layout (jumbo.* inside "
                        "pscheduler_* documents) into %s" % (moved, store.name(HISTORY_INDEX)))
    return done


def _already_exists(status, parsed):
    return status == 400 and "already_exists" in json.dumps(parsed or {})


def _retire_legacy(store, name):
    """Remove an earlier version's template of ours that matched perfSONAR's streams."""
    status, parsed = store.request("GET", "/_index_template/" + name)
    if status == 404:
        return
    store.check(status, parsed, "reading template %s" % name)
    for entry in (parsed or {}).get("index_templates", []):
        meta = entry.get("index_template", {}).get("_meta") or {}
        if meta.get("managed-by") != MANAGED_BY:
            continue
        status, parsed = store.request("DELETE", "/_index_template/" + name)
        if status == 400 and "in use by" in json.dumps(parsed):
            # perfSONAR's streams still resolve to it (it outranks theirs): point it at a
            # name nothing has, so theirs applies again, then drop it
            body = dict(entry["index_template"],
                        index_patterns=[store.name("jumbo-retired-" + name[len(store.prefix):])])
            status, parsed = store.request("PUT", "/_index_template/" + name, body)
            store.check(status, parsed, "retiring legacy template %s" % name)
            status, parsed = store.request("DELETE", "/_index_template/" + name)
        store.check(status, parsed, "removing legacy template %s" % name)


def migrate_legacy_records(store, page=1000):
    """Earlier versions of this suite kept the adoption record as `jumbo.*` inside the
    pscheduler_<type> documents (also in perfSONAR's streams). Copy those records into
    jumbo_history (same _id = record id, `create`: running it again copies nothing twice).
    Only reads the pscheduler_* streams; the old documents stay where they are and age out
    with perfSONAR's retention. A scroll and _bulk, not _reindex (not every node has it)."""
    source = store.name("pscheduler_*")
    target = store.name(HISTORY_INDEX)
    copied = 0
    # a scroll in index order: the old `jumbo.id` may be a text field (dynamic mapping),
    # which cannot be sorted on
    query = {"size": page, "query": {"exists": {"field": "jumbo.id"}},
             "_source": ["@timestamp", "jumbo"], "sort": ["_doc"]}
    status, parsed = store.request(
        "POST", "/%s/_search?scroll=1m&ignore_unavailable=true&allow_no_indices=true" % source,
        query)
    store.check(status, parsed, "reading records of the earlier layout")
    scroll_id = parsed.get("_scroll_id")
    try:
        while True:
            hits = parsed["hits"]["hits"]
            if not hits:
                return copied
            lines = []
            for hit in hits:
                record = hit["_source"]["jumbo"]
                lines.append(json.dumps({"create": {"_index": target, "_id": record["id"]}}))
                lines.append(json.dumps({"@timestamp": hit["_source"].get("@timestamp")
                                         or record.get("start"), "jumbo": record}))
            for item in store.bulk(lines, len(hits)):
                if item.get("status") in (200, 201):
                    copied += 1
                elif item.get("status") != 409:
                    raise PermanentError("copying %s into %s: %s"
                                         % (item.get("_id"), target, json.dumps(item)[:300]))
            status, parsed = store.request("POST", "/_search/scroll",
                                           {"scroll": "1m", "scroll_id": scroll_id})
            store.check(status, parsed, "reading records of the earlier layout")
            scroll_id = parsed.get("_scroll_id") or scroll_id
    finally:
        if scroll_id:
            store.request("DELETE", "/_search/scroll", {"scroll_id": [scroll_id]})
