"""Pytrees users define: the registry (namedtuples, OrderedDict, dataclasses, custom classes), hj.tree /
hj.tree_util against jax.tree_util where jax is installed, and every consumer of pytrees: jit (arguments,
results, cache keys, paths in messages), grad, optimizers, checkpoints, export manifests, hj.testing."""
import collections
import dataclasses

import numpy as np
import pytest

import hlojit as hj
from hlojit.frontend import pytree

Point = collections.namedtuple("Point", "x y")


@hj.tree.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


@dataclasses.dataclass
class Layer:          # registered with explicit field lists, JAX's older signature
    kernel: object
    scale: float


hj.tree.register_dataclass(Layer, data_fields=["kernel"], meta_fields=["scale"])


@hj.tree_util.register_pytree_node_class
class Pair:
    """A custom class: its flatten gives (children, aux_data), JAX's convention."""

    def __init__(self, first, second, tag="pair"):
        self.first, self.second, self.tag = first, second, tag

    def tree_flatten(self):
        return (self.first, self.second), self.tag

    @classmethod
    def tree_unflatten(cls, tag, children):
        return cls(*children, tag=tag)


class Box:
    def __init__(self, items):
        self.items = list(items)


hj.tree.register_pytree_node(Box, lambda b: (b.items, len(b.items)), lambda n, children: Box(children))


def trees():
    """Trees of plain ints, each exercising a node kind (and None, an empty node)."""
    return [
        Point(1, [2, None]),
        collections.OrderedDict([("z", 1), ("a", (2, 3))]),
        collections.defaultdict(list, {"b": 1, "a": 2}),
        {"b": Params(1, 2, "relu"), "a": [Layer(3, 0.5)], "c": {"y": 4, "x": 5}},
        Pair(1, Point(2, 3), "t"),
        Box([1, {"k": 2}, None]),
        [None, (), {}],
        7,
    ]


# --- the registry and hj.tree ---

def test_leaves_order_and_round_trip():
    assert hj.tree.leaves(trees()) == [1, 2, 1, 2, 3, 2, 1, 3, 1, 2, 5, 4, 1, 2, 3, 1, 2, 7]
    for tree in trees():
        leaves, treedef = hj.tree.flatten(tree)
        rebuilt = hj.tree.unflatten(treedef, leaves)
        assert type(rebuilt) is type(tree) and hj.tree.structure(rebuilt) == treedef
        assert hash(treedef) == hash(hj.tree.structure(tree)) and treedef.num_leaves == len(leaves)
    # dict keys sort by repr, as hlojit's files always have (JAX sorts by value: 9 before 10)
    assert hj.tree.leaves({10: "ten", 9: "nine", "a": "a"}) == ["a", "ten", "nine"]
    ordered = hj.tree.unflatten(hj.tree.structure(trees()[1]), [0, 0, 0])
    assert list(ordered) == ["z", "a"]                      # an OrderedDict keeps its insertion order
    assert hj.tree.unflatten(hj.tree.structure(trees()[3]), range(5))["b"].activation == "relu"
    assert hj.tree.unflatten(hj.tree.structure(trees()[4]), [0, 0, 0]).tag == "t"


def test_structure_holds_the_class_and_its_static_fields():
    s = hj.tree.structure
    assert s(Point(1, 2)) != s((1, 2))
    assert s(collections.OrderedDict(a=1, b=2)) != s(collections.OrderedDict(b=1, a=2)) != s({"a": 1, "b": 2})
    assert s(Params(1, 2, "relu")) != s(Params(1, 2, "tanh")) and s(Params(1, 2)) == s(Params(5, 6))
    assert s(Pair(1, 2, "a")) != s(Pair(1, 2, "b"))
    assert repr(s({"p": Params(1, 2), "q": Point(3, None)})) == "TreeDef({'p': Params(w=*, b=*, activation='tanh'), " \
                                                               "'q': Point(x=*, y=None)})"
    assert [repr(c) for c in s(Pair(1, (2,))).children()] == ["TreeDef(*)", "TreeDef((*,))"]


