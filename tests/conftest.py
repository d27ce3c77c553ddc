"""Shared test fixtures: the backends every numeric test runs on, and tolerances per dtype."""
import os
import sys
import tempfile

import numpy as np
import pytest

# Bytecode: where PYTHONDONTWRITEBYTECODE is set (as on the VMs this suite is timed on), every Python process the
# suite starts (the xdist workers, their compile workers, the README's blocks, MPI ranks, CLI runs ...) compiled
# hlojit's sources again: `import hlojit` took 1.4 s against 0.45 from bytecode (2-vCPU Zen 3), and pytest rewrote
# every test module's asserts in each worker. The suite writes bytecode to a folder outside the tree instead
# (PYTHONPYCACHEPREFIX, this process and those it starts), which leaves the tree as clean as the setting asks
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    os.environ.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(),
                                                              f"hlojit-test-bytecode-{getattr(os, 'getuid', int)()}"))
    sys.pycache_prefix, sys.dont_write_bytecode = os.environ["PYTHONPYCACHEPREFIX"], False
# iree:cpu compiles with one pinned flag set in the suite: measuring this machine's (pipeline/tuning.py) would
# cost each worker ~10 s and make the flags the suite checks depend on the machine. Pinned here, before any
# test module is collected (some compile at import), so the process-wide backend settles on it; test_tuning
# unsets it for its own backends only
os.environ["HLOJIT_CPU_FLAGS"] = "data-tiling"
# Tiered compilation (pipeline/tiered.py) swaps builds in the background at a time no test decides: off in the
# suite (and the subprocesses it starts); tests/test_tiered.py turns it on for its own functions
os.environ["HLOJIT_TIERED"] = "0"
# Big programs compile as two halves at once (pipeline/halves.py) to use a second core the suite's two workers
# already keep busy: there it only added work (+2 CPU-minutes of the suite, 28.9 against 26.8, the halves of its
# big table modules compiling ~10% longer than each whole). Off in the suite; tests/test_halves.py turns it on
os.environ["HLOJIT_COMPILE_HALVES"] = "0"
# Two xdist workers keep both cores compiling: MLIR's thread pool in each compile then only adds work (8-15% more
# compiler CPU for the same vmfb, pipeline/sessions.py). Each compile on its caller's thread, in the suite and the
# subprocesses it starts
os.environ["HLOJIT_COMPILE_THREADS"] = "1"

import hlojit as hj  # noqa: E402


# Every target that runs on this machine; iree:cuda only compiles here (see test_backends.py).
BACKENDS = ["reference", "iree:cpu", "iree:vmvx"]

TOLERANCES = {  # dtype name -> (rtol, atol)
    "bool": (0, 0), "int8": (0, 0), "int16": (0, 0), "int32": (0, 0), "int64": (0, 0),
    "uint8": (0, 0), "uint16": (0, 0), "uint32": (0, 0), "uint64": (0, 0),
    "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-6, 1e-6), "float64": (1e-12, 1e-12),
    "complex64": (1e-6, 1e-6), "complex128": (1e-12, 1e-12),
}


