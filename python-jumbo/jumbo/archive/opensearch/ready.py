"""Which OpenSearch archives were found set up lately, kept across archiver processes.

pScheduler's archiver daemon ends an idle `archive` process after a minute and starts a new
one for the next record, so a check kept in memory is redone for nearly every record of a
quiet node: seven read-only requests before the first write. Against a slow archive those
alone can outlast the 2 minutes pScheduler waits for a reply. So a store found ready is
noted here, and a new process trusts the note for READY_TTL.

The note is one small JSON file in the archiver's own directory (JUMBO_CACHE_DIR, default
/var/lib/jumbo, where the default store lives and the `pscheduler` user writes): keys are
SHA-256 digests of what names the set-up (URL without login, prefix, streams flag, template
version), values the time of the check. No URL or login is written. A missing, unreadable
or damaged file only means checking again; a note never outlives READY_TTL.

The same file keeps an install's progress (Progress): that an install of an archive began
(so a new process resumes it at once instead of checking first) and the steps the archive's
own state does not show. pScheduler replaces the archiver's process after a `retry`, so on a
slow archive an install spans several processes (issue 32, row 1).
"""

import hashlib
import json
import os
import tempfile
import time

CACHE_ENV = "JUMBO_CACHE_DIR"
CACHE_DIR = "/var/lib/jumbo"
FILE_NAME = ".opensearch-ready.json"
READY_TTL = 3600.0
MAX_ENTRIES = 64
MAX_FILE_BYTES = 16384


def key(*parts):
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


def _path():
    return os.path.join(os.environ.get(CACHE_ENV) or CACHE_DIR, FILE_NAME)


def _load():
    try:
        with open(_path(), "rb") as handle:
            data = json.loads(handle.read(MAX_FILE_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items()
            if isinstance(k, str) and isinstance(v, (int, float))}


def is_ready(digest, now=None):
    noted = _load().get(digest)
    now = time.time() if now is None else now
    return noted is not None and 0 <= now - noted < READY_TTL


def note_ready(digest, now=None):
    """Note `digest` as ready now; silently nothing when the directory is not writable."""
    now = time.time() if now is None else now
    entries = {k: v for k, v in _load().items() if 0 <= now - v < READY_TTL}
    entries[digest] = now
    _save(dict(sorted(entries.items(), key=lambda item: item[1])[-MAX_ENTRIES:]))


def forget(digest):
    """Drop the note of `digest` (the set-up was found missing after all)."""
    entries = _load()
    if entries.pop(digest, None) is not None:
        _save(entries)


def _save(entries):
    try:
        fd, temp = tempfile.mkstemp(prefix=".opensearch-ready-", dir=os.path.dirname(_path()))
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(entries, handle)
        os.replace(temp, _path())  # a rename: never follows a link planted at the name
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


class Progress(object):
    """Steps of one archive's set-up noted across processes: one note per step, keyed by the
    archive's digest and the step's name, kept as long as a ready note (READY_TTL)."""

    def __init__(self, digest):
        self.digest = digest

    def done(self, step):
        return is_ready(key(self.digest, step))

    def note(self, step):
        note_ready(key(self.digest, step))

    def forget(self, step):
        forget(key(self.digest, step))