def test_paths_name_fields():
    paths = []
    pytree.flatten({"p": Params(1, [2]), "q": Point(3, 4), "r": Pair(5, 6),
                    "o": collections.OrderedDict(k=7)}, paths=paths, path="x")
    assert paths == ["x['o']['k']", "x['p'].w", "x['p'].b[0]", "x['q'].x", "x['q'].y", "x['r'][0]", "x['r'][1]"]
    assert pytree.leaf_paths(pytree.flatten({"p": Params(1, [2])})[1], "x") == ["x['p'].w", "x['p'].b[0]"]


def test_map_reduce_all_and_is_leaf():
    tree = {"p": Params(1, 2), "q": [Point(3, 4), None]}
    doubled = hj.tree.map(lambda a: 2 * a, tree)
    assert doubled["p"] == Params(2, 4) and doubled["q"] == [Point(6, 8), None]
    assert hj.tree.map(lambda a, b: a + b, tree, doubled)["q"][0] == Point(9, 12)
    # a leaf of the first tree matches a whole subtree of the others
    assert hj.tree.map(lambda a, b: (a, b), [1, 2], [Point(1, 2), 3]) == [(1, Point(1, 2)), (2, 3)]
    assert hj.tree.reduce(lambda a, b: a + b, tree) == 10 and hj.tree.reduce(max, [], -1) == -1
    with pytest.raises(TypeError):
        hj.tree.reduce(max, [None])
    assert hj.tree.all([True, Point(1, 2)]) and not hj.tree.all({"a": 0}) and hj.tree.all(None)
    assert hj.tree.leaves([Point(1, 2), (3,)], is_leaf=lambda x: isinstance(x, Point)) == [Point(1, 2), 3]
    assert hj.tree.leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert hj.tree_util.tree_map is hj.tree.map and hj.tree_util.tree_leaves(Box([1, 2])) == [1, 2]


@pytest.mark.parametrize("first, other, message", [
    ([1, 2], [1, 2, 3], r"tree 2 has a list of 3 at the root where the first tree has a list of 2"),
    ({"a": 1}, {"b": 1}, r"tree 2 has a dict with keys \['b'\] at the root where the first tree has a dict "
                         r"with keys \['a'\]"),
    (Point(1, [2]), (1, [2]), r"tree 2 has a tuple of 2 at the root where the first tree has a Point \(namedtuple\)"),
    ({"p": Params(1, 2)}, {"p": Params(1, 2, "relu")}, r"at \['p'\] where the first tree has a Params"),
    ([None, 1], [3, 2], r"tree 2 has a leaf at \[0\] where the first tree has None"),
])
def test_map_mismatch_names_the_path(first, other, message):
    with pytest.raises(ValueError, match=message):
        hj.tree.map(lambda a, b: a, first, other)


def test_unflatten_and_registration_errors():
    with pytest.raises(ValueError, match=r"Point\(x=\*, y=\*\) has 2 leaves, got 3"):
        hj.tree.unflatten(hj.tree.structure(Point(1, 2)), [1, 2, 3])
    with pytest.raises(ValueError, match="Params is already a pytree node type"):
        hj.tree.register_dataclass(Params)
    with pytest.raises(ValueError, match="dict is already a pytree node type"):
        hj.tree.register_pytree_node(dict, lambda d: ((), None), lambda a, c: {})

    @dataclasses.dataclass
    class Three:
        a: int
        b: int
        c: int
    with pytest.raises(ValueError, match=r"missing \['c'\] \(drop_fields= leaves them out\)"):
        hj.tree.register_dataclass(Three, data_fields=["a"], meta_fields=["b"])
    with pytest.raises(ValueError, match=r"fields \['a'\] are both data and meta fields"):
        hj.tree.register_dataclass(Three, data_fields=["a", "b"], meta_fields=["a", "c"])
    with pytest.raises(TypeError, match="give both data_fields and meta_fields"):
        hj.tree.register_dataclass(Three, data_fields=["a"])
    with pytest.raises(TypeError, match="required for a class that is not a dataclass"):
        hj.tree.register_dataclass(Box)


