"""The `hlojit` command: `python -m hlojit tour`."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="hlojit", description="JIT-compile Python array functions with IREE")
    commands = parser.add_subparsers(dest="command", required=True)
    tour = commands.add_parser("tour", help="f(x) = x**4 + 1 on every backend: StableHLO, compile vs cached "
                                            "call, calls/s, and fusion")
    tour.add_argument("--calls", type=int, default=100_000, help="calls per backend (default 100,000)")
    tour.add_argument("--backend", action="append", help="a backend to run (repeatable; default: all that run here)")
    args = parser.parse_args(argv)
    if args.command == "tour":
        from . import tour as tour_module
        kwargs = {"backends": tuple(args.backend)} if args.backend else {}
        tour_module.main(calls=args.calls, **kwargs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
