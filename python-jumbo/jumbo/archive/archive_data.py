"""The `jumbo` archiver's archive data (schema 1; see jumbo.archive.archiver for its members):
its schema and checks, the retry policy's waits, and the store options it gives.

A value given under a private (`_`) member is never echoed in a message.
"""

import json

from . import data_checks
from ..core import validate as validation
from ..core.errors import JumboError
from ..core.units import FIXED_DURATION_PATTERN, duration_seconds_or_none
from .urls import check_url

DEFAULT_RETRY_POLICY = [
    {"attempts": 5, "wait": "PT1M"},
    {"attempts": 6, "wait": "PT10M"},
    {"attempts": 12, "wait": "PT1H"},
]
DEFAULT_TIMEOUT = "PT30S"
MAX_TIMEOUT_SECONDS = 60
# A retry policy's bounds: pScheduler gives up at the archive's ttl anyway; these keep a
# typo (attempts 1e9) from reading as intent.
MAX_RETRY_ATTEMPTS = 1000
MAX_RETRY_STEPS = 20
# The longest wait between two tries: pScheduler adds the wait to now as a datetime, which
# overflows (year 10000) for P99999999999W and fails the archiving in its daemon.
MAX_RETRY_WAIT_SECONDS = 7 * 86400

# Weeks and smaller only: pScheduler's RetryPolicy rejects years and months.
DURATION_PATTERN = FIXED_DURATION_PATTERN

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
        "pscheduler-streams": {"type": "boolean"},
        "ca-file": {"type": "string", "minLength": 1},
        "timeout": {"type": "string", "pattern": DURATION_PATTERN},
        "retry-policy": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"attempts": {"type": "integer", "minimum": 1,
                                            "maximum": MAX_RETRY_ATTEMPTS},
                               "wait": {"type": "string", "pattern": DURATION_PATTERN}},
                "required": ["attempts", "wait"],
                "additionalProperties": False,
            },
            "maxItems": MAX_RETRY_STEPS,
        },
    },
    "additionalProperties": False,
}
DATA_VERSIONS = {1: DATA_V1}
MAX_DATA_SCHEMA = max(DATA_VERSIONS)


def _schema_error(data, schema):
    """The best schema error, worded so that private (`_`) values are never echoed."""
    # validate.best_error imports jsonschema only for data it cannot pass: data-is-valid runs
    # on every task submission.
    error = validation.best_error(data, schema)
    if error is None:
        return None
    parts = [str(p) for p in error.absolute_path]
    pointer = validation.pointer(error)
    # Values are not echoed (a login pasted into the wrong member is still a login); only
    # numbers, booleans and null, which carry none.
    if error.validator == "pattern":
        return "At %s: not an ISO 8601 duration (days, hours, minutes, seconds)" % pointer
    if (parts and parts[0].startswith("_") or isinstance(error.instance, (str, dict, list))) \
            and error.validator not in ("required", "additionalProperties"):
        return "At %s: invalid value (%s %s)" % (pointer, error.validator,
                                                  json.dumps(error.validator_value))
    return "At %s: %s" % (pointer, error.message)


def _plain(data):
    """True for data that DATA_V1 obviously accepts: at most `schema` 1 and a string `_url`."""
    if not isinstance(data, dict):
        return False
    for key, value in data.items():
        if key == "schema":
            if type(value) is not int or value != 1:
                return False
        elif key == "_url":
            if type(value) is not str or not value:
                return False
        else:
            return False
    return True


def check_data(data):
    """(True, None) or (False, "At /field: problem") for the archive spec's `data`."""
    if data is None:
        data = {}
    try:
        scheme = _shape_and_scheme(data)
    except _Refused as refused:
        return False, str(refused)
    problem = (_options_problem(data, scheme)
               or data_checks.retry_policy_problem(data.get("retry-policy"), MAX_RETRY_WAIT_SECONDS)
               or _timeout_problem(data)
               or _target_problem(data, scheme))
    if problem:
        return False, problem
    return True, None


class _Refused(JumboError, ValueError):
    """What check_data answers as its (False, message)."""


def _shape_and_scheme(data):
    """The store URL's scheme ("sqlite" without one) once the data's shape is valid (the
    schema only for data beyond a plain store URL); _Refused otherwise."""
    if not _plain(data):
        try:
            version = validation.schema_version(data, MAX_DATA_SCHEMA, "archiver data")
        except ValueError as err:
            raise _Refused(str(err))
        error = _schema_error(data, DATA_VERSIONS[version])
        if error:
            raise _Refused(error)
    url = data.get("_url")
    if url is None:
        return "sqlite"
    try:
        return check_url(url).scheme
    except ValueError as err:
        raise _Refused("At /_url: %s" % err)


def _options_problem(data, scheme):
    """Options that contradict each other or the store's scheme (credentials and TLS only
    for an http(s) OpenSearch, a CA file only for https, no login over plain http)."""
    if "_auth" in data and "_api-key" in data:
        return "At /_api-key: give either _auth or _api-key, not both"
    if scheme == "sqlite":
        for key in ("_auth", "_api-key", "verify-ssl", "ca-file", "pscheduler-streams"):
            if key in data:
                return "At /%s: only meaningful with an http(s) OpenSearch _url" % key
        return None
    if scheme == "http":
        if "ca-file" in data:
            return "At /ca-file: only meaningful with an https _url"
        return data_checks.plain_http_login_problem(data.get("_url"), data)
    return None


def _timeout_problem(data):
    if "timeout" not in data:
        return None
    seconds = duration_seconds_or_none(data["timeout"])
    if not seconds or seconds > MAX_TIMEOUT_SECONDS:
        return "At /timeout: must be more than 0 and at most PT%dS" % MAX_TIMEOUT_SECONDS
    return None


def _target_problem(data, scheme):
    """The store itself: a SQLite path that cannot be used, or a CA file that cannot be read."""
    if scheme == "sqlite":
        return data_checks.sqlite_problem(data.get("_url"))
    if "ca-file" in data:
        return data_checks.ca_file_problem(data["ca-file"])
    return None


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
    options = {"timeout": duration_seconds_or_none(data.get("timeout") or DEFAULT_TIMEOUT)}
    if "_auth" in data:
        options["auth"] = (data["_auth"]["username"], data["_auth"]["password"])
    if "_api-key" in data:
        options["api_key"] = data["_api-key"]
    if "verify-ssl" in data:
        options["verify_ssl"] = data["verify-ssl"]
    if "ca-file" in data:
        options["ca_file"] = data["ca-file"]
    if "pscheduler-streams" in data:
        options["pscheduler_streams"] = data["pscheduler-streams"]
    return options
