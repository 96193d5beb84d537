"""The namespace lab: real topologies with known MTUs, shared by tests, demo and benchmarks."""

from .netns import Lab  # noqa: F401 - the package's API: `from lab import Lab`
from .topology import Link, Node, Topology  # noqa: F401 - re-exported for scenarios and tests
from . import scenarios  # noqa: F401 - re-exported: `from lab import scenarios`
