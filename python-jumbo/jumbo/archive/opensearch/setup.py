"""One-time set-up of an OpenSearch archive for the jumbo archiver, and its check.

    python3 -m jumbo.archive.opensearch.setup install --url https://ADMIN:PW@archive:9200
    python3 -m jumbo.archive.opensearch.setup check   --url https://WRITER:PW@archive:9200
    python3 -m jumbo.archive.opensearch.setup role    # the writer role (body of
                                          # PUT _plugins/_security/api/roles/jumbo_writer)

`install` (an admin, once, and after an upgrade that changes TEMPLATE_VERSION):
removes templates of earlier versions of this suite that matched perfSONAR's streams,
installs this suite's own templates (pscheduler_<type> for OWNED_TEST_TYPES, and the
jumbo_* indices), creates the owned data streams and jumbo_* indices, and rolls an
owned stream over when its write index was created without the current template
(e.g. Logstash wrote the first pmtu document before set-up), and copies adoption
records of the earlier layout (`jumbo.*` inside pscheduler_* documents) into
jumbo_history. It changes nothing of perfSONAR's (those documents are only read).
Needs: cluster `cluster_manage_index_templates` and `indices:data/write/bulk`; on the owned
streams and jumbo_*: `create_index`, `indices:admin/data_stream/create`,
`indices:admin/rollover`, `indices:admin/mapping/put`, `indices:admin/mappings/get`,
`indices:admin/data_stream/get`, write; read on pscheduler_* for the copy of earlier records
(perfSONAR's `admin` user has them all).

`check` (with the archiver's own credentials; read-only requests) says whether every
owned stream and index is in place with the current mapping, and how many runs were
rejected (jumbo_rejected). Exit 0 when ready, 1 when not (with what to do), 2 when the
archive cannot be reached or the arguments are wrong.

Size: install is over 60 lines: its steps (legacy templates out, templates, streams,
indices, rollover) must run in this order, each with its own error, and read best in order.
"""

import argparse
import json
import os
import sys

from ..errors import PermanentError, StoreError
from ..urls import check_url
from .store import (CHECK_COMMAND, HISTORY_INDEX, JUMBO_INDICES, LEGACY_TEMPLATES,
                    MANAGED_BY, OWNED_TEST_TYPES, SETUP_COMMAND, TEMPLATE_VERSION,
                    OpenSearchStore)

WRITER_ROLE = "jumbo_writer"


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


def problems(store):
    """What is missing or stale, as (what, name, detail); empty when ready.
    Read-only requests that the writer role allows."""
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
            store._check(status, parsed, "reading data stream %s" % stream)
            streams = (parsed or {}).get("data_streams") or [{}]
            if streams[0].get("template") != template:
                found.append(("stale", stream, "data stream uses template %r, not %r"
                              % (streams[0].get("template"), template)))
                continue
            status, parsed = store.request("GET", "/%s/_mapping" % stream)
            if status == 403:
                found.append(("privilege", stream, "HTTP %d on GET _mapping" % status))
                continue
            store._check(status, parsed, "reading mapping of %s" % stream)
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
            store._check(status, parsed, "reading mapping of %s" % index)
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


