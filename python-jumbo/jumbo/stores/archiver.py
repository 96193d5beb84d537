"""The `jumbo` archiver: archive data validation and the long-lived `archive` stream.

Archive data (schema 1), every key optional:

  schema        1
  _url          the store: sqlite:///PATH or http(s)://[user:pass@]HOST[:PORT][/path][?prefix=P]
                (private: may carry credentials). Absent: the embedded default store
                sqlite:////var/lib/pscheduler/jumbo.db (env JUMBO_DEFAULT_STORE overrides).
  _auth         {"username": "...", "password": "..."}  HTTP basic auth for OpenSearch
  _api-key      "..."  sent as "Authorization: ApiKey ..." (not together with _auth)
  verify-ssl    boolean, default true (TLS certificate and host name checked)
  ca-file       path of a CA bundle to trust for https (e.g. the archive's self-signed CA)
  timeout       ISO 8601 duration per request, default PT30S, at most PT1M (pScheduler
                waits 2 minutes for each reply)
  retry-policy  [{"attempts": N, "wait": "PT..."}], pScheduler's RetryPolicy; default
                DEFAULT_RETRY_POLICY: 5 x PT1M, then 6 x PT10M, then 12 x PT1H
                (about 13 h of trying; set the archive `ttl` to match)

The `archive` method reads RFC 7464 records from stdin until EOF and writes one
RFC 7464 reply per record, in order, flushed. Records that are already waiting
on stdin are written to their store in one batch (one bulk request / one SQLite
transaction, at most BATCH_MAX records) and each gets its own reply once stored;
pScheduler itself sends one record at a time, so nothing waits for a batch to fill.

Replies: {"succeeded": true}; a transient failure (store down, timeout, HTTP 429/5xx,
database locked) {"succeeded": false, "error": ..., "retry": "PT..."} as long as the
retry policy allows for the record's `attempts`; a permanent failure (bad
credentials, TLS verification, mapping conflict, malformed record, unknown test
type, invalid data) {"succeeded": false, "error": ...} without `retry`.
"""

import json
import os
import queue
import select
import sys
import threading

from .. import validate
from . import (PermanentError, StoreError, TransientError, check_url, default_url,
               open_store)

DEFAULT_RETRY_POLICY = [
    {"attempts": 5, "wait": "PT1M"},
    {"attempts": 6, "wait": "PT10M"},
    {"attempts": 12, "wait": "PT1H"},
]
DEFAULT_TIMEOUT = "PT30S"
MAX_TIMEOUT_SECONDS = 60
BATCH_MAX = 500
RS = b"\x1e"

# Days and smaller only: pScheduler's RetryPolicy rejects years and months.
_DURATION = (r"^P(?!$)(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?"
             r"(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$")

DATA_V1 = {
    "type": "object",
    "properties": {
        "schema": {"type": "integer", "enum": [1]},
        "_url": {"type": "string", "minLength": 1},
        "_auth": {
            "type": "object",
            "properties": {"username": {"type": "string", "minLength": 1},
                           "password": {"type": "string"}},
            "required": ["username", "password"],
            "additionalProperties": False,
        },
        "_api-key": {"type": "string", "minLength": 1},
        "verify-ssl": {"type": "boolean"},
        "ca-file": {"type": "string", "minLength": 1},
        "timeout": {"type": "string", "pattern": _DURATION},
        "retry-policy": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"attempts": {"type": "integer", "minimum": 1},
                               "wait": {"type": "string", "pattern": _DURATION}},
                "required": ["attempts", "wait"],
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}
DATA_VERSIONS = {1: DATA_V1}
MAX_DATA_SCHEMA = max(DATA_VERSIONS)


def _seconds(text):
    from ..record import duration_seconds
    return duration_seconds(text)


def _schema_error(data, schema):
    """The best schema error, worded so that private (`_`) values are never echoed."""
    import jsonschema
    from jsonschema.exceptions import best_match
    error = best_match(jsonschema.Draft7Validator(schema).iter_errors(data))
    if error is None:
        return None
    parts = [str(p) for p in error.absolute_path]
    pointer = "/" + "/".join(parts)
    if error.validator == "pattern":
        return "At %s: %r is not an ISO 8601 duration (days, hours, minutes, seconds)" % (
            pointer, error.instance)
    if parts and parts[0].startswith("_") and error.validator not in ("required",
                                                                        "additionalProperties"):
        return "At %s: invalid value (%s %s)" % (pointer, error.validator,
                                                  json.dumps(error.validator_value))
    return "At %s: %s" % (pointer, error.message)


