"""The seed experiment: f(x) = x**4 + 1 called many times on one backend.

    python samples/x4_plus_1.py --calls 100000 --backend iree:cpu
"""
import argparse

import numpy as np

import hlojit as hj
from hlojit.tour import run_x4_plus_1


def f(x):
    return x**4 + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--backend", default=None, help="iree:cpu (default), iree:vmvx, iree:cuda or reference")
    args = parser.parse_args()

    fast = hj.jit(f, backend=args.backend)
    print(fast.lower(np.float32(3.0)).mlir)
    run_x4_plus_1(fast, args.calls)
    print(fast.cache_info())


if __name__ == "__main__":
    main()