def test_treedef_is_leaf():
    is_leaf = hj.tree_util.treedef_is_leaf
    assert is_leaf(hj.tree.structure(1)) and is_leaf(hj.tree.structure(None)) and is_leaf(hj.tree.structure(()))
    assert not is_leaf(hj.tree.structure([1])) and not is_leaf(hj.tree.structure(Point(1, 2)))


def test_matches_jax_tree_util():
    jax = pytest.importorskip("jax")
    jtu = jax.tree_util
    jtu.register_dataclass(Params)
    jtu.register_dataclass(Layer, data_fields=["kernel"], meta_fields=["scale"])
    jtu.register_pytree_node_class(Pair)
    jtu.register_pytree_node(Box, lambda b: (b.items, len(b.items)), lambda n, children: Box(children))
    for tree in trees():
        assert hj.tree_util.tree_leaves(tree) == jtu.tree_leaves(tree)
        mine, theirs = hj.tree_util.tree_map(lambda a: a + 1, tree), jtu.tree_map(lambda a: a + 1, tree)
        assert hj.tree.leaves(mine) == jtu.tree_leaves(theirs) and type(mine) is type(theirs)
        assert hj.tree_util.tree_reduce(lambda a, b: a * 10 + b, tree, 0) == \
            jtu.tree_reduce(lambda a, b: a * 10 + b, tree, 0)
        assert hj.tree_util.tree_all(tree) == jtu.tree_all(tree)
        assert hj.tree_util.treedef_is_leaf(hj.tree.structure(tree)) == \
            jtu.treedef_is_leaf(jtu.tree_structure(tree))
        assert hj.tree.structure(tree).num_leaves == jtu.tree_structure(tree).num_leaves
    pairs = [(Point(1, 2), (1, 2)), (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2)),
             (Params(1, 2), Params(3, 4)), (Params(1, 2), Params(1, 2, "relu")), (Pair(1, 2), Pair(3, 4)),
             ({"a": None}, {"a": 1}), ([1, 2], (1, 2))]
    for a, b in pairs:
        assert (hj.tree.structure(a) == hj.tree.structure(b)) == (jtu.tree_structure(a) == jtu.tree_structure(b))
    is_point = lambda x: isinstance(x, Point)   # noqa: E731
    assert hj.tree.leaves(trees(), is_leaf=is_point) == jtu.tree_leaves(trees(), is_leaf=is_point)


# --- jit: arguments, results, cache keys and messages ---

@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_jit_takes_and_returns_user_pytrees(backend):
    @hj.jit(backend=backend)
    def f(p, pt, od, pair, layer, x):
        act = hj.ops.tanh if p.activation == "tanh" else hj.ops.relu
        y = act(x @ p.w + p.b)
        return Point(y, pt.x * pt.y), collections.OrderedDict(z=od["z"] * 2, a=od["a"] + 1), \
            Pair(pair.second, pair.first * layer.scale, pair.tag), Params(y.sum(), layer.kernel, p.activation)

    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3, 2), (2,)])
    k, v = rng.standard_normal(3).astype(np.float32), np.arange(3, dtype=np.float32)
    args = (Params(w, b, "relu"), Point(v, v + 1), collections.OrderedDict(z=v, a=k), Pair(v, k, "tag"),
            Layer(k, 0.5), x)
    point, od, pair, params = f(*args)
    relu = np.maximum(x @ w + b, 0)
    assert type(point) is Point and type(od) is collections.OrderedDict and list(od) == ["z", "a"]
    np.testing.assert_allclose(np.asarray(point.x), relu, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(point.y), v * (v + 1))
    np.testing.assert_array_equal(np.asarray(od["z"]), 2 * v)
    np.testing.assert_array_equal(np.asarray(od["a"]), k + 1)
    assert isinstance(pair, Pair) and pair.tag == "tag"
    np.testing.assert_array_equal(np.asarray(pair.first), k)
    np.testing.assert_array_equal(np.asarray(pair.second), v * 0.5)
    assert params.activation == "relu"
    np.testing.assert_allclose(float(np.asarray(params.w)), relu.sum(), rtol=1e-5)
    f(*args)
    assert f.cache_info().hits == 1 and f.cache_info().misses == 1
    # a static field that changes is a new signature, and the miss says which argument changed
    f(Params(w, b, "tanh"), *args[1:])
    info = f.cache_info()
    assert info.misses == 2 and "p: Params(w=*, b=*, activation='relu') before, now Params(w=*, b=*, " \
                                "activation='tanh')" in info.miss_reasons[-1]
    assert "p.w: f32[3,2], p.b: f32[2], pt.x: f32[3], pt.y: f32[3], od['z']: f32[3]" in info.entries[-1]


