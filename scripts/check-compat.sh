#!/usr/bin/env bash
# Node-side code (the plugins and the library modules they import) must run on perfSONAR's
# oldest supported node: EL8 with Python 3.6 and jsonschema 3.0.1.
#  1. vermin: the minimum Python version the code needs, statically, must be <= 3.6;
#  2. the schema and plugin-contract tests run again under jsonschema 3.0.1, and, where a
#     Python 3.6 interpreter is available (pyenv), under Python 3.6 itself.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

NODE_CODE=(python-jumbo/jumbo pscheduler-test-pmtu pscheduler-test-jumbo-throughput pscheduler-tool-jumbocheck
           pscheduler-archiver-jumbo)
# The report runs on a coordinator's workstation and may use newer Python.
EXCLUDE=(--exclude-regex 'jumbo/report/.*')
targets=()
for t in "${NODE_CODE[@]}"; do [[ -e $t ]] && targets+=("$t"); done
# Plugin executables have no .py suffix: list them explicitly by their shebang.
while IFS= read -r f; do
  head -c 64 "$f" | grep -q python && targets+=("$f")
done < <(find pscheduler-* -type f -perm -u+x 2>/dev/null)
echo "compat: vermin on ${#targets[@]} node-side paths"
.venv/bin/vermin -q --no-tips --violations -t=3.6- --eval-annotations "${EXCLUDE[@]}" "${targets[@]}"
.venv/bin/vermin -q --no-tips -t=3.6- --eval-annotations "${EXCLUDE[@]}" "${targets[@]}"

compat_tests=$(ls tests/test_compat_*.py tests/test_testtype_spec.py tests/hardening/test_schema_hardening.py \
  tests/test_plugin_*.py tests/hardening/test_plugin_deep_nesting.py tests/golden/test_plugin_golden.py \
  tests/test_core_units.py 2>/dev/null || true)
if [[ -z $compat_tests ]]; then
  echo "compat: the schema and plugin tests are missing" >&2; exit 1
fi

make_env() {  # make_env DIR PYTHON PIP-ARGS...
  local dir=$1 py=$2; shift 2
  if [[ ! -x $dir/bin/python ]]; then
    "$py" -m venv "$dir"
    "$dir/bin/pip" install -q "$@"
  fi
}

make_env .venv-js301 /usr/bin/python3 "jsonschema==3.0.1" "pytest>=7" "requests"
echo "compat: schema and plugin tests under jsonschema 3.0.1 (Python $(.venv-js301/bin/python -V 2>&1))"
JUMBO_PYTHON=$ROOT/.venv-js301/bin/python PYTHONPATH=$ROOT:$ROOT/python-jumbo \
  .venv-js301/bin/python -m pytest -q -p no:cacheprovider $compat_tests

PY36=${PY36:-$(ls -d /root/.pyenv/versions/3.6*/bin/python3 2>/dev/null | head -n1 || true)}
if [[ -n $PY36 && -x $PY36 ]]; then
  make_env /opt/jumbo-py36 "$PY36" "jsonschema==3.0.1" "pytest==7.0.1" "requests<2.28" "setuptools<60"
  echo "compat: schema and plugin tests under $(/opt/jumbo-py36/bin/python -V 2>&1) + jsonschema 3.0.1"
  JUMBO_PYTHON=/opt/jumbo-py36/bin/python PYTHONPATH=$ROOT:$ROOT/python-jumbo \
    /opt/jumbo-py36/bin/python -m pytest -q -p no:cacheprovider $compat_tests
else
  echo "compat: no Python 3.6 interpreter here; vermin's static check stands alone"
fi
