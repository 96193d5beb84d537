"""jumbo: path-MTU, black-hole and jumbo-frame measurements for perfSONAR.

The shared library behind the `pmtu` test, the `jumbocheck` tool, the `jumbo`
archiver and the adoption report.
"""

__version__ = "1.0.0"
