#!/usr/bin/env bash
# Check the archive tests' picture of perfSONAR's side against perfSONAR's own files, then run
# the tests that seed an OpenSearch with perfSONAR's template, seeded with upstream's file
# itself instead of the tests' composition (tests/perfsonar_shapes.py).
# A maintainer's check, not part of `make test` (CI has no perfSONAR archive source, no network).
#
#   PERFSONAR_ARCHIVE_SRC=/path/to/perfsonar/archive scripts/check-upstream-archive.sh [PYTEST ARGS]
#
# The source is a checkout (or `git archive` export) of https://github.com/perfsonar/archive;
# the tests start their own OpenSearch as `make test` does (scripts/opensearch.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${PERFSONAR_ARCHIVE_SRC:?set PERFSONAR_ARCHIVE_SRC to a checkout of https://github.com/perfsonar/archive}
PYTHON=${PYTHON:-.venv/bin/python}
export PERFSONAR_ARCHIVE_SRC=$SRC
export PYTHONPATH=$PWD:$PWD/python-jumbo:$PWD/tests
"$PYTHON" - <<'PY'
import json, sys
import perfsonar_shapes as shapes
path = shapes.upstream_template_path()
with open(path) as handle:
    upstream = json.load(handle)
composed = shapes.composed_template()
if upstream != composed:
    sys.exit("check-upstream-archive: the tests' composed template differs from %s:\n"
             "upstream: %s\ncomposed: %s" % (path, json.dumps(upstream, sort_keys=True),
                                             json.dumps(composed, sort_keys=True)))
print("check-upstream-archive: the composed perfSONAR template equals %s" % path)
PY
exec "$PYTHON" -m pytest -q -p no:cacheprovider tests/test_archive_opensearch_setup_beside_perfsonar.py \
    tests/test_archive_stores.py tests/test_archive_archiver.py -k "perfsonar or logstash or beside or earlier_layout" "$@"
