"""The `jumbo` archiver: archive data validation and the long-lived `archive` stream.

Archive data (schema 1), every key optional:

  schema        1
  _url          the store: sqlite:///PATH or http(s)://[user:pass@]HOST[:PORT][/path][?prefix=P]
                (private: may carry credentials). Absent: the embedded default store
                sqlite:////var/lib/jumbo/jumbo.db (env JUMBO_DEFAULT_STORE overrides).
  _auth         {"username": "...", "password": "..."}  HTTP basic auth for OpenSearch
  _api-key      "..."  sent as "Authorization: ApiKey ..." (not together with _auth)
  verify-ssl    boolean, default true (TLS certificate and host name checked)
  ca-file       path of a CA bundle to trust for https (e.g. the archive's self-signed CA)
  timeout       ISO 8601 duration of one whole request, default PT30S, at most PT1M; a
                record's writes end within RECORD_DEADLINE whatever this says (pScheduler
                waits 2 minutes for each reply)
  pscheduler-streams  boolean, default true (OpenSearch only): also store this suite's own
                test types (pmtu) in perfSONAR's layout in pscheduler_<type>. Set false where
                perfSONAR's http archiver already sends these runs through Logstash, so each
                run is there once; the jumbo_* indices are written either way.
  retry-policy  [{"attempts": N, "wait": "PT..."}], pScheduler's RetryPolicy; default
                DEFAULT_RETRY_POLICY: 5 x PT1M, then 6 x PT10M, then 12 x PT1H
                (about 13 h of trying; set the archive `ttl` to match)

The `archive` method reads RFC 7464 records from stdin until EOF and writes one
RFC 7464 reply per record, in order, flushed. Records that are already waiting
on stdin are written to their store in one batch (one bulk request / one SQLite
transaction, at most BATCH_MAX records) and each gets its own reply once stored;
pScheduler itself sends one record at a time, so nothing waits for a batch to fill.

Replies: {"succeeded": true}; a transient failure (store down, timeout, HTTP 429/5xx,
database locked, OpenSearch archive not set up or privileges refused: the error names
the set-up command) {"succeeded": false, "error": ..., "retry": "PT..."} as long as the
retry policy allows for the record's `attempts`; a permanent failure (bad
credentials, TLS verification, mapping conflict: the error names the run and the
field, malformed record, unknown test type, invalid data) {"succeeded": false,
"error": ...} without `retry`. A failure to update the latest-per-path index never
fails a run whose history was stored.

The data's schema and checks are jumbo.archive.archive_data, the records' parsing
jumbo.archive.envelope (both re-exported here). Size: serve is over 60 lines: the stream's
one loop (read, batch, store, answer, retry), kept whole so its flushing and retry order can
be read at once.
"""

import gc
import json
import os
import sys
import threading
import time

from . import store_cache
from .stores import open_store
from .archive_data import (DATA_V1, DATA_VERSIONS, DEFAULT_RETRY_POLICY, DEFAULT_TIMEOUT,
                           DURATION_PATTERN,
                           MAX_DATA_SCHEMA, MAX_RETRY_ATTEMPTS, MAX_RETRY_STEPS,
                           MAX_TIMEOUT_SECONDS, check_data, data_is_valid, retry_wait,
                           store_options)
from .envelope import Envelope, parse_record
from .errors import PermanentError, StoreError, TransientError
from .urls import default_url

__all__ = ["BATCH_MAX", "RECORD_DEADLINE", "DATA_V1", "DATA_VERSIONS", "DEFAULT_RETRY_POLICY", "DEFAULT_TIMEOUT",
           "DURATION_PATTERN",
           "MAX_DATA_SCHEMA", "MAX_RETRY_ATTEMPTS", "MAX_RETRY_STEPS", "MAX_TIMEOUT_SECONDS",
           "Archiver", "Envelope", "check_data", "data_is_valid", "parse_record", "retry_wait",
           "serve", "store_options"]

BATCH_MAX = 1000
# One batch's writes end within this many seconds, then its records are answered `retry`:
# pScheduler's archiver daemon waits 2 minutes for a reply (its --timeout, PT2M), then kills
# the process, re-sends the record to a new one, and after 3 such tries drops the record
# ("Possibly-permanent archiver error"). 30 s are left for starting Python on a busy node.
RECORD_DEADLINE = 90.0
PREPARE_CHUNK = 100
GC_THRESHOLD = 20000
RS = b"\x1e"
_OK = {"succeeded": True}