def test_jit_messages_name_fields_and_unhashable_static_parts():
    f = hj.jit(lambda p: p.w, backend="reference")

    @dataclasses.dataclass
    class Unregistered:
        w: object
    with pytest.raises(hj.SignatureError, match=r"argument p\.b is a Unregistered; .*register_dataclass"):
        f(Params(np.ones(2), Unregistered(np.ones(2))))
    with pytest.raises(hj.SignatureError, match=r"p is a Params \(registered with register_dataclass\) whose "
                                                r"static part \(\['x'\],\) cannot be hashed"):
        f(Params(np.ones(2), np.ones(2), ["x"]))


def test_control_flow_carries_namedtuples():
    @hj.jit(backend="reference")
    def f(xs):
        def body(c, x):
            return Point(c.x + x, c.y + 1), Point(x * 2, c.y)
        carry, ys = hj.ops.scan(body, Point(hj.ops.zeros((), np.float32), hj.ops.zeros((), np.int32)), xs)
        doubled = hj.ops.fori_loop(0, 3, lambda i, c: Point(c.x * 2, c.y), carry)
        flipped = hj.ops.cond(carry.x > 100, lambda c: c, lambda c: Point(-c.x, c.y), carry)
        return carry, ys, doubled, flipped
    carry, ys, doubled, flipped = f(np.arange(4, dtype=np.float32))
    assert all(type(t) is Point for t in (carry, ys, doubled, flipped))
    assert (float(carry.x), int(carry.y), float(doubled.x), float(flipped.x)) == (6.0, 4, 48.0, -6.0)
    np.testing.assert_array_equal(np.asarray(ys.x), [0, 2, 4, 6])
    np.testing.assert_array_equal(np.asarray(ys.y), [0, 1, 2, 3])


# --- autodiff, optimizers, checkpoints, export, hj.testing ---

def _loss(p, x, y):
    return hj.ops.mean((x @ p.w + p.b - y) ** 2)


def test_grad_and_optimizer_step_on_a_dataclass():
    sgd, adam = hj.optim.sgd(0.1), hj.optim.adam(0.01)

    @hj.jit(backend="reference")
    def step(p, x, y):
        value, g = hj.value_and_grad(_loss)(p, x, y)
        _, pullback = hj.vjp(lambda q: q.w.sum() * 2, p)
        sgd_p, _ = sgd.update(p, g, sgd.init(p))
        adam_p, adam_state = adam.update(p, g, adam.init(p))
        return value, g, pullback(np.float32(1))[0], sgd_p, adam_p, adam_state

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((8, 2)).astype(np.float32)
    p = Params(rng.standard_normal((3, 2)).astype(np.float32), np.zeros(2, np.float32), "linear")
    residual = x @ p.w + p.b - y
    expected_w, expected_b = 2 * x.T @ residual / residual.size, 2 * residual.sum(0) / residual.size
    value, g, pulled, sgd_p, adam_p, adam_state = step(p, x, y)
    assert all(isinstance(t, Params) and t.activation == "linear"
               for t in (g, pulled, sgd_p, adam_p, adam_state["mu"], adam_state["nu"]))
    np.testing.assert_allclose(float(np.asarray(value)), (residual ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g.w), expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(g.b), expected_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(pulled.w), np.full((3, 2), 2.0))
    np.testing.assert_allclose(np.asarray(sgd_p.w), p.w - 0.1 * expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(sgd_p.b), p.b - 0.1 * expected_b, rtol=1e-5, atol=1e-6)
    # Adam's first step moves each weight by lr against its gradient's sign
    np.testing.assert_allclose(np.asarray(adam_p.w), p.w - 0.01 * np.sign(expected_w), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match=r"grads have structure \{'b': \*, 'w': \*\} but params have Params"):
        sgd.update(p, {"w": g.w, "b": g.b}, sgd.init(p))