def check_data(data):
    """(True, None) or (False, "At /field: problem") for the archive spec's `data`."""
    if data is None:
        data = {}
    try:
        version = validate.schema_version(data, MAX_DATA_SCHEMA, "archiver data")
    except ValueError as err:
        return False, str(err)
    error = _schema_error(data, DATA_VERSIONS[version])
    if error:
        return False, error
    url = data.get("_url")
    scheme = "sqlite"
    if url is not None:
        try:
            scheme = check_url(url).scheme
        except ValueError as err:
            return False, "At /_url: %s" % err
    if "_auth" in data and "_api-key" in data:
        return False, "At /_api-key: give either _auth or _api-key, not both"
    if scheme == "sqlite":
        for key in ("_auth", "_api-key", "verify-ssl", "ca-file"):
            if key in data:
                return False, "At /%s: only meaningful with an http(s) OpenSearch _url" % key
    elif scheme == "http" and ("ca-file" in data):
        return False, "At /ca-file: only meaningful with an https _url"
    if "timeout" in data:
        seconds = _seconds(data["timeout"])
        if not seconds or seconds > MAX_TIMEOUT_SECONDS:
            return False, "At /timeout: must be more than 0 and at most PT%dS" % MAX_TIMEOUT_SECONDS
    return True, None


def data_is_valid(data):
    valid, error = check_data(data)
    return {"valid": True} if valid else {"valid": False, "error": error}


def retry_wait(policy, attempts):
    """The wait before the next attempt given `attempts` prior ones, or None (give up)."""
    remaining = attempts if isinstance(attempts, int) and attempts >= 0 else 0
    for step in policy:
        remaining -= step["attempts"]
        if remaining < 0:
            return step["wait"]
    return None


def store_options(data):
    options = {"timeout": _seconds(data.get("timeout") or DEFAULT_TIMEOUT)}
    if "_auth" in data:
        options["auth"] = (data["_auth"]["username"], data["_auth"]["password"])
    if "_api-key" in data:
        options["api_key"] = data["_api-key"]
    if "verify-ssl" in data:
        options["verify_ssl"] = data["verify-ssl"]
    if "ca-file" in data:
        options["ca_file"] = data["ca-file"]
    return options


class Archiver(object):
    """State kept across records: validated data and open stores (connection pools)."""

    def __init__(self):
        # data JSON -> (store key, store) or the PermanentError of invalid data;
        # store key -> store (an open connection pool / database)
        self.stores = {}

    def _store_for(self, data):
        key = json.dumps(data, sort_keys=True, separators=(",", ":"))
        entry = self.stores.get(key)
        if entry is None:
            valid, error = check_data(data)
            if not valid:
                entry = PermanentError("invalid archiver data: %s" % error)
            else:
                # Same store, different retry policy: one connection pool.
                store_key = json.dumps({k: v for k, v in data.items() if k != "retry-policy"},
                                       sort_keys=True)
                store = self.stores.get(store_key)
                if store is None:
                    store = open_store(data.get("_url") or default_url(), **store_options(data))
                    self.stores[store_key] = store
                entry = (store_key, store)
            self.stores[key] = entry
        if isinstance(entry, StoreError):
            raise entry
        return entry

    def handle(self, lines):
        """Replies (dicts) for a batch of raw RFC 7464 lines, in order."""
        return self.finish(self.prepare(lines))

    def prepare(self, lines):
        """Parse, validate and prepare a batch (CPU only): a job for finish()."""
        replies = [None] * len(lines)
        groups = {}  # store key -> (store, [(index, envelope, policy)])
        for index, line in enumerate(lines):
            try:
                text = line.decode("utf-8").lstrip("\x1e").strip()
                envelope = json.loads(text)
            except (ValueError, UnicodeDecodeError) as err:
                replies[index] = {"succeeded": False, "error": "malformed record: %s" % err}
                continue
            if not isinstance(envelope, dict):
                replies[index] = {"succeeded": False, "error": "malformed record: not a JSON object"}
                continue
            data = envelope.get("data")
            if data is None:
                data = {}
            policy = DEFAULT_RETRY_POLICY
            if isinstance(data, dict) and isinstance(data.get("retry-policy"), list):
                policy = data["retry-policy"]
            try:
                if not isinstance(data, dict):
                    raise PermanentError("invalid archiver data: must be a JSON object")
                key, store = self._store_for(data)
            except StoreError as err:
                replies[index] = self._failure(err, envelope, policy)
                continue
            except Exception as err:  # noqa: BLE001 - keep serving
                replies[index] = self._failure(TransientError("%s: %s" % (type(err).__name__, err)),
                                               envelope, policy)
                continue
            groups.setdefault(key, (store, []))[1].append((index, envelope, policy))
        work = []
        for key, (store, members) in groups.items():
            try:
                prepared = store.prepare([env for _, env, _ in members])
            except Exception as err:  # noqa: BLE001 - a bug must not lose the record
                prepared = TransientError("%s: %s" % (type(err).__name__, err))
            work.append((store, members, prepared))
        return replies, work

    def finish(self, job):
        """Write a prepared batch to its stores; the complete list of replies."""
        replies, work = job
        for store, members, prepared in work:
            try:
                if isinstance(prepared, StoreError):
                    raise prepared
                outcomes = store.write(prepared)
            except StoreError as err:
                outcomes = [err] * len(members)
            except Exception as err:  # noqa: BLE001 - a bug must not lose the record
                outcomes = [TransientError("%s: %s" % (type(err).__name__, err))] * len(members)
            for (index, envelope, policy), outcome in zip(members, outcomes):
                replies[index] = ({"succeeded": True} if outcome is None
                                  else self._failure(outcome, envelope, policy))
        return replies

    @staticmethod
    def _failure(error, envelope, policy):
        reply = {"succeeded": False, "error": str(error)}
        if getattr(error, "transient", False):
            attempts = envelope.get("attempts") if isinstance(envelope, dict) else 0
            wait = retry_wait(policy, attempts if isinstance(attempts, int) else 0)
            if wait:
                reply["retry"] = wait
            else:
                reply["error"] += " (retry policy exhausted after %s attempts)" % attempts
        return reply

    def close(self):
        for entry in self.stores.values():
            if hasattr(entry, "close"):
                try:
                    entry.close()
                except Exception:  # noqa: BLE001
                    pass


