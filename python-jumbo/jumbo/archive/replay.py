"""jumbo-replay: copy results from a file or another store into a store (backfill, migration).

    jumbo-replay SOURCE [--to URL] [--batch N] [--auth-file F | --user U --password P |
                 --api-key K] [--no-verify-ssl] [--ca-file F] [--timeout S]
                 [--source-auth-file F] [--source-ca-file F] [--source-no-verify-ssl]
                 [--quiet]

A login in a file (--auth-file, one line user:password) or in the environment
(JUMBO_STORE_AUTH=user:password) stays out of the process list; --password does not.
These are the target's; a source store (a secured perfSONAR archive) takes its own:
--source-auth-file, --source-ca-file, --source-no-verify-ssl (or a login in its URL).

SOURCE is a JSON file (one result, or a list), a JSONL file (one per line; RFC
7464 record separators are accepted), `-` for stdin, or a store URL
(sqlite:///PATH, http(s)://HOST:PORT). Items may be archiver envelopes, bare
pScheduler results or flat records. The target (default: the embedded store)
keeps each run once, so replaying twice changes nothing. A source store must
exist (a mistyped SQLite path is refused, never created empty), and the target is
opened only once the source has given its first item: a source that fails leaves
no target behind. Files are read in chunks, one item at a time (jumbo.archive.
json_stream). Progress goes to stderr after the first batch and then at most once
a second (--quiet: none). Exit status: 0 when every item was stored, 1 when some
were rejected (listed on stderr), 2 on usage or store errors.
"""

import argparse
import os
import sys
import time

from .. import __version__
from . import credentials, json_stream
from .stores import open_store
from .errors import StoreError
from .urls import check_url, default_url


def _is_url(text):
    return "://" in text


def source_items(source, options=None):
    if _is_url(source):
        parts = check_url(source)
        if parts.scheme == "sqlite" and not os.path.isfile(source[len("sqlite:///"):]):
            # open_store would create it: a mistyped path would replay "0 stored"
            raise ValueError("source store %s does not exist" % source)
        store = open_store(source, **(options or {}))
        try:
            for item in store.export():
                yield item
        finally:
            store.close()
    elif source == "-":
        for item in json_stream.items(sys.stdin):
            yield item
    else:
        with open(source, encoding="utf-8") as handle:
            for item in json_stream.items(handle):
                yield item


def replay(source, target, batch=500, source_options=None, target_options=None, log=None,
           progress=None):
    """Copy every item of `source` into `target`; returns (stored, rejected). The target is
    opened at the first batch (a source that fails first leaves none). `progress(read,
    stored, rejected)` is called after the first batch, then at most once a second."""
    store = None
    stored = rejected = read = 0
    chunk = []
    shown = [None]

    def flush():
        nonlocal store, stored, rejected
        if store is None:
            store = open_store(target, **(target_options or {}))
        outcomes = store.put_many(chunk)
        for item, outcome in zip(chunk, outcomes):
            if outcome is None:
                stored += 1
            else:
                rejected += 1
                if log:
                    log("rejected: %s" % outcome)
        del chunk[:]
        now = time.monotonic()
        if progress and (shown[0] is None or now - shown[0] >= 1.0):
            shown[0] = now
            progress(read, stored, rejected)

    try:
        for item in source_items(source, source_options):
            read += 1
            chunk.append(item)
            if len(chunk) >= batch:
                flush()
        if chunk:
            flush()
    finally:
        if store is not None:
            store.close()
    return stored, rejected


def _store_options(timeout, no_verify_ssl, ca_file):
    options = {"timeout": timeout, "verify_ssl": not no_verify_ssl}
    if ca_file:
        options["ca_file"] = ca_file
    return options


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
    parser.add_argument("--source-auth-file", help="file holding 'user:password' for a source "
                        "OpenSearch store (a secured perfSONAR archive)")
    parser.add_argument("--source-ca-file", help="CA bundle to trust for the source store")
    parser.add_argument("--source-no-verify-ssl", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    target = args.target or default_url()
    try:
        # The target's login: --api-key, --user, else --auth-file or JUMBO_STORE_AUTH.
        options = _store_options(args.timeout, args.no_verify_ssl, args.ca_file)
        if args.api_key:
            options["api_key"] = args.api_key
        elif args.user:
            options["auth"] = (args.user, args.password or "")
        else:
            login = credentials.login(args.auth_file)
            if login:
                options["auth"] = login
        # The source's: its own file (or a login in its URL), never the target's.
        source_options = _store_options(args.timeout, args.source_no_verify_ssl,
                                        args.source_ca_file)
        if args.source_auth_file:
            source_options["auth"] = credentials.read_auth_file(args.source_auth_file)
        check_url(target)
        if _is_url(args.source):
            check_url(args.source)
        stored, rejected = replay(args.source, target, batch=max(1, args.batch),
                                  source_options=source_options, target_options=options,
                                  log=lambda m: sys.stderr.write(m + "\n"),
                                  progress=None if args.quiet else _progress)
    except (StoreError, ValueError, OSError) as err:
        sys.stderr.write("jumbo-replay: %s\n" % err)
        return 2
    sys.stdout.write("jumbo-replay: %d stored (duplicates count as stored), %d rejected -> %s\n"
                     % (stored, rejected, target))
    return 1 if rejected else 0


def _progress(read, stored, rejected):
    sys.stderr.write("jumbo-replay: %d read, %d stored, %d rejected\n" % (read, stored, rejected))
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
