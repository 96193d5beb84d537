"""Benchmarks (never part of `make test`): `python -m bench probe|archive|report|pscheduler`."""
