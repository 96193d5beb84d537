"""`python -m bench SUBCOMMAND [args]`: probe, ecmp, archive, report, schedule, schedule_noise and
pscheduler (their modules bench/<name>.py, each with main(argv)), imported lazily."""

import importlib
import sys

COMMANDS = ("probe", "ecmp", "archive", "report", "schedule", "schedule_noise", "pscheduler")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        sys.stderr.write("usage: python -m bench {%s} [args]\n" % "|".join(COMMANDS))
        return 2
    try:
        module = importlib.import_module("bench." + argv[0])
    except ImportError as err:
        sys.stderr.write("bench %s is not available: %s\n" % (argv[0], err))
        return 2
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
