"""jumbo-alarms' state: which events were raised, written out and indexed, kept so that runs
that overlap (cron) or fail half-way never raise an event twice.

The lock      `<state>.lock` beside the state, an fcntl lock held from reading the state to
              saving it: runs that overlap take turns (a run waits up to `wait` seconds,
              then ends with status 3 and does nothing).
The state     {"version": 2, "active": {key id: entry}}: one entry per event whose condition
              still holds; the key id is the SHA-224 of the event's key (what it is about),
              the entry's `alarm_id` that of the key and the time it was raised, so an alarm
              that clears and comes back is a new alarm (a new document), and the same one
              while it holds. An entry records `emitted` (its line written) and `indexed`
              (True once stored, False while owed, None when the run had no --index).
              Version 1 files (alarm_id = key id, no record of either) load as all done.
Guarantees    the JSON lines: at least once. The state is saved (atomically) right after
              the lines are written, so only a crash between the two writes them again;
              never losing an alarm is worth more than a duplicate line, which a reader can
              recognise by its alarm_id. The index: exactly once. Documents are created
              under their alarm_id (a second create of the same one is a 409, already
              there); an event whose indexing failed stays owed in the state and is indexed
              by the next run, without its line being written again.
Files         read and written without following a symbolic link planted at their names:
              the state through safe_output.write_atomic (a temporary file made O_EXCL
              beside it, then renamed), the lines appended through O_NOFOLLOW. The lines are
              appended in place, not replaced: a log shipper that follows the file by its
              inode would read a replaced file again from its start, every event twice.
"""

import errno
import fcntl
import hashlib
import json
import os
import stat
import time

from .errors import ReportError
from .safe_output import write_atomic

VERSION = 2
MAX_STATE = 16 * 1024 * 1024


class Lock(object):
    """The fcntl lock on `<state>.lock`, held while the object is open (a context manager)."""

    def __init__(self, state_path, wait=600.0):
        self.path = state_path + ".lock"
        self.wait = wait
        self.fd = None

    def __enter__(self):
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as err:
            raise ReportError("--state: cannot open the lock file %s: %s" % (self.path, _why(err)))
        ends = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError as err:
                if err.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= ends:
                    self.__exit__()
                    raise ReportError("--state: another jumbo-alarms run held %s for %g s; this "
                                      "run did nothing" % (self.path, self.wait), status=3)
                time.sleep(0.1)

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)                 # releases the lock
            self.fd = None


def _why(err):
    return "a symbolic link (refused)" if err.errno == errno.ELOOP else (err.strerror or str(err))


def load(path):
    """{key id: entry}; {} when there is no state yet."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ENOENT:
            return {}
        raise ReportError("--state %s: unreadable (%s)" % (path, _why(err)))
    try:
        with os.fdopen(fd, "rb") as handle:
            doc = json.loads(handle.read(MAX_STATE + 1).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as err:
        raise ReportError("--state %s: unreadable (%s); move it away to start afresh"
                          % (path, str(err)[:200]))
    active = doc.get("active") if isinstance(doc, dict) else None
    if not isinstance(active, dict) or doc.get("version") not in (1, VERSION) or not all(
            isinstance(k, str) and isinstance(v, dict) for k, v in active.items()):
        raise ReportError("--state %s: not a jumbo-alarms state file" % path)
    if doc["version"] == 1:
        return dict((k, {"alarm_id": k, "raised": v.get("raised"), "event": v.get("event"),
                         "emitted": True, "indexed": True}) for k, v in active.items())
    for key, entry in active.items():
        if not (isinstance(entry.get("alarm_id"), str) and isinstance(entry.get("emitted"), bool)
                and entry.get("indexed") in (True, False, None)
                and (entry["indexed"] is not False or isinstance(entry.get("event"), dict))):
            raise ReportError("--state %s: entry %s is not a jumbo-alarms state entry"
                              % (path, key[:60]))
    return active


def key_id(key):
    return hashlib.sha224(",".join(str(k) for k in key).encode("utf-8")).hexdigest()


def reconcile(active, current, now, index):
    """The state after this run's events `current` ([(key, event)]), raised at `now` (ISO):
    (new active, [key ids whose line is owed], [key ids owed to the index, the cleared ones
    still owed included]). Each event's source.alarm_id is set (kept while it holds)."""
    after = {}
    for key, event in current:
        kid = key_id(key)
        entry = active.get(kid)
        if entry is None:
            entry = {"raised": now, "alarm_id": key_id(tuple(key) + (now,)), "emitted": False,
                     "indexed": False if index else None}
        entry = dict(entry, event=event)
        event["source"]["alarm_id"] = entry["alarm_id"]
        after[kid] = entry
    owed_lines = []
    for key, _event in current:
        kid = key_id(key)
        if not after[kid]["emitted"] and kid not in owed_lines:
            owed_lines.append(kid)
    owed_index = []
    if index:
        owed_index = sorted(k for k, e in after.items() if e["indexed"] is False) + sorted(
            k for k, e in active.items() if k not in after and e.get("indexed") is False)
    return after, owed_lines, owed_index


def save(path, active):
    """The state written atomically; an entry keeps its event only while it is owed to the
    index (what the next run needs to index it), so a state stays small and, on the same
    data, unchanged."""
    kept = dict((k, dict((f, v) for f, v in e.items() if f != "event" or e.get("indexed") is False))
                for k, e in active.items())
    write_atomic(path, json.dumps({"version": VERSION, "active": kept}, indent=1,
                                  sort_keys=True) + "\n")


def append_lines(path, text):
    """`text` appended to `path` (created 0666 & ~umask), refusing a link at its name or
    anything that is not a regular file; one write, under the run's lock."""
    try:
        # O_NONBLOCK: a FIFO planted there fails at once instead of holding the run
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                     | os.O_NONBLOCK, 0o666)
    except OSError as err:
        raise ReportError("--out %s: %s" % (path, _why(err)))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ReportError("--out %s: not a regular file" % path)
        data = text.encode("utf-8")
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
    finally:
        os.close(fd)