def install(store):
    """Install/upgrade what this suite owns (see the module docstring). Returns the actions
    taken; raises PermanentError when refused (HTTP 401/403) or on any other failure."""
    done = []
    for legacy in LEGACY_TEMPLATES:
        name = store.name(legacy)
        status, parsed = store.request("GET", "/_index_template/" + name)
        if status == 200:
            for entry in (parsed or {}).get("index_templates", []):
                meta = entry.get("index_template", {}).get("_meta") or {}
                if meta.get("managed-by") == MANAGED_BY:
                    status, parsed = store.request("DELETE", "/_index_template/" + name)
                    if status == 400 and "in use by" in json.dumps(parsed):
                        # perfSONAR's streams still resolve to it (it outranks theirs):
                        # point it at a name nothing has, so theirs applies again, then drop it
                        body = dict(entry["index_template"],
                                    index_patterns=[store.name("jumbo-retired-" + legacy)])
                        status, parsed = store.request("PUT", "/_index_template/" + name, body)
                        store._check(status, parsed, "retiring legacy template %s" % name)
                        status, parsed = store.request("DELETE", "/_index_template/" + name)
                    store._check(status, parsed, "removing legacy template %s" % name)
                    done.append("removed legacy template %s (it matched perfSONAR's streams)"
                                % name)
        elif status != 404:
            store._check(status, parsed, "reading template %s" % name)
    for name, body in store.templates():
        status, parsed = store.request("PUT", "/_index_template/" + name, body)
        store._check(status, parsed, "installing index template %s" % name)
        done.append("template %s (version %d)" % (name, TEMPLATE_VERSION))
    for ptype in OWNED_TEST_TYPES:
        stream = store.stream(ptype)
        status, parsed = store.request("GET", "/_data_stream/" + stream)
        if status == 404:
            status, parsed = store.request("PUT", "/_data_stream/" + stream)
            store._check(status, parsed, "creating data stream %s" % stream)
            done.append("created data stream %s" % stream)
            continue
        store._check(status, parsed, "reading data stream %s" % stream)
        status, parsed = store.request("GET", "/%s/_mapping" % stream)
        store._check(status, parsed, "reading mapping of %s" % stream)
        if not _meta_current(parsed[_write_index(parsed)]["mappings"]):
            status, parsed = store.request("POST", "/%s/_rollover" % stream)
            store._check(status, parsed, "rolling over %s" % stream)
            done.append("rolled %s over to %s (new write index on the current template)"
                        % (stream, parsed.get("new_index")))
    for base in JUMBO_INDICES:
        index = store.name(base)
        status, parsed = store.request("GET", "/%s/_mapping" % index)
        if status == 404:
            status, parsed = store.request("PUT", "/" + index)
            if not (status == 400 and "already_exists" in json.dumps(parsed or {})):
                store._check(status, parsed, "creating index %s" % index)
                done.append("created index %s" % index)
            continue
        store._check(status, parsed, "reading mapping of %s" % index)
        if not _meta_current((parsed or {}).get(index, {}).get("mappings")):
            from .store import INDEX_MAPPINGS
            mapping = INDEX_MAPPINGS[base]
            status, parsed = store.request("PUT", "/%s/_mapping" % index,
                                           {"_meta": mapping["_meta"],
                                            "properties": mapping["properties"]})
            store._check(status, parsed, "updating mapping of %s" % index)
            done.append("updated mapping of %s" % index)
    moved = migrate_legacy_records(store)
    if moved:
        done.append("copied %d adoption record(s) of the earlier layout (jumbo.* inside "
                    "pscheduler_* documents) into %s" % (moved, store.name(HISTORY_INDEX)))
    return done


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
    store._check(status, parsed, "reading records of the earlier layout")
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
            for item in store._bulk(lines, len(hits)):
                if item.get("status") in (200, 201):
                    copied += 1
                elif item.get("status") != 409:
                    raise PermanentError("copying %s into %s: %s"
                                         % (item.get("_id"), target, json.dumps(item)[:300]))
            status, parsed = store.request("POST", "/_search/scroll",
                                           {"scroll": "1m", "scroll_id": scroll_id})
            store._check(status, parsed, "reading records of the earlier layout")
            scroll_id = parsed.get("_scroll_id") or scroll_id
    finally:
        if scroll_id:
            store.request("DELETE", "/_search/scroll", {"scroll_id": [scroll_id]})


def _open(args):
    auth = None
    if args.user:
        password = os.environ.get("JUMBO_OPENSEARCH_PASSWORD")
        if args.password_file:
            with open(args.password_file) as f:
                password = f.read().strip()
        if password is None:
            raise ValueError("--user needs --password-file or JUMBO_OPENSEARCH_PASSWORD")
        auth = (args.user, password)
    if check_url(args.url).scheme == "sqlite":
        raise ValueError("set-up concerns an OpenSearch archive, not %s" % args.url)
    return OpenSearchStore.from_url(args.url, auth=auth, verify_ssl=not args.insecure,
                                    ca_file=args.ca_file, prefix=args.prefix,
                                    manage_templates=False,
                                    pscheduler_streams=not args.jumbo_indices_only)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m jumbo.archive.opensearch.setup",
        description="Set up (install) or check an OpenSearch archive for the jumbo archiver.")
    parser.add_argument("action", choices=("install", "check", "role"))
    parser.add_argument("--url", help="http(s)://[user:pass@]HOST[:PORT][/base-path]")
    parser.add_argument("--user", help="basic-auth user (password from --password-file or "
                                       "the environment variable JUMBO_OPENSEARCH_PASSWORD)")
    parser.add_argument("--password-file")
    parser.add_argument("--ca-file", help="CA bundle to trust (e.g. the archive's own CA)")
    parser.add_argument("--insecure", action="store_true", help="do not verify TLS")
    parser.add_argument("--prefix", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--jumbo-indices-only", action="store_true",
                        help="the archive data sets \"pscheduler-streams\": false")
    args = parser.parse_args(argv)
    if args.action == "role":
        print(json.dumps(writer_role(args.prefix or ""), indent=2))
        return 0
    if not args.url:
        parser.error("--url is required for %s" % args.action)
    try:
        store = _open(args)
    except (ValueError, OSError) as err:
        print("jumbo setup: %s" % err, file=sys.stderr)
        return 2
    try:
        if args.action == "install":
            for line in install(store):
                print(line)
        found = problems(store)
        if found:
            print(describe(store, found), file=sys.stderr)
            return 1
        count, recent = store.rejected()
        print("ready: %s (template version %d)" % (store.url, TEMPLATE_VERSION))
        print("rejected runs recorded in %s: %d" % (store.name("jumbo_rejected"), count))
        for entry in recent[:10]:
            print("  %s run %s: %s field %s" % (entry.get("@timestamp"), entry.get("run_id"),
                                               entry.get("stream"), entry.get("field")))
        return 0
    except PermanentError as err:
        print("jumbo setup: %s" % err, file=sys.stderr)
        if args.action == "install":
            print("install needs an admin user (see: python3 -m jumbo.archive.opensearch.setup --help)",
                  file=sys.stderr)
        return 1
    except StoreError as err:
        print("jumbo setup: %s" % err, file=sys.stderr)
        return 2
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main())
