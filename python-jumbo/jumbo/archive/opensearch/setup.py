"""One-time set-up of an OpenSearch archive for the jumbo archiver, and its check.

    python3 -m jumbo.archive.opensearch.setup install --url https://ADMIN:PW@archive:9200
    python3 -m jumbo.archive.opensearch.setup check   --url https://WRITER:PW@archive:9200
    python3 -m jumbo.archive.opensearch.setup role    # the writer role (body of
                                          # PUT _plugins/_security/api/roles/jumbo_writer)

`install` (an admin, once, and after an upgrade that changes TEMPLATE_VERSION):
removes templates of earlier versions of this suite that matched perfSONAR's streams,
installs this suite's own templates (pscheduler_<type> for OWNED_TEST_TYPES, and the
jumbo_* indices), creates the owned data streams and jumbo_* indices, and rolls an
owned stream over when its write index was created without the current template
(e.g. Logstash wrote the first pmtu document before set-up), and copies adoption
records of the earlier layout (`jumbo.*` inside pscheduler_* documents) into
jumbo_history. It changes nothing of perfSONAR's (those documents are only read).
Needs: cluster `cluster_manage_index_templates` and `indices:data/write/bulk`; on the owned
streams and jumbo_*: `create_index`, `indices:admin/data_stream/create`,
`indices:admin/rollover`, `indices:admin/mapping/put`, `indices:admin/mappings/get`,
`indices:admin/data_stream/get`, write; read on pscheduler_* for the copy of earlier records
(perfSONAR's `admin` user has them all). It first reads what is in place in one request,
the cluster state's metadata (`cluster:monitor/state`, which perfSONAR's `admin` has; without
it, two requests), and then does only what is missing or stale (install_state).

`check` (with the archiver's own credentials; read-only requests) says whether every
owned stream and index is in place with the current mapping, and how many runs were
rejected (jumbo_rejected). Exit 0 when ready, 1 when not (with what to do), 2 when the
archive cannot be reached or the arguments are wrong.

The steps themselves are in jumbo.archive.opensearch.install (re-exported here).
"""

import argparse
import json
import os
import sys

from ... import __version__
from ..errors import PermanentError, StoreError
from ..urls import check_url
from .install import (WRITER_ROLE, describe, install, migrate_legacy_records, problems,
                      writer_role)
from .layout import TEMPLATE_VERSION
from .store import OpenSearchStore

__all__ = ["WRITER_ROLE", "describe", "install", "main", "migrate_legacy_records", "problems",
           "writer_role"]


def _open(args):
    auth = None
    if args.user:
        password = os.environ.get("JUMBO_OPENSEARCH_PASSWORD")
        if args.password_file:
            with open(args.password_file) as f:
                password = f.read().strip()
        if password is None:
            raise ValueError("--user needs --password-file or JUMBO_OPENSEARCH_PASSWORD")
        auth = (args.user, password)
    if check_url(args.url).scheme == "sqlite":
        raise ValueError("set-up concerns an OpenSearch archive, not %s" % args.url)
    return OpenSearchStore.from_url(args.url, auth=auth, verify_ssl=not args.insecure,
                                    ca_file=args.ca_file, prefix=args.prefix,
                                    manage_templates=False,
                                    pscheduler_streams=not args.jumbo_indices_only)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m jumbo.archive.opensearch.setup",
        description="Set up (install) or check an OpenSearch archive for the jumbo archiver.")
    parser.add_argument("--version", action="version", version="jumbo " + __version__)
    parser.add_argument("action", choices=("install", "check", "role"))
    parser.add_argument("--url", help="http(s)://[user:pass@]HOST[:PORT][/base-path]")
    parser.add_argument("--user", help="basic-auth user (password from --password-file or "
                                       "the environment variable JUMBO_OPENSEARCH_PASSWORD)")
    parser.add_argument("--password-file")
    parser.add_argument("--ca-file", help="CA bundle to trust (e.g. the archive's own CA)")
    parser.add_argument("--insecure", action="store_true", help="do not verify TLS")
    parser.add_argument("--prefix", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--jumbo-indices-only", action="store_true",
                        help="the archive data sets \"pscheduler-streams\": false")
    args = parser.parse_args(argv)
    if args.action == "role":
        print(json.dumps(writer_role(args.prefix or ""), indent=2))
        return 0
    if not args.url:
        parser.error("--url is required for %s" % args.action)
    try:
        store = _open(args)
    except (ValueError, OSError) as err:
        print("jumbo setup: %s" % err, file=sys.stderr)
        return 2
    try:
        if args.action == "install":
            for line in install(store):
                print(line)
        found = problems(store)
        if found:
            print(describe(store, found), file=sys.stderr)
            return 1
        count, recent = store.rejected()
        print("ready: %s (template version %d)" % (store.url, TEMPLATE_VERSION))
        print("rejected runs recorded in %s: %d" % (store.name("jumbo_rejected"), count))
        for entry in recent[:10]:
            print("  %s run %s: %s field %s" % (entry.get("@timestamp"), entry.get("run_id"),
                                               entry.get("stream"), entry.get("field")))
        return 0
    except PermanentError as err:
        print("jumbo setup: %s" % err, file=sys.stderr)
        if args.action == "install":
            print("install needs an admin user (see: python3 -m jumbo.archive.opensearch.setup --help)",
                  file=sys.stderr)
        return 1
    except StoreError as err:
        print("jumbo setup: %s" % err, file=sys.stderr)
        return 2
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main())
