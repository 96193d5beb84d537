"""The archive data's checks that depend on the node (issue 23): where a SQLite store may
live (jumbo.core.limits), whether the CA bundle named by `ca-file` can be read, a retry
policy's waits. Each answers None or the problem as "At /field: ...".

data-is-valid runs on the node that archives, so what it checks here is what the
`archive` method will find: a task is refused at once instead of failing for hours.
"""

import ssl
from urllib.parse import urlsplit

from .urls import default_url, plain_http_login_problem as login_problem
from ..core import limits
from ..core.units import duration_seconds_or_none

SQLITE_PREFIX = "sqlite:///"


def sqlite_problem(url):
    """Why the node's limits refuse a SQLite store at `url` (None: allowed)."""
    default = default_url()
    try:
        problem = limits.sqlite_path_problem(
            (url or default)[len(SQLITE_PREFIX):],
            default[len(SQLITE_PREFIX):] if default.startswith(SQLITE_PREFIX) else None)
    except limits.LimitsError as err:
        problem = str(err)
    return "At /_url: %s" % problem if problem else None


def ca_file_problem(path):
    """None if `path` is a readable CA bundle (PEM) for TLS verification."""
    try:
        ssl.create_default_context(cafile=path)
    except FileNotFoundError:
        return "At /ca-file: %s does not exist on this node" % path
    except PermissionError:
        return "At /ca-file: %s cannot be read by the archiver's user" % path
    except IsADirectoryError:
        return "At /ca-file: %s is a directory, not a CA bundle file" % path
    except (ssl.SSLError, OSError, ValueError) as err:
        return "At /ca-file: %s is not a usable CA bundle (%s)" % (path, err)
    return None


def plain_http_login_problem(url, data):
    """Why an http `_url` must not carry the data's login (None: it may)."""
    parts = urlsplit(url)
    for member, given in (("_auth", "_auth" in data), ("_api-key", "_api-key" in data),
                          ("_url", parts.username is not None)):
        problem = login_problem(parts.scheme, parts.hostname, given)
        if problem:
            return "At /%s: %s" % (member, problem)
    return None


def retry_policy_problem(policy, max_wait):
    for index, step in enumerate(policy or ()):
        seconds = duration_seconds_or_none(step["wait"])
        if not seconds:
            return "At /retry-policy/%d/wait: must be longer than PT0S" % index
        if seconds > max_wait:
            return "At /retry-policy/%d/wait: must be at most P%dD" % (index, max_wait // 86400)
    return None