_SUCCESS = RS + b'{"succeeded":true}\n'


def _emit(out, replies):
    data = b"".join(_SUCCESS if r == {"succeeded": True} else
                    RS + json.dumps(r, separators=(",", ":")).encode("utf-8") + b"\n"
                    for r in replies)
    out.write(data)
    out.flush()


def serve(instream=None, outstream=None, batch_max=BATCH_MAX):
    """The archive loop: until EOF on stdin. Returns the exit status (0).

    Two stages overlap: this thread reads and prepares batch k+1 (parsing, records,
    documents) while a writer thread stores batch k and emits its replies, in order.
    At most two prepared batches wait, so memory stays bounded.
    """
    instream = instream or sys.stdin.buffer
    outstream = outstream or sys.stdout.buffer
    fd = instream.fileno()
    archiver = Archiver()
    jobs = queue.Queue(maxsize=2)
    broken = threading.Event()

    def writer():
        while True:
            job = jobs.get()
            if job is None:
                return
            if broken.is_set():
                continue
            try:
                _emit(outstream, archiver.finish(job))
            except (BrokenPipeError, ValueError, OSError):
                broken.set()

    thread = threading.Thread(target=writer, name="jumbo-archive-writer")
    thread.daemon = True
    thread.start()
    buf = b""
    pending = []
    eof = False
    try:
        while not broken.is_set():
            if not eof:
                ready, _, _ = select.select([fd], [], [], 0 if pending else None)
                if ready:
                    chunk = os.read(fd, 1 << 20)
                    if chunk:
                        buf += chunk
                        if b"\n" in buf:
                            parts = buf.split(b"\n")
                            buf = parts.pop()
                            pending.extend(p for p in parts if p.strip())
                    else:
                        eof = True
                        if buf.strip():
                            pending.append(buf)
                        buf = b""
                    if not eof and len(pending) < batch_max:
                        continue
            if pending:
                batch, pending = pending[:batch_max], pending[batch_max:]
                jobs.put(archiver.prepare(batch))
            elif eof:
                break
    except KeyboardInterrupt:
        pass
    finally:
        jobs.put(None)
        thread.join()
        archiver.close()
    if broken.is_set():
        # pScheduler went away: exit quietly (and keep the final flush from complaining).
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, outstream.fileno())
        except (OSError, ValueError, AttributeError):
            pass
    return 0
