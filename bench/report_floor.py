"""The floor under the report at scale: what any report listing every path must do, and
nothing else. It reads each path's latest result from the store (the reader's own `latest`)
and writes the per-path list (each row's values, JSON arrays a chunk at a time, as the
report's `paths`): no model, no sections, no history. bench report-scale times it in the
same launcher as the report, beside it, so that each figure can be read against what the
store and the interpreter cost at that size on that machine.

    python -m bench.report_floor --store URL --out FILE
"""

import argparse
import json
import sys

CHUNK = 2048


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.report_floor")
    p.add_argument("--store", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    from jumbo.archive.queries import Window, open_queries
    queries = open_queries(args.store)
    rows = 0
    try:
        with open(args.out, "w") as out:
            out.write('{"paths": [\n')
            chunk = []
            separator = ""
            for row in queries.latest(Window(), 9000):
                chunk.append(list(row))
                rows += 1
                if len(chunk) == CHUNK:
                    out.write(separator + json.dumps(chunk, separators=(",", ":"))[1:-1])
                    separator = ",\n"
                    chunk = []
            if chunk:
                out.write(separator + json.dumps(chunk, separators=(",", ":"))[1:-1])
            out.write("\n]}\n")
    finally:
        queries.close()
    sys.stderr.write("floor: %d rows\n" % rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
