"""Run a folder of StableHLO test files (openxla/stablehlo interpreter style) on hlojit's backends and print a
per-op pass/fail table.

    python tools/stablehlo_conformance.py tests/data/stablehlo
    python tools/stablehlo_conformance.py path/to/stablehlo/tests/interpret --backends reference iree:cpu -v
    python tools/stablehlo_conformance.py tests/data/stablehlo --backends iree:cuda   # compiled, not run

The test files' `check.expect_*` comparisons are made here after each run (hlojit/conformance.py says how).
With -v every failing case is listed with its first error line.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hlojit import conformance  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--backends", nargs="+", default=["reference", "iree:cpu", "iree:vmvx"])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every failing case")
    parser.add_argument("--compile-only", nargs="*", default=["iree:cuda"],
                        help="backends whose cases are compiled, not run (default: iree:cuda, no GPU here)")
    args = parser.parse_args(argv)
    outcomes = conformance.run_folder(args.folder, args.backends, compile_only=args.compile_only)
    print(conformance.table(outcomes, args.backends))
    if set(args.compile_only) & set(args.backends):
        print(f"(compiled, not run: {', '.join(b for b in args.backends if b in args.compile_only)})")
    if args.verbose:
        for o in outcomes:
            if not o.passed:
                print(f"FAIL {o.backend} {o.case.name}: {o.detail}")
    return 0 if all(o.passed for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