class Archiver(object):
    """State kept across records: validated data and open stores (jumbo.archive.store_cache)."""

    VALIDATED_MAX = 1024

    def __init__(self, max_open=None):
        # data JSON -> store key, or the PermanentError of invalid data (bounded: cleared
        # when full); store key -> store in the cache, at most max_open open at once.
        self.validated = {}
        self.stores = store_cache.StoreCache(
            lambda _key, data: open_store(data.get("_url") or default_url(),
                                          **store_options(data)),
            max_open or store_cache.MAX_OPEN_STORES)
        self._last = None  # (data, store key or StoreError) of the last record

    def _store_for(self, data):
        key = json.dumps(data, sort_keys=True, separators=(",", ":"))
        entry = self.validated.get(key)
        if entry is None:
            valid, error = check_data(data)
            if not valid:
                entry = PermanentError("invalid archiver data: %s" % error)
            else:
                # Same store, different retry policy: one connection pool.
                entry = json.dumps({k: v for k, v in data.items() if k != "retry-policy"},
                                   sort_keys=True)
            if len(self.validated) >= self.VALIDATED_MAX:
                self.validated.clear()
            self.validated[key] = entry
        return entry

    def handle(self, lines):
        """Replies (dicts) for a batch of raw RFC 7464 lines, in order."""
        return self.finish(self.prepare(lines))

    def _cached_store(self, data):
        # Records of one task carry the same data: compare with the last one first.
        if self._last is not None and data == self._last[0]:
            entry = self._last[1]
        else:
            entry = self._store_for(data)
            self._last = (data, entry)
        if isinstance(entry, StoreError):
            raise entry
        return self.stores.get(entry, data)

    def prepare(self, lines):
        """Parse, validate and prepare a batch (CPU only): a job for finish().

        The job keeps, per record, only its position, `attempts` and retry policy
        (for the reply), and what the store prepared: not the parsed envelope.
        """
        replies = [None] * len(lines)
        groups = {}  # store key -> (store, [(index, attempts, policy)], [envelope])
        for index, line in enumerate(lines):
            try:
                envelope = parse_record(line)
            except (ValueError, UnicodeDecodeError) as err:
                replies[index] = {"succeeded": False, "error": "malformed record: %s" % err}
                continue
            if not isinstance(envelope, dict):
                replies[index] = {"succeeded": False, "error": "malformed record: not a JSON object"}
                continue
            attempts = envelope.get("attempts")
            data = envelope.get("data")
            if data is None:
                data = {}
            policy = DEFAULT_RETRY_POLICY
            if isinstance(data, dict) and isinstance(data.get("retry-policy"), list):
                policy = data["retry-policy"]
            try:
                if not isinstance(data, dict):
                    raise PermanentError("invalid archiver data: must be a JSON object")
                key, store = self._cached_store(data)
            except StoreError as err:
                replies[index] = self._failure(err, attempts, policy)
                continue
            except Exception as err:  # noqa: BLE001 - keep serving
                replies[index] = self._failure(TransientError("%s: %s" % (type(err).__name__, err)),
                                               attempts, policy)
                continue
            group = groups.get(key)
            if group is None:
                group = groups[key] = (store, [], [])
            group[1].append((index, attempts, policy))
            group[2].append(envelope)
        work = []
        for key, (store, members, envelopes) in groups.items():
            try:
                prepared = store.prepare(envelopes)
            except Exception as err:  # noqa: BLE001 - a bug must not lose the record
                prepared = TransientError("%s: %s" % (type(err).__name__, err))
            self.stores.acquire(store, len(members))
            work.append((key, store, members, prepared))
        return replies, work

    @staticmethod
    def merge(jobs):
        """One job of several prepared ones (in order): one write per store for all of them."""
        if len(jobs) == 1:
            return jobs[0]
        replies = []
        work = []
        groups = {}  # store key -> (store, members, [prepared])
        for job_replies, job_work in jobs:
            offset = len(replies)
            replies.extend(job_replies)
            for key, store, members, prepared in job_work:
                members = [(index + offset, attempts, policy)
                           for index, attempts, policy in members]
                if isinstance(prepared, StoreError) or not hasattr(store, "merge"):
                    work.append((key, store, members, prepared))
                    continue
                group = groups.get(key)
                if group is None:
                    group = groups[key] = (store, [], [])
                group[1].extend(members)
                group[2].append(prepared)
        for key, (store, members, prepared) in groups.items():
            try:
                merged = store.merge(prepared) if len(prepared) > 1 else prepared[0]
            except Exception as err:  # noqa: BLE001 - a bug must not lose the record
                merged = TransientError("%s: %s" % (type(err).__name__, err))
            work.append((key, store, members, merged))
        return replies, work

    def finish(self, job, deadline=None):
        """Write a prepared batch to its stores; the complete list of replies. The stores
        that can (OpenSearch) end their requests at `deadline` (time.monotonic(); default
        RECORD_DEADLINE from now) and answer `retry`."""
        replies, work = job
        if deadline is None:
            deadline = time.monotonic() + RECORD_DEADLINE
        for _key, store, members, prepared in work:
            timed = hasattr(store, "deadline")
            try:
                if isinstance(prepared, StoreError):
                    raise prepared
                if timed:
                    store.deadline = deadline
                outcomes = store.write(prepared)
            except StoreError as err:
                outcomes = [err] * len(members)
            except Exception as err:  # noqa: BLE001 - a bug must not lose the record
                outcomes = [TransientError("%s: %s" % (type(err).__name__, err))] * len(members)
            finally:
                if timed:
                    store.deadline = None
            self.stores.release(store, len(members))
            for (index, attempts, policy), outcome in zip(members, outcomes):
                replies[index] = (_OK if outcome is None
                                  else self._failure(outcome, attempts, policy))
        return replies

    @staticmethod
    def _failure(error, attempts, policy):
        reply = {"succeeded": False, "error": str(error)}
        if getattr(error, "transient", False):
            wait = retry_wait(policy, attempts if isinstance(attempts, int) else 0)
            if wait:
                reply["retry"] = wait
            else:
                reply["error"] += " (retry policy exhausted after %s attempts)" % attempts
        return reply

    def close(self):
        self.stores.close()


