# The two commands a newcomer types: `make demo` and `make test`.
# Everything else is here for operators and maintainers.

PYTHON := .venv/bin/python
export PYTHONPATH := $(CURDIR):$(CURDIR)/python-jumbo

.PHONY: demo demo-mesh test fuzz test-pscheduler setup lint compat dist rpm deb check-packaging \
	check-clean-build bench bench-probe bench-ecmp bench-archive bench-report bench-schedule \
	bench-pscheduler bench-reflector-load clean

demo: setup
	$(PYTHON) -m demo $(DEMO_ARGS)

# The mesh as WLCG runs it: real upstream pScheduler nodes at five lab sites, perfSONAR's pSConfig
# agent on each reading the shipped template, results in a real OpenSearch, report, alarms and
# the ground-truth check of three rounds back to back (lab/real_mesh.py, demo/mesh_real.py; root;
# set-up, then three rounds of the hourly schedule shortened to every 5 minutes).
demo-mesh: setup
	$(PYTHON) -m demo.mesh_real $(DEMO_MESH_ARGS)

# tests/ includes tests/integration/: the suite under a real upstream pScheduler, run whenever
# its source is present (PSCHEDULER_SRC, default ../shared/real-pscheduler/; required in CI).
test: setup
	.venv/bin/ruff check .
	$(PYTHON) -m pytest tests -q -p no:cacheprovider $(PYTEST_ARGS)
	bash scripts/check-compat.sh

# The property-based fuzzer (tests/fuzz/) at length: FUZZ_EXAMPLES examples in all
# (`make test` runs it with a small fixed budget).
FUZZ_EXAMPLES ?= 100000
fuzz: setup
	JUMBO_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PYTHON) -m pytest tests/fuzz -q -p no:cacheprovider $(PYTEST_ARGS)

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

# Packages, the packagers' way: none of these runs setup.sh; they need only the packaging tools
# (each script names what is missing) and the build dependencies rpm/jumbo.spec and
# debian/control declare. The maintainer is one variable the builder must set:
#   make dist JUMBO_MAINTAINER='Jane Doe <jane@example.net>'   (JUMBO_RELEASE: default 1)
# dist: dist/jumbo-VERSION.tar.gz, for `rpmbuild -ta` or `dpkg-buildpackage` in its tree.
# rpm / deb: build/rpm/RPMS/noarch/*.rpm (rpmbuild -ta) / build/deb/*.deb (dpkg-buildpackage).
# check-packaging: both builds, rpmlint and lintian with no errors (also run by `make test`).
# check-clean-build: both builds in a debootstrap'd Debian 12 with nothing but build-essential,
#   rpm and the declared build dependencies (a few minutes; network to deb.debian.org).
export JUMBO_MAINTAINER JUMBO_RELEASE

dist:
	bash scripts/make-tarball.sh dist

rpm:
	bash scripts/build-rpm.sh

deb:
	bash scripts/build-deb.sh

check-packaging:
	bash scripts/check-packaging.sh

check-clean-build:
	bash scripts/check-clean-build.sh

# Benchmarks: never part of `make test`. Each prints its ratios/targets side by side.
#   bench-probe, bench-archive, bench-report: the probe's, archiver's and report's figures.
#   bench-ecmp: partial (ECMP) black holes: per case, family and mode (echo, UDP, through the
#     dest's reflector) N runs back to back (BENCH_ARGS="--runs 10" for a quicker look; default 50).
#   bench-schedule: seconds per host per day in exclusive/normal slots: the template as full
#     meshes of 12, 100, 300 and 600 hosts, beside the standard WLCG throughput mesh and the
#     2 % target (runs the plugins' own methods). `python -m bench schedule-noise` (root): the
#     large template's short legs' gain noise on the namespace labs.
#   bench-pscheduler: the operator's wait, submit to result, of `pscheduler task pmtu` on the
#     real-pScheduler lab.
#   bench-reflector-load: 30 sources probing one dest through its reflector at one start (a
#     mesh's hourly pmtu): every run exact, the dest's peak RSS and CPU, ports
#     (BENCH_ARGS="--sources 40 --version 6").
BENCHES := probe ecmp archive report schedule pscheduler reflector-load

bench: bench-probe bench-archive bench-report bench-schedule

$(addprefix bench-,$(BENCHES)): bench-%: setup
	$(PYTHON) -m bench $* $(BENCH_ARGS)

clean:
	rm -rf build dist var .pytest_cache
