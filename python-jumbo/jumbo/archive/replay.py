"""jumbo-replay: copy results from a file or another store into a store (backfill, migration).

    jumbo-replay SOURCE [--to URL] [--batch N] [--auth-file F | --user U --password P |
                 --api-key K] [--no-verify-ssl] [--ca-file F] [--timeout S]

A login in a file (--auth-file, one line user:password) or in the environment
(JUMBO_STORE_AUTH=user:password) stays out of the process list; --password does not.

SOURCE is a JSON file (one result, or a list), a JSONL file (one per line; RFC
7464 record separators are accepted), `-` for stdin, or a store URL
(sqlite:///PATH, http(s)://HOST:PORT). Items may be archiver envelopes, bare
pScheduler results or flat records. The target (default: the embedded store)
keeps each run once, so replaying twice changes nothing. Exit status: 0 when
every item was stored, 1 when some were rejected (listed on stderr), 2 on usage
or store errors.
"""

import argparse
import json
import sys

from .. import __version__
from . import credentials
from .stores import open_store
from .errors import StoreError
from .urls import check_url, default_url


def _iter_file(handle):
    text = handle.read()
    stripped = text.lstrip().lstrip("\x1e")
    if stripped.startswith("["):
        for item in json.loads(stripped):
            yield item
        return
    try:
        single = json.loads(stripped)
    except ValueError:
        single = None
    if isinstance(single, dict):
        yield single
        return
    for number, line in enumerate(text.split("\n"), 1):
        line = line.strip().lstrip("\x1e").strip()
        if not line:
            continue
        try:
            yield json.loads(line)
        except ValueError as err:
            raise ValueError("line %d: invalid JSON (%s)" % (number, err))


def _is_url(text):
    return "://" in text


def source_items(source, options=None):
    if _is_url(source):
        check_url(source)
        store = open_store(source, **(options or {}))
        try:
            for item in store.export():
                yield item
        finally:
            store.close()
    elif source == "-":
        for item in _iter_file(sys.stdin):
            yield item
    else:
        with open(source) as handle:
            for item in _iter_file(handle):
                yield item


def replay(source, target, batch=500, source_options=None, target_options=None, log=None):
    """Copy every item of `source` into `target`; returns (stored, rejected)."""
    store = open_store(target, **(target_options or {}))
    stored = rejected = 0
    chunk = []

    def flush():
        nonlocal stored, rejected
        outcomes = store.put_many(chunk)
        for item, outcome in zip(chunk, outcomes):
            if outcome is None:
                stored += 1
            else:
                rejected += 1
                if log:
                    log("rejected: %s" % outcome)
        del chunk[:]

    try:
        for item in source_items(source, source_options):
            chunk.append(item)
            if len(chunk) >= batch:
                flush()
        if chunk:
            flush()
    finally:
        store.close()
    return stored, rejected


def main(argv=None):
    parser = argparse.ArgumentParser(prog="jumbo-replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version="%(prog)s " + __version__)
    parser.add_argument("source", help="JSON/JSONL file, '-' for stdin, or a store URL")
    parser.add_argument("--to", dest="target", default=None,
                        help="target store URL (default: %s)" % default_url())
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--user")
    parser.add_argument("--password", help="visible in the process list: prefer --auth-file "
                        "or env %s" % credentials.AUTH_ENV)
    parser.add_argument("--auth-file", help="file holding 'user:password' for an OpenSearch store")
    parser.add_argument("--api-key")
    parser.add_argument("--no-verify-ssl", action="store_true")
    parser.add_argument("--ca-file")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    options = {"timeout": args.timeout, "verify_ssl": not args.no_verify_ssl}
    if args.ca_file:
        options["ca_file"] = args.ca_file
    if args.api_key:
        options["api_key"] = args.api_key
    elif args.user:
        options["auth"] = (args.user, args.password or "")
    target = args.target or default_url()
    try:
        login = credentials.login(args.auth_file)
        if login and "auth" not in options and "api_key" not in options:
            options["auth"] = login
        check_url(target)
        stored, rejected = replay(args.source, target, batch=max(1, args.batch),
                                  target_options=options,
                                  log=lambda m: sys.stderr.write(m + "\n"))
    except (StoreError, ValueError, OSError) as err:
        sys.stderr.write("jumbo-replay: %s\n" % err)
        return 2
    sys.stdout.write("jumbo-replay: %d stored (duplicates count as stored), %d rejected -> %s\n"
                     % (stored, rejected, target))
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