_SUCCESS = RS + b'{"succeeded":true}\n'


def _emit(out, replies):
    data = b"".join(_SUCCESS if r is _OK or r == _OK else
                    RS + json.dumps(r, separators=(",", ":")).encode("utf-8") + b"\n"
                    for r in replies)
    out.write(data)
    out.flush()


def serve(instream=None, outstream=None, batch_max=BATCH_MAX):
    """The archive loop: until EOF on stdin. Returns the exit status (0).

    Two threads overlap. This one reads stdin and prepares whatever records have
    arrived (parsing, records, rows/documents) as soon as they arrive; the writer
    thread takes everything prepared so far (up to `batch_max` records) as one
    write per store, then emits its replies, in order. So a lone record (what
    pScheduler sends) is written at once, and while a write is under way the
    records arriving meanwhile gather into the next, larger batch. At most
    `batch_max` prepared records wait besides the batch being written: memory
    stays bounded.
    """
    instream = instream or sys.stdin.buffer
    outstream = outstream or sys.stdout.buffer
    fd = instream.fileno()
    archiver = Archiver()
    cond = threading.Condition()
    ready = []          # prepared jobs, in order: (job, number of records)
    waiting = [0]       # records in `ready`
    state = {"done": False, "broken": False}

    def writer():
        while True:
            with cond:
                while not ready and not state["done"]:
                    cond.wait()
                if not ready:
                    return
                taken, count = [], 0
                while ready and (not taken or count + ready[0][1] <= batch_max):
                    job, size = ready.pop(0)
                    taken.append(job)
                    count += size
                waiting[0] -= count
                cond.notify_all()
            if state["broken"]:
                continue
            try:
                _emit(outstream, archiver.finish(archiver.merge(taken)))
            except (BrokenPipeError, ValueError, OSError):
                with cond:
                    state["broken"] = True
                    cond.notify_all()

    def submit(lines):
        job = archiver.prepare(lines)
        with cond:
            while waiting[0] >= batch_max and not state["broken"]:
                cond.wait()
            ready.append((job, len(lines)))
            waiting[0] += len(lines)
            cond.notify_all()

    # Parsed records are acyclic and short-lived: collecting cycles every 700
    # allocations (the default) costs ~10% of the time for nothing.
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], GC_THRESHOLD), *threshold[1:])
    thread = threading.Thread(target=writer, name="jumbo-archive-writer")
    thread.daemon = True
    thread.start()
    buf = b""
    try:
        while not state["broken"]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                if buf.strip():
                    submit([buf])
                break
            buf += chunk
            if b"\n" not in chunk:
                continue
            lines = buf.split(b"\n")
            buf = lines.pop()
            lines = [line for line in lines if line.strip()]
            # Small pieces: each one's parsed objects are freed (and their memory
            # reused, still in cache) before the next is parsed.
            for first in range(0, len(lines), PREPARE_CHUNK):
                submit(lines[first:first + PREPARE_CHUNK])
    except KeyboardInterrupt:
        pass
    finally:
        with cond:
            state["done"] = True
            cond.notify_all()
        thread.join()
        archiver.close()
        gc.set_threshold(*threshold)
    if state["broken"]:
        # pScheduler went away: exit quietly (and keep the final flush from complaining).
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, outstream.fileno())
        except (OSError, ValueError, AttributeError):
            pass
    return 0
