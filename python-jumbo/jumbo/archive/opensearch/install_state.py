"""What of this suite's set-up an OpenSearch archive already holds, read in one request, so
that an install can skip every step already done (jumbo.archive.opensearch.install).

Why one request: the archiver installs the set-up itself on its first write, and pScheduler's
archiver daemon gives each record 2 minutes and replaces an `archive` process after a `retry`.
On an archive answering each request in 12 s, an install that re-reads each name one by one
(or redoes every step) never gets further than its first few steps before the process is
gone (issue 32, row 1). With the state known in one read, each try only does what is left.

The read is the cluster state's metadata, filtered to this suite's own names: its templates
(version, owner), its streams' backing indices and its indices' mapping `_meta`. It needs
`cluster:monitor/state`, which an admin who may install has; when it is refused, the same
is read in two requests that the install's own privileges allow (templates, mappings).
"""

from .layout import (JUMBO_INDICES, LEGACY_TEMPLATES, MANAGED_BY, OWNED_TEST_TYPES,
                     TEMPLATE_VERSION, templates)


class InstallState(object):
    """templates: name -> (version, managed by this suite); streams: name -> backing index
    names, oldest first; metas: index -> mapping `_meta` (None when the index has none);
    `indices`: jumbo index names that exist."""

    def __init__(self):
        self.templates = {}
        self.streams = {}
        self.metas = {}
        self.indices = set()

    def template_current(self, name):
        version, managed = self.templates.get(name, (None, False))
        return managed and version == TEMPLATE_VERSION

    def ours(self, name):
        return self.templates.get(name, (None, False))[1]

    def write_index(self, stream):
        """The stream's write index, or None when the stream does not exist."""
        names = self.streams.get(stream)
        return names[-1] if names else None

    def current(self, index):
        meta = self.metas.get(index) or {}
        return meta.get("managed-by") == MANAGED_BY and meta.get("version") == TEMPLATE_VERSION


def _names(store):
    owned = [name for name, _ in templates(store.prefix)]
    legacy = [store.name(name) for name in LEGACY_TEMPLATES]
    streams = [store.stream(t) for t in OWNED_TEST_TYPES]
    indices = [store.name(base) for base in JUMBO_INDICES]
    return owned + legacy, streams, indices


def read(store):
    """The InstallState of the archive `store` talks to."""
    template_names, streams, indices = _names(store)
    status, parsed = store.request("GET", "/_cluster/state/metadata?filter_path=" + ",".join(
        _filter_paths(template_names, streams, indices)))
    if status in (401, 403):
        return _read_apart(store, template_names, streams, indices)
    store.check(status, parsed, "reading the set-up in place")
    metadata = (parsed or {}).get("metadata") or {}
    state = InstallState()
    _read_templates(state, metadata, template_names)
    _read_streams(state, metadata, streams)
    for index, entry in (metadata.get("indices") or {}).items():
        state.metas[index] = ((entry or {}).get("mappings") or {}).get("_doc", {}).get("_meta")
        if index in indices:
            state.indices.add(index)
    return state


def _filter_paths(template_names, streams, indices):
    """The cluster state's members the set-up needs: only the suite's own."""
    paths = []
    for name in template_names:
        paths.append("metadata.index_template.index_template.%s.version" % name)
        paths.append("metadata.index_template.index_template.%s._meta" % name)
    for stream in streams:
        paths.append("metadata.data_stream.data_stream.%s.indices.index_name" % stream)
        # backing indices are .ds-<stream>-NNNNNN; the leading dot is part of the name
        paths.append("metadata.indices.*%s-*.mappings._doc._meta" % stream)
    for index in indices:
        paths.append("metadata.indices.%s.state" % index)  # every index has one: exists
        paths.append("metadata.indices.%s.mappings._doc._meta" % index)
    return paths


def _read_templates(state, metadata, template_names):
    found = ((metadata.get("index_template") or {}).get("index_template") or {})
    for name in template_names:
        if name in found:
            entry = found[name] or {}
            state.templates[name] = (entry.get("version"), _managed(entry))


def _read_streams(state, metadata, streams):
    found = ((metadata.get("data_stream") or {}).get("data_stream") or {})
    for stream in streams:
        if stream in found:
            state.streams[stream] = [entry["index_name"]
                                     for entry in (found[stream] or {}).get("indices") or []]


def _read_apart(store, template_names, streams, indices):
    """The same in two requests, when the cluster state is not readable by this user."""
    state = InstallState()
    status, parsed = store.request("GET", "/_index_template/%sjumbo_*" % store.prefix)
    if status != 404:
        store.check(status, parsed, "reading index templates")
        for entry in (parsed or {}).get("index_templates") or []:
            if entry.get("name") in template_names:
                body = entry.get("index_template") or {}
                state.templates[entry["name"]] = (body.get("version"), _managed(body))
    status, parsed = store.request(
        "GET", "/%s/_mapping?ignore_unavailable=true&allow_no_indices=true"
        % ",".join(streams + indices))
    store.check(status, parsed, "reading mappings")
    for index in sorted(parsed or {}):
        state.metas[index] = ((parsed[index] or {}).get("mappings") or {}).get("_meta")
        if index in indices:
            state.indices.add(index)
        for stream in streams:
            if index.startswith(".ds-%s-" % stream):
                state.streams.setdefault(stream, []).append(index)
    return state


def _managed(body):
    return ((body.get("_meta") or {}).get("managed-by")) == MANAGED_BY
