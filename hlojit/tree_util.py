"""`hj.tree_util`: jax.tree_util's names for `hj.tree`'s functions (`tree_map` is `hj.tree.map` ...)."""
from .frontend import pytree
from .frontend.pytree import register_dataclass, register_pytree_node, register_pytree_node_class
from .tree import TreeDef
from .tree import all as tree_all
from .tree import flatten as tree_flatten
from .tree import leaves as tree_leaves
from .tree import map as tree_map
from .tree import reduce as tree_reduce
from .tree import structure as tree_structure
from .tree import unflatten as tree_unflatten

PyTreeDef = TreeDef      # jax.tree_util's name for the structure type

__all__ = ["PyTreeDef", "TreeDef", "register_dataclass", "register_pytree_node", "register_pytree_node_class",
           "tree_all", "tree_flatten", "tree_leaves", "tree_map", "tree_reduce", "tree_structure", "tree_unflatten",
           "treedef_is_leaf"]


def treedef_is_leaf(treedef) -> bool:
    """jax's: true for a structure of one node without children (a leaf, None, an empty tuple...)."""
    return not pytree.children_of(treedef)
