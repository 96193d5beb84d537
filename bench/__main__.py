"""`python -m bench SUBCOMMAND [args]`: probe, ecmp, archive, report, schedule, schedule-noise,
pscheduler and reflector-load (their modules bench/<name>.py, `-` written `_`, each with
main(argv)), imported lazily."""

import importlib
import sys

COMMANDS = ("probe", "ecmp", "archive", "report", "report-scale", "schedule", "schedule-noise", "pscheduler",
            "reflector-load")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        sys.stderr.write("usage: python -m bench {%s} [args]\n" % "|".join(COMMANDS))
        return 2
    try:
        module = importlib.import_module("bench." + argv[0].replace("-", "_"))
    except ImportError as err:
        sys.stderr.write("bench %s is not available: %s\n" % (argv[0], err))
        return 2
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
