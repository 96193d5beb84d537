"""The namespace lab: real topologies with known MTUs, shared by tests, demo and benchmarks."""

from .netns import Lab  # noqa: F401
from .topology import Link, Node, Topology  # noqa: F401
from . import scenarios  # noqa: F401