# Where the library's functions (linalg, fft, the numpy composites, Winograd's transforms, gradients of
# convolutions and pools, vmap's batched programs) are checked: not on iree:vmvx. vmvx lowers each StableHLO op its own way (no LLVM: its own kernels, and pipeline/vmvx_rewrites.py's
# f64/f16/bf16/complex fixes), so the op tables (test_ops*, test_complex's table, test_legalize*, the
# conformance bundles, the runtime tests) check every op in every dtype there. A library function is those ops
# composed, after the same rewrites as on iree:cpu and through the same flow/stream pipeline; on vmvx its
# module would compile again (test_linalg_complex's alone took 85 s of the suite's 15 minutes) to check the
# same ops once more. A library test that runs on vmvx says what vmvx lowers differently there (test_linalg_svd's
# polar program, which no other IREE target runs: llvm-cpu's svd is pipeline/svd_kernel.py's).
LIBRARY_BACKENDS = [b for b in BACKENDS if b != "iree:vmvx"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def assert_close(actual, expected, dtype=None, scale=1.0):
    """Compare a result with numpy's, with the tolerance of its dtype (times `scale`, for long reductions
    or transcendental functions whose last bits differ between libm implementations)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    dtype = np.dtype(dtype or expected.dtype)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert actual.dtype == dtype, f"dtype {actual.dtype} != {dtype}"
    rtol, atol = TOLERANCES[dtype.name]
    if rtol == 0:
        np.testing.assert_array_equal(actual, expected.astype(dtype))
    else:
        wide = np.complex128 if dtype.kind == "c" else np.float64
        np.testing.assert_allclose(actual.astype(wide), expected.astype(wide),
                                   rtol=rtol * scale, atol=atol * scale, equal_nan=True)


@pytest.fixture(autouse=True, scope="session")
def _compile_cache_in_a_temp_dir(tmp_path_factory):
    """The suite never reads or fills the user's ~/.cache/hlojit: its compile cache lives in a temp folder
    (subprocesses the tests start inherit it through the environment). iree:cpu compiles with the plain
    data-tiling flags: measuring this machine's fastest set (pipeline/tuning.py, tests/test_tuning.py) would cost
    each worker ~10 s and make the flags the suite checks depend on the machine."""
    patch = pytest.MonkeyPatch()
    if os.environ.get("PYTEST_XDIST_WORKER"):   # one folder for the run's workers: a program compiles once
        folder = tmp_path_factory.getbasetemp().parent / "hlojit-compile-cache"
        folder.mkdir(exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("hlojit-compile-cache")
    patch.setenv("HLOJIT_CACHE_DIR", str(folder))
    hj.backends.get("iree:cpu").target   # the process-wide backend settles its flag set while the pin holds
    yield
    patch.undo()


def pytest_configure(config):
    config.addinivalue_line("markers", "shares_compiles: the test's cases on one backend share one compiled module "
                                       "(a table): under xdist they run on one worker")


def pytest_addoption(parser):
    parser.addoption("--deep", action="store_true", default=False,
                     help="hlojit: also run the deep tier (tests/conftest.py's DEEP_TIER): tests that check again, "
                          "in another dtype, target or form, code the default run already checks")


# The deep tier: tests `pytest` leaves out and `pytest --deep` runs, by module::name[parameters] (a name alone: all
# its parameters), each with the default-run test that checks the same code. Why a tier: the suite is nearly all
# IREE compiles and must finish within CI's 15 minutes on 2 cores; what is here repeats a path in the f32 twin of
# an f64 kernel test (the kernels are one text at either lane width), on a second target of target-independent
# code, or in a compile-only check another table makes of the same ops. CPU seconds each on the 2-vCPU Zen 3
# (2026-12-07, in the suite). Nothing that is the only check of something belongs here. --deep also runs the
# programs of race tests three times instead of once (race_runs).
DEEP_TIER = {
    "test_spectral_kernels::test_svd_kernel_gives_numpy_singular_values_and_orthonormal_vectors[float32]":
        "11.8 s: the svd kernel's text at f32 lanes; [float64] runs the same shapes' paths and more",
    "test_spectral_kernels::test_eigh_kernel_gives_numpy_eigenvalues_and_orthonormal_eigenvectors[float32]":
        "8.5 s: the eigh kernel at f32 lanes; [float64] runs the same shapes",
    "test_spectral_kernels::test_svd_and_eigh_kernels_of_matrices_far_from_one[float32-1e+30]":
        "4.0 s: the kernels' scaling at f32; [float64-1e+200] checks the same code",
    "test_kernels::test_lu_kernel_gives_lapack_pivots_and_factors[float32]": "4.5 s: [float64], the same kernel",
    "test_kernels::test_qr_kernels_match_lapack_signs_and_the_reference[float32]": "5.1 s: [float64], the same kernels",
    "test_kernels::test_solve_det_slogdet_inv_through_the_lu_kernel[float32]": "3.3 s: [float64], the same kernel",
    "test_random_distributions::test_distributions_are_right[iree:cpu]":
        "11.3 s: the transforms are elementwise ops the op tables run on iree:cpu; [reference] checks the "
        "distributions, test_random every target's bits, test_jax_numbers[iree:cpu] a transform on cpu",
    "test_random_distributions::test_jax_numbers[iree:vmvx]": "3.1 s: [iree:cpu] and [reference]",
    "test_ops_numpy::test_compiles_for_cuda":
        "13 s: sorts, scans and products composed; test_ops_math's test_cuda_compiles_every_op compiles each for cuda",
    "test_complex_special_values::test_special_values_are_numpys[iree:cpu-complex64]":
        "8.3 s: complex_pairs' parts, as [iree:cpu-complex128] and [iree:vmvx-complex64] run them",
    "test_chlo_expansion::test_zeta_and_polygamma_match_scipy[iree:cpu-f32]": "3.0 s: the expansion, [iree:cpu-f64]",
    "test_chlo_expansion::test_zeta_and_polygamma_match_scipy[iree:vmvx-f32]": "3.8 s: [iree:vmvx-f64]",
    "test_linalg_convergence::test_eigh_sweeps_stop_at_rounding_floor[float32-iree:cpu]":
        "2.4 s: [float64-iree:cpu], the same sweeps; [float32-reference] the f32 floor",
    "test_benchmarks::test_quick_run_writes_one_table_naming_the_machine_and_versions":
        "7.5 s: compiles and times benchmarks/ (not the library); the other test_benchmarks tests check its tables",
}


def pytest_terminal_summary(terminalreporter, config):
    """Says the deep tier was left out (under xdist pytest's own summary does not count the workers'
    deselections)."""
    if not config.getoption("--deep"):
        terminalreporter.write_line(f"deep tier left out: conftest.DEEP_TIER's {len(DEEP_TIER)} entries and race "
                                    f"tests' repeats (pytest --deep runs them)")


@pytest.fixture
def race_runs(request) -> int:
    """How many times a test runs a program whose failure would be a race (a process exiting while IREE's threads
    still work): once, three times with --deep (each run a new Python process: ~3 CPU-s)."""
    return 3 if request.config.getoption("--deep") else 1


def _deep_key(item) -> str | None:
    """The DEEP_TIER entry naming `item`, or None."""
    module = item.module.__name__
    for key in (f"{module}::{item.name}", f"{module}::{item.originalname}"):
        if key in DEEP_TIER:
            return key
    return None


def _split_off_the_deep_tier(config, items):
    """Without --deep, DEEP_TIER's tests are deselected (pytest's summary counts them). An entry that names no
    test of a module collected is an error: a renamed test must not leave the tier silently."""
    collected = {item.module.__name__ for item in items}
    keys = [_deep_key(item) for item in items]
    stale = [key for key in DEEP_TIER if key.split("::")[0] in collected and key not in keys]
    if stale:
        raise pytest.UsageError(f"conftest.DEEP_TIER names no collected test: {stale}")
    if config.getoption("--deep"):
        return
    deep = [item for item, key in zip(items, keys) if key]
    if deep:
        config.hook.pytest_deselected(items=deep)
        items[:] = [item for item, key in zip(items, keys) if not key]


# The test files holding the suite's longest work units (a test, or a table group, of 8-31 CPU seconds: measured
# per test on the 2-vCPU Xeon, 2026-12-02), in that order. xdist's loadgroup hands out units by their count of
# tests first (--loadscope-reorder, its default: the table groups of many cases go out first), and units of the
# same count (most are single tests) in collection order: these files' go first and the short tests fill the
# end, instead of one worker compiling test_tuning's Winograd test (31 s, collected near the end by name)
# alone while the other has nothing left.
LONGEST_FIRST = ["test_linalg_svd", "test_linalg_complex", "test_tuning", "test_linalg", "test_linalg_eig", "test_winograd", "test_complex_pairs", "test_complex", "test_complex_special_values",
                 "test_random_distributions", "test_readme", "test_ops_numpy", "test_conv_grads", "test_memory",
                 "test_fft", "test_linalg_divide_conquer", "test_ops_math", "test_chlo_expansion", "test_vmap",
                 "test_conformance"]


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the xdist_group marks into the node ids
def pytest_collection_modifyitems(config, items):
    """The op tables compile one module per (backend, group) and share it among that group's tests: under
    pytest-xdist (`--dist loadgroup`) those tests go to one worker, so no module compiles twice. A test
    marked `shares_compiles` without a `group` parameter shares one module per backend. The files of
    LONGEST_FIRST are collected first; DEEP_TIER's tests run with --deep only."""
    _split_off_the_deep_tier(config, items)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__, len(rank)))
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "backend" in params and ("group" in params or item.get_closest_marker("shares_compiles")):
            group = f"{item.module.__name__}:{params['backend']}:{params.get('group', '')}"
            item.add_marker(pytest.mark.xdist_group(group))


def group_module(cases: list):
    """One function computing every (id, fn, inputs, expected) case of a table group: one module to compile."""
    return lambda inputs: [case[1](*args) for case, args in zip(cases, inputs)]


def group_result(results: dict, backend: str, group: str, cases: list, index: int):
    """Case `index` of a table group whose cases are (id, fn, inputs, expected): every case of the group
    comes from ONE compiled module (memoised in `results`), or raises the exception compiling it raised."""
    if (backend, group) not in results:
        try:
            results[backend, group] = hj.jit(group_module(cases), backend=backend)([case[2] for case in cases])
        except Exception as e:  # every case of the module reports it
            results[backend, group] = e
    outputs = results[backend, group]
    if isinstance(outputs, Exception):
        raise outputs.with_traceback(None)   # shared by the group's cases: not the traceback the last grew
    return outputs[index]


def line_in(path: str, fragment: str) -> int:
    """The number of the line of `path` that holds `fragment` (errors must point at the user's line)."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if fragment in line and "line_of(" not in line:
                return number
    raise KeyError(fragment)