def test_checkpoint_round_trip_with_classes(tmp_path):
    tree = {"params": Params(np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32), "relu"),
            "point": Point(np.int32(3), None), "order": collections.OrderedDict(z=1.5, a=np.zeros(2)), "step": 7}
    path = tmp_path / "ck.npz"
    hj.save_checkpoint(path, tree)
    like = hj.tree.map(np.zeros_like, tree)
    back = hj.load_checkpoint(path, like=like)
    assert isinstance(back["params"], Params) and back["params"].activation == "relu"
    assert isinstance(back["point"], Point) and back["point"].y is None and list(back["order"]) == ["z", "a"]
    for a, b in zip(hj.tree.leaves(back), hj.tree.leaves(tree)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert type(back["step"]) is int and back["step"] == 7
    with pytest.raises(hj.CheckpointError, match=r"holds \{.*'params': Params\(w=\*, b=\*, activation='relu'\).* "
                                                 r"pass like="):
        hj.load_checkpoint(path)
    with pytest.raises(hj.CheckpointError, match=r"but like is .*activation='tanh'"):
        hj.load_checkpoint(path, like={**like, "params": Params(like["params"].w, like["params"].b)})
    plain = {"order": collections.OrderedDict(z=np.ones(1), a=np.zeros(1))}   # no classes: loads without like
    hj.save_checkpoint(path, plain)
    assert list(hj.load_checkpoint(path)["order"]) == ["z", "a"]


def test_export_writes_ordered_dicts_and_refuses_classes(tmp_path):
    def f(od, x):
        return collections.OrderedDict(s=od["s"] * x, a=od["a"] + x)
    x = np.arange(3, dtype=np.float32)
    od = collections.OrderedDict(s=x, a=x)
    hj.export(f, od, x, path=tmp_path / "f", target="vmvx")
    out = hj.load(tmp_path / "f")(od, x)
    assert type(out) is collections.OrderedDict and list(out) == ["s", "a"]
    np.testing.assert_array_equal(np.asarray(out["s"]), x * x)
    with pytest.raises(hj.SignatureError, match="argument od has the structure"):
        hj.load(tmp_path / "f")({"s": x, "a": x}, x)
    with pytest.raises(ValueError, match=r"p is a Params \(registered with register_dataclass\), which a file "
                                         r"cannot hold.*dataclasses\.asdict"):
        hj.export(lambda p: p.w, Params(x, x), path=tmp_path / "g", target="vmvx")
    with pytest.raises(ValueError, match=r"result is a Point \(namedtuple\)"):
        hj.export(lambda x: Point(x, x), x, path=tmp_path / "h", target="vmvx")


def test_testing_compares_user_pytrees():
    def f(p, x):
        return Point(hj.ops.tanh(x @ p.w + p.b), p.b * 2)
    x, w, b = np.ones((2, 3), np.float32), np.full((3, 2), 0.1, np.float32), np.arange(2, dtype=np.float32)
    report = hj.testing.assert_targets_agree(f, Params(w, b), x, targets=("iree:cpu",))
    assert report.ok
