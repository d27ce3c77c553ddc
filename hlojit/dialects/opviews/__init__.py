"""Python dialect modules, empty, for the dialects iree-base-compiler registers without one (stablehlo, chlo,
vhlo, sdy).

Why: each time the MLIR bindings hand out an op of a dialect, they import `<prefix>.<dialect>` for its op
classes, and they remember only imports that succeeded. With no `iree.compiler.dialects.stablehlo`, every
StableHLO op seen by a walk paid a failed import (a search of sys.path): 634k of them, 30 s, in the rewrites
of one 600-op module. Found here, the import succeeds once and the ops stay generic `OpView`s, as before.
"""
from iree.compiler import ir

if __name__ not in ir._globals.dialect_search_modules:
    ir._globals.append_dialect_search_prefix(__name__)
