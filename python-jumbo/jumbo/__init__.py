"""jumbo: path-MTU, black-hole and jumbo-frame measurements for perfSONAR.

The shared library behind the `pmtu` test, the `jumbocheck` tool, the `jumbo`
archiver and the adoption report.
"""

__version__ = "1.0.0"

# Who answers for the packages and the plugins, one value: `make dist` stamps JUMBO_MAINTAINER
# ("Name <address>") here as in debian/control and the RPM spec (scripts/make-tarball.sh); a
# tree that was not built into packages keeps the placeholder and says "unset".
__maintainer__ = "@JUMBO_MAINTAINER@"
