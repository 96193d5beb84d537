"""The archiver's open stores: at most MAX_OPEN_STORES, the least recently used closed first.

One archiver process lives as long as pScheduler's archiver daemon and sees every task's
archive data; each distinct store (`_url` and its options) is one open database or
connection pool. Without a bound, a node archiving to many URLs keeps as many descriptors
open for its life. The stream prepares records on one thread and writes them on another,
so a store evicted while records prepared for it wait to be written is closed only when
the last of them is done (acquire/release, counted in records).
"""

import itertools
import threading
from collections import OrderedDict

MAX_OPEN_STORES = 16


class StoreCache(object):
    def __init__(self, opener, limit=MAX_OPEN_STORES):
        self._opener = opener           # (key, data) -> store
        self._limit = max(1, int(limit))
        self._open = OrderedDict()      # key -> (work key, store), least recently used first
        self._users = {}                # id(store) -> records prepared and not yet written
        self._retired = {}              # id(store) -> store evicted while still in use
        self._lock = threading.Lock()
        self._serial = itertools.count(1)

    def __len__(self):
        return len(self._open)

    def get(self, key, data):
        """(work key, store) for `key`, opening it with `data` when it is not open. The work
        key names this store object: a store opened again after eviction has a new one."""
        with self._lock:
            entry = self._open.get(key)
            if entry is not None:
                self._open.move_to_end(key)
                return entry
        store = self._opener(key, data)
        entry = ("%s#%d" % (key, next(self._serial)), store)
        with self._lock:
            self._open[key] = entry
            evicted = []
            while len(self._open) > self._limit:
                _, (_, old) = self._open.popitem(last=False)
                if self._users.get(id(old)):
                    self._retired[id(old)] = old
                else:
                    evicted.append(old)
        for old in evicted:
            _close(old)
        return entry

    def acquire(self, store, count=1):
        with self._lock:
            self._users[id(store)] = self._users.get(id(store), 0) + count

    def release(self, store, count=1):
        with self._lock:
            left = self._users.get(id(store), 0) - count
            if left > 0:
                self._users[id(store)] = left
                return
            self._users.pop(id(store), None)
            retired = self._retired.pop(id(store), None)
        if retired is not None:
            _close(retired)

    def close(self):
        with self._lock:
            stores = [store for _, store in self._open.values()] + list(self._retired.values())
            self._open.clear()
            self._retired.clear()
            self._users.clear()
        for store in stores:
            _close(store)


def _close(store):
    try:
        store.close()
    except Exception:  # noqa: BLE001 - best-effort close of a store no longer used
        pass
