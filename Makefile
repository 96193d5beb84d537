# The two commands a newcomer types: `make demo` and `make test`.
# Everything else is here for operators and maintainers.

PYTHON := .venv/bin/python
export PYTHONPATH := $(CURDIR):$(CURDIR)/python-jumbo

.PHONY: demo demo-mesh test fuzz test-pscheduler setup lint compat rpm deb bench bench-probe bench-ecmp \
	bench-archive bench-report bench-schedule bench-pscheduler clean

demo: setup
	$(PYTHON) -m demo $(DEMO_ARGS)

# The mesh as WLCG runs it: real upstream pScheduler nodes at five lab sites, perfSONAR's pSConfig
# agent on each reading the shipped template, results in a real OpenSearch, report, alarms and
# the ground-truth check (lab/real_mesh.py, demo/mesh_real.py; root; about 10-15 minutes).
demo-mesh: setup
	$(PYTHON) -m demo.mesh_real $(DEMO_MESH_ARGS)

# tests/ includes tests/integration/: the suite under a real upstream pScheduler, run whenever
# its source is present (PSCHEDULER_SRC, default ../shared/real-pscheduler/; required in CI).
test: setup
	.venv/bin/ruff check .
	$(PYTHON) -m pytest tests -q -p no:cacheprovider $(PYTEST_ARGS)
	bash scripts/check-compat.sh

# The property-based fuzzer (tests/test_fuzz.py) at length: FUZZ_EXAMPLES examples in all
# (`make test` runs it with a small fixed budget).
FUZZ_EXAMPLES ?= 100000
fuzz: setup
	JUMBO_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PYTHON) -m pytest tests/test_fuzz.py -q -p no:cacheprovider $(PYTEST_ARGS)

# pyflakes + pycodestyle + blind excepts over everything, plugin executables included
# (configuration: ruff.toml).
lint: setup
	.venv/bin/ruff check .

# The real-pScheduler integration suite alone (a few minutes).
test-pscheduler: setup
	$(PYTHON) -m pytest tests/integration -q -p no:cacheprovider -rs $(PYTEST_ARGS)

setup:
	bash scripts/setup.sh

# Node-side code must run on EL8 (Python 3.6, jsonschema 3.0.1).
compat: setup
	bash scripts/check-compat.sh

rpm: setup
	bash scripts/build-rpm.sh

deb: setup
	bash scripts/build-deb.sh

# Benchmarks: never part of `make test`. Each prints its ratios/targets side by side.
#   bench-probe, bench-archive, bench-report: the probe's, archiver's and report's figures.
#   bench-ecmp: partial (ECMP) black holes: per case, family and mode (echo, UDP, through the
#     dest's reflector) N runs back to back (BENCH_ARGS="--runs 10" for a quicker look; default 50).
#   bench-schedule: seconds per host per day in exclusive/normal slots: the template as full
#     meshes of 12, 100, 300 hosts, beside the standard WLCG throughput mesh (runs the plugins'
#     own methods).
#   bench-pscheduler: the operator's wait, submit to result, of `pscheduler task pmtu` on the
#     real-pScheduler lab.
BENCHES := probe ecmp archive report schedule pscheduler

bench: bench-probe bench-archive bench-report bench-schedule

$(addprefix bench-,$(BENCHES)): bench-%: setup
	$(PYTHON) -m bench $* $(BENCH_ARGS)

clean:
	rm -rf build dist var .pytest_cache
