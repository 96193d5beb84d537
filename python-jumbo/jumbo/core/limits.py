"""The node's policy limits: what a task author may ask of this suite on a node.

One small JSON file, read by the plugins at every call (its absence means the defaults):

    /etc/pscheduler/jumbo-limits.conf      (env JUMBO_LIMITS_FILE names another file)
    {
      "sqlite-directories": ["/var/lib/jumbo"],
      "throughput-max-slot": "PT10M"
    }

  sqlite-directories   the directories an archive `_url` of sqlite:///PATH may name a store in
                       (the store itself or its sub-directories; symbolic links are resolved
                       before the check). The directory of the default store
                       (JUMBO_DEFAULT_STORE) is always allowed. The environment variable
                       JUMBO_SQLITE_DIRS (paths separated by ':') adds directories: for tests
                       and the demo, which archive into a scratch directory.
  throughput-max-slot  the longest exclusive slot (ISO 8601 duration) a jumbo-throughput task
                       may reserve on both nodes, its path-MTU phase included.

A file that cannot be read or parsed is an error the plugins report (never silently the
defaults): an administrator who wrote a limit wants it applied or told why not.
"""

import json
import os

from .errors import JumboError
from .units import duration_seconds

LIMITS_FILE = "/etc/pscheduler/jumbo-limits.conf"
LIMITS_ENV = "JUMBO_LIMITS_FILE"
SQLITE_DIRS_ENV = "JUMBO_SQLITE_DIRS"

DEFAULTS = {
    "sqlite-directories": ["/var/lib/jumbo"],
    "throughput-max-slot": "PT10M",
}


class LimitsError(JumboError, ValueError):
    """The limits file exists but is not usable."""


def path():
    return os.environ.get(LIMITS_ENV) or LIMITS_FILE


def load():
    """The limits in force: DEFAULTS overridden by the file's members."""
    name = path()
    limits = dict(DEFAULTS)
    try:
        with open(name) as handle:
            text = handle.read()
    except FileNotFoundError:
        return limits
    except OSError as err:
        raise LimitsError("limits file %s: %s" % (name, err.strerror or err))
    try:
        data = json.loads(text)
    except ValueError as err:
        raise LimitsError("limits file %s: invalid JSON: %s" % (name, err))
    if not isinstance(data, dict):
        raise LimitsError("limits file %s: must be a JSON object" % name)
    for key, value in data.items():
        if key.startswith("#"):
            continue
        if key not in DEFAULTS:
            raise LimitsError("limits file %s: unknown member %r (known: %s)"
                              % (name, key, ", ".join(sorted(DEFAULTS))))
        limits[key] = value
    dirs = limits["sqlite-directories"]
    if not isinstance(dirs, list) or not all(isinstance(d, str) and os.path.isabs(d)
                                             for d in dirs):
        raise LimitsError("limits file %s: sqlite-directories must be a list of absolute paths"
                          % name)
    try:
        if duration_seconds(limits["throughput-max-slot"]) <= 0:
            raise ValueError("not positive")
    except ValueError:
        raise LimitsError("limits file %s: throughput-max-slot must be a positive ISO 8601 "
                          "duration such as PT10M" % name)
    return limits


def throughput_max_slot():
    """Seconds: the longest exclusive slot a jumbo-throughput task may reserve."""
    return duration_seconds(load()["throughput-max-slot"])


def sqlite_directories(default_store_path=None):
    """The real paths of the directories SQLite stores may live in."""
    dirs = list(load()["sqlite-directories"])
    extra = os.environ.get(SQLITE_DIRS_ENV)
    if extra:
        dirs.extend(d for d in extra.split(":") if d)
    if default_store_path:
        dirs.append(os.path.dirname(os.path.abspath(default_store_path)))
    real = []
    for directory in dirs:
        directory = os.path.realpath(directory)
        if directory not in real:
            real.append(directory)
    return real


def sqlite_path_problem(store_path, default_store_path=None):
    """None if a SQLite store may live at `store_path`, else why not (naming the policy)."""
    if store_path.startswith("file:"):
        # SQLite reads such a name as a URI, whose own path (percent-decoded) and options
        # would decide where the file is, not the path checked here.
        return ("%s is an SQLite URI, not a path: give the store's path "
                "(sqlite:////absolute/path.db)" % store_path)
    real = os.path.realpath(os.path.abspath(store_path))
    allowed = sqlite_directories(default_store_path)
    for directory in allowed:
        if real == directory:
            return "%s is a directory, not a store file" % store_path
        if real.startswith(directory.rstrip("/") + "/"):
            return None
    return ("SQLite stores may only live under %s (sqlite-directories in %s), not %s"
            % (", ".join(allowed) or "(none)", path(), store_path))
