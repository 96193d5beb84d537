"""Fixtures of the real-pScheduler integration suite (defined in real_pscheduler.py: the
5.2.5 lab; pscheduler53.py: the 5.3-development lab)."""

from pscheduler53 import nodes53  # noqa: F401
from real_pscheduler import lab_opensearch, nodes, pytest_terminal_summary  # noqa: F401
