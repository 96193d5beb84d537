"""jumbo-report's options for the action list and the targets (--owners, --no-resolve,
--resolve-budget, --target-date) and the hook they make (actions.Actions).

JUMBO_NO_RESOLVE=1 in the environment is --no-resolve: for a host with no DNS (every lookup
would wait out the budget), and the test suite's setting."""

import os

from .actions import Actions
from .owners import DEFAULT_BUDGET, Resolver, read_owners
from .targets import parse_dates

NO_RESOLVE_ENV = "JUMBO_NO_RESOLVE"


def add_arguments(p):
    p.add_argument("--owners", metavar="FILE",
                   help='JSON {"prefixes": [{"prefix", "site", "as", "owner", "contact"}]}: who '
                   "owns the hops in those prefixes (overrides the owner read from the paths)")
    p.add_argument("--no-resolve", dest="resolve", action="store_false",
                   help="do not look up the reverse names of the action list's hops (env %s=1 too)"
                   % NO_RESOLVE_ENV)
    p.add_argument("--resolve-budget", metavar="SECONDS", type=float, default=DEFAULT_BUDGET,
                   help="all reverse-name lookups of one report end within this (%g)" % DEFAULT_BUDGET)
    p.add_argument("--target-date", metavar="NAME=YYYY-MM-DD", action="append",
                   help="the date of a target (DC26, DC28); default the last day of its year")


def hook(args):
    """The Actions hook the options ask for (ReportError on a bad owners file or date)."""
    owners = read_owners(args.owners) if args.owners else None
    resolve = args.resolve and os.environ.get(NO_RESOLVE_ENV, "") in ("", "0")
    resolver = Resolver(budget=args.resolve_budget) if resolve else None
    return Actions(owners=owners, resolver=resolver, dates=parse_dates(args.target_date))
