# The two commands a newcomer types: `make demo` and `make test`.
# Everything else is here for operators and maintainers.

PYTHON := .venv/bin/python
export PYTHONPATH := $(CURDIR):$(CURDIR)/python-jumbo

.PHONY: demo test setup unit compat rpm deb bench clean

demo: setup
	$(PYTHON) -m demo $(DEMO_ARGS)

test: setup
	$(PYTHON) -m pytest tests -q -p no:cacheprovider $(PYTEST_ARGS)
	bash scripts/check-compat.sh

setup:
	bash scripts/setup.sh

# Node-side code must run on EL8 (Python 3.6, jsonschema 3.0.1).
compat: setup
	bash scripts/check-compat.sh

rpm: setup
	bash scripts/build-rpm.sh

deb: setup
	bash scripts/build-deb.sh

bench: setup
	$(PYTHON) -m bench $(BENCH_ARGS)

clean:
	rm -rf build dist var .pytest_cache
