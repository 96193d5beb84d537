"""Fixtures of the real-pScheduler integration suite (defined in real_pscheduler.py)."""

from real_pscheduler import lab_opensearch, nodes, pytest_terminal_summary  # noqa: F401
