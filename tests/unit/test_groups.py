"""Groups and actions checked against brute-force axioms written independently of groups.py."""

import itertools

import numpy as np
import pytest

from reasonlab.errors import ConfigError
from reasonlab.tasks.groups import (
    GroupAction,
    cyclic,
    dihedral,
    from_spec,
    from_table,
    symmetric,
)


def brute_force_group_axioms(table: list[list[int]]) -> None:
    """Plain-loop check of closure, associativity, identity and inverses."""
    n = len(table)
    els = range(n)
    assert all(0 <= table[a][b] < n for a in els for b in els), "closure"
    for a, b, c in itertools.product(els, repeat=3):
        assert table[table[a][b]][c] == table[a][table[b][c]], ("assoc", a, b, c)
    ids = [e for e in els if all(table[e][g] == g == table[g][e] for g in els)]
    assert len(ids) == 1, "identity"
    e = ids[0]
    for g in els:
        assert any(table[g][h] == e == table[h][g] for h in els), ("inverse", g)


def brute_force_action_axioms(action: GroupAction) -> None:
    t, a = action.group.table.tolist(), action.act.tolist()
    G, X = len(t), action.n_points
    e = action.group.identity
    for x in range(X):
        assert a[e][x] == x
    for g, h, x in itertools.product(range(G), range(G), range(X)):
        assert a[t[g][h]][x] == a[g][a[h][x]]


ACTIONS = {
    "z2": cyclic(2),
    "z5": cyclic(5),
    "s3": symmetric(3),
    "s3_points": symmetric(3, on="points"),
    "s4_points": symmetric(4, on="points"),
    "d4": dihedral(4),
    "d5_points": dihedral(5, on="points"),
}


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_axioms_hold(name):
    action = ACTIONS[name]
    table = action.group.table.tolist()
    brute_force_group_axioms(table)
    brute_force_action_axioms(action)
    g = action.group
    e = g.identity
    assert all(table[x][int(g.inverse[x])] == e for x in range(g.order))
    assert len(set(g.elements)) == g.order
    assert all(" " not in n for n in g.elements + action.points)


def test_group_orders_and_names():
    assert symmetric(3).group.order == 6 and symmetric(4).group.order == 24
    assert dihedral(4).group.order == 8
    assert set(symmetric(3).group.elements) == {"()", "(12)", "(13)", "(23)", "(123)", "(132)"}
    z2 = cyclic(2)
    assert z2.group.elements == ("+", "-") and z2.points == ("+1", "-1")
    # Task 1 semantics: - flips the sign, + keeps it
    assert z2.points[z2.act[1, 0]] == "-1" and z2.points[z2.act[0, 1]] == "-1"


def test_symmetric_is_permutation_composition():
    """(12) then (23), applied to points: (23)(12) maps 1->3 under 'apply h then g'."""
    s3 = symmetric(3, on="points")
    g, h = s3.group.index("(23)"), s3.group.index("(12)")
    gh = s3.group.compose(g, h)
    for x in range(3):
        assert s3.act[gh, x] == s3.act[g, s3.act[h, x]]
    assert s3.act[gh, s3.point_index("1")] == s3.point_index("3")
    # S3 is not abelian (LEGO Task 2)
    assert s3.group.compose(g, h) != s3.group.compose(h, g)


def test_dihedral_relations():
    d = dihedral(6, on="points")
    G = d.group
    r1, s0 = G.index("r1"), G.index("s0")
    # s r s = r^-1
    assert G.compose(G.compose(s0, r1), s0) == G.inverse[r1]
    # rotations act by v -> v + k
    assert d.act[G.index("r2"), d.point_index("5")] == d.point_index("1")


def test_from_table_accepts_a_group():
    z3 = from_table(["0", "1", "2"], [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    assert z3.identity == 0 and z3.inverse.tolist() == [0, 2, 1]


@pytest.mark.parametrize(
    "table, match",
    [
        # closed, has identity a, every element invertible, but not associative
        ([[0, 1, 2], [1, 0, 0], [2, 0, 0]], "not associative"),
        # a*b == b*a == b for all; b has no inverse (monoid {1, 0} under multiplication)
        ([[0, 1], [1, 1]], "missing inverse"),
        ([[0, 1], [1, 2]], "not closed"),
        # left-zero semigroup x*y = x: associative, but nothing acts as an identity
        ([[0, 0], [1, 1]], "no identity"),
    ],
)
def test_from_table_rejects_non_groups(table, match):
    names = ["a", "b", "c"][: len(table)]
    with pytest.raises(ConfigError, match=match):
        from_table(names, table)


def test_from_table_rejects_bad_names_and_shapes():
    with pytest.raises(ConfigError, match="without spaces"):
        from_table(["a b", "c"], [[0, 1], [1, 0]])
    with pytest.raises(ConfigError, match="distinct"):
        from_table(["a", "a"], [[0, 1], [1, 0]])
    with pytest.raises(ConfigError, match="shape"):
        from_table(["a", "b"], [[0, 1, 0], [1, 0, 1]])


def test_action_from_table_checks_axioms():
    z2 = cyclic(2).group
    ok = GroupAction.from_table(z2, ["x", "y"], np.array([[0, 1], [1, 0]]))
    assert ok.act.tolist() == [[0, 1], [1, 0]]
    with pytest.raises(ConfigError, match="not an action"):
        GroupAction.from_table(z2, ["x", "y"], np.array([[1, 0], [1, 0]]))


def test_from_spec():
    assert from_spec("s3_points").n_points == 3
    assert from_spec("s3").n_points == 6
    assert from_spec("d4_points").n_points == 4 and from_spec("d4").n_points == 8
    for bad in ["q3", "z2_points", "s9", "d2"]:
        with pytest.raises(ConfigError):
            from_spec(bad)
