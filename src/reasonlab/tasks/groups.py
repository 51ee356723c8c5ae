"""Finite groups and their actions on finite sets, as integer tables.

LEGO (Zhang et al. 2022, §2) is defined for any group G acting on a set X: a clause `a = g x`
assigns to `a` the element g.x of X. Everything here is a lookup table so that the LEGO
generator can apply an op to a whole batch with one fancy-indexing call.

Conventions (used everywhere in reasonlab):
- elements and points are ints 0..|G|-1 and 0..|X|-1; their names are strings, each one
  token without whitespace, used in the readable text form;
- `table[g, h]` is the composition g*h = "apply h, then g" (function composition g o h);
- `act[g, x]` is g.x, and an action satisfies act[g*h, x] == act[g, act[h, x]] and
  act[e, x] == x.

Constructors: `cyclic`, `symmetric`, `dihedral` (each returns a GroupAction), `from_table`
(returns a Group after checking the group axioms), `GroupAction.on_itself`,
`GroupAction.from_table`, and `from_spec` for the preset names used by LEGO configs
("z2", "s3", "s3_points", "d4", "d5_points", ...).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from reasonlab.errors import ConfigError

On = Literal["self", "points"]


@dataclass(frozen=True, eq=False)
class Group:
    """A finite group: element names and a multiplication table (table[g, h] = g*h, h first)."""

    name: str
    elements: tuple[str, ...]
    table: np.ndarray  # [G, G] int64, read-only

    def __post_init__(self) -> None:
        table = np.array(self.table, dtype=np.int64)
        table.flags.writeable = False
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(self.elements)})
        # identity: the e with e*g == g for every g (unique in a group)
        g = np.arange(len(self.elements))
        e = int(np.flatnonzero((table == g[None, :]).all(axis=1))[0])
        inverse = np.argmax(table == e, axis=1)
        inverse.flags.writeable = False
        object.__setattr__(self, "_identity", e)
        object.__setattr__(self, "_inverse", inverse)

    @property
    def order(self) -> int:
        return len(self.elements)

    @property
    def identity(self) -> int:
        return self._identity  # type: ignore[attr-defined]

    @property
    def inverse(self) -> np.ndarray:
        """[G] int64: inverse[g] * g == e."""
        return self._inverse  # type: ignore[attr-defined]

    def index(self, name: str) -> int:
        return self._index[name]  # type: ignore[attr-defined]

    def compose(self, g: int | np.ndarray, h: int | np.ndarray) -> int | np.ndarray:
        """g*h: apply h, then g. Vectorised over arrays of element ids."""
        return self.table[g, h]

    def __repr__(self) -> str:
        return f"Group({self.name}, order={self.order})"


@dataclass(frozen=True, eq=False)
class GroupAction:
    """A group acting on a finite set X of named points: act[g, x] = g.x."""

    group: Group
    points: tuple[str, ...]
    act: np.ndarray  # [G, X] int64, read-only
    name: str = ""

    def __post_init__(self) -> None:
        act = np.array(self.act, dtype=np.int64)
        act.flags.writeable = False
        object.__setattr__(self, "act", act)
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(self.points)})
        if not self.name:
            object.__setattr__(self, "name", self.group.name)

    @property
    def n_points(self) -> int:
        return len(self.points)

    def point_index(self, name: str) -> int:
        return self._index[name]  # type: ignore[attr-defined]

    def __call__(self, g: int | np.ndarray, x: int | np.ndarray) -> int | np.ndarray:
        """g.x, vectorised over arrays of ids."""
        return self.act[g, x]

    @classmethod
    def on_itself(cls, group: Group, points: tuple[str, ...] | None = None) -> GroupAction:
        """Left multiplication g.x = g*x; points are named like the elements unless given."""
        pts = tuple(points) if points is not None else group.elements
        if len(pts) != group.order:
            raise ConfigError(f"on_itself: need {group.order} point names, got {len(pts)}")
        _check_names(pts, "point")
        return cls(group, pts, group.table, name=f"{group.name} on itself")

    @classmethod
    def from_table(
        cls, group: Group, points: list[str] | tuple[str, ...], act: np.ndarray | list
    ) -> GroupAction:
        """Build an action from an explicit [G, X] table, checking the action axioms."""
        pts = tuple(points)
        _check_names(pts, "point")
        a = np.asarray(act)
        if a.shape != (group.order, len(pts)):
            raise ConfigError(
                f"action table has shape {a.shape}; expected ({group.order}, {len(pts)})"
            )
        if not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= len(pts):
            raise ConfigError(f"action table entries must be point ids in 0..{len(pts) - 1}")
        x = np.arange(len(pts))
        if not (a[group.identity] == x).all():
            bad = int(np.flatnonzero(a[group.identity] != x)[0])
            raise ConfigError(f"not an action: e.x != x for x={pts[bad]}")
        # compatibility: (g*h).x == g.(h.x) for all g, h, x
        lhs = a[group.table]  # [G, G, X]: (g*h).x
        rhs = a[np.arange(group.order)[:, None, None], a[None, :, :]]  # g.(h.x)
        if not (lhs == rhs).all():
            g, h, xx = (int(i) for i in np.argwhere(lhs != rhs)[0])
            el = group.elements
            raise ConfigError(
                f"not an action: (g*h).x != g.(h.x) for g={el[g]}, h={el[h]}, x={pts[xx]}"
            )
        return cls(group, pts, a)

    def __repr__(self) -> str:
        return f"GroupAction({self.name}, |G|={self.group.order}, |X|={self.n_points})"


# ------------------------------------------------------------------ checks and from_table


def _check_names(names: tuple[str, ...], what: str) -> None:
    """Names are single tokens of the readable text: non-empty, no whitespace, distinct."""
    for n in names:
        if not isinstance(n, str) or not n or any(c.isspace() for c in n):
            raise ConfigError(f"{what} name {n!r} must be a non-empty string without spaces")
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ConfigError(f"{what} names must be distinct; {dup!r} appears twice")


def from_table(
    names: list[str] | tuple[str, ...], table: np.ndarray | list, name: str = "custom"
) -> Group:
    """A Group from element names and a Cayley table, after checking every group axiom.

    table[g][h] is the id of g*h. Raises ConfigError with one line naming the first axiom
    that fails (closure, associativity, identity, inverses).
    """
    names = tuple(names)
    _check_names(names, "element")
    t = np.asarray(table)
    n = len(names)
    if t.ndim != 2 or t.shape != (n, n):
        raise ConfigError(f"group table has shape {t.shape}; expected ({n}, {n}) for {n} elements")
    if n == 0:
        raise ConfigError("a group needs at least one element")
    if not np.issubdtype(t.dtype, np.integer):
        raise ConfigError("group table entries must be integers (element ids)")
    if t.min() < 0 or t.max() >= n:
        a, b = (int(i) for i in np.argwhere((t < 0) | (t >= n))[0])
        raise ConfigError(
            f"not closed: {names[a]}*{names[b]} = {int(t[a, b])} is not an element id in 0..{n - 1}"
        )
    # associativity over all triples at once: (a*b)*c vs a*(b*c)
    lhs = t[t, :]  # lhs[a, b, c] = t[t[a, b], c]
    rhs = t[np.arange(n)[:, None, None], t[None, :, :]]  # rhs[a, b, c] = t[a, t[b, c]]
    if not (lhs == rhs).all():
        a, b, c = (names[int(i)] for i in np.argwhere(lhs != rhs)[0])
        raise ConfigError(f"not associative: (a*b)*c != a*(b*c) for a={a}, b={b}, c={c}")
    g = np.arange(n)
    two_sided = (t == g[None, :]).all(axis=1) & (t == g[:, None]).all(axis=0)
    if not two_sided.any():
        raise ConfigError("no identity: no element e with e*g == g*e == g for every g")
    e = int(np.flatnonzero(two_sided)[0])
    has_inv = ((t == e) & (t.T == e)).any(axis=1)
    if not has_inv.all():
        bad = names[int(np.flatnonzero(~has_inv)[0])]
        raise ConfigError(f"missing inverse: no h with {bad}*h == h*{bad} == {names[e]}")
    return Group(name, names, t.astype(np.int64))


# ------------------------------------------------------------------ permutation groups


def _permutation_action(
    name: str, elements: tuple[str, ...], perms: np.ndarray, points: tuple[str, ...]
) -> GroupAction:
    """The group whose elements are the given permutations, with their action on points.

    perms[g, x] is the image of point x under g (a set of permutations closed under
    composition). The Cayley table follows from composing the permutations, so it is a
    group by construction; the action on points is perms itself.
    """
    G, n = perms.shape
    # composed[g, h, x] = g(h(x)): apply h, then g
    composed = perms[np.arange(G)[:, None, None], perms[None, :, :]]
    # identify each composed permutation with its element id by hashing rows as bytes
    rows = np.ascontiguousarray(np.concatenate([perms, composed.reshape(-1, n)]).astype(np.int64))
    keys = rows.view(np.dtype((np.void, rows.itemsize * n))).ravel()
    uniq, inv = np.unique(keys, return_inverse=True)
    if len(uniq) != G:
        raise ValueError(f"{name}: permutations are not closed under composition or not distinct")
    elem_of_key = np.empty(G, dtype=np.int64)
    elem_of_key[inv[:G]] = np.arange(G)
    table = elem_of_key[inv[G:]].reshape(G, G)
    group = Group(name, elements, table)
    return GroupAction(group, points, perms, name=f"{name} on points")


def _cycle_name(perm: tuple[int, ...]) -> str:
    """Cycle notation on points 1..n, e.g. (12)(34), (123); identity is `()` (as in GAP).

    `e` would read better but collides with the LEGO variable letter e. Points are joined
    without separators for n <= 9 and with commas beyond, so names stay unambiguous.
    """
    n = len(perm)
    sep = "" if n <= 9 else ","
    seen, cycles = set(), []
    for start in range(n):
        if start in seen or perm[start] == start:
            continue
        cyc, x = [], start
        while x not in seen:
            seen.add(x)
            cyc.append(str(x + 1))
            x = perm[x]
        cycles.append("(" + sep.join(cyc) + ")")
    return "".join(cycles) or "()"


def cyclic(n: int) -> GroupAction:
    """Z_n acting on itself by addition.

    Z_2 is LEGO Task 1 (§2): ops `+` (identity) and `-` (negation) acting on values `+1`
    and `-1`. For n > 2, op `+k` adds k to a value named `0`..`n-1`.
    """
    if n < 2:
        raise ConfigError(f"cyclic group needs n >= 2, got {n}")
    g = np.arange(n)
    table = (g[:, None] + g[None, :]) % n
    if n == 2:
        elements, points = ("+", "-"), ("+1", "-1")
    else:
        elements, points = tuple(f"+{k}" for k in range(n)), tuple(str(k) for k in range(n))
    group = Group(f"Z{n}", elements, table)
    return GroupAction(group, points, table, name=f"Z{n} on itself")


def symmetric(n: int, on: On = "self") -> GroupAction:
    """S_n as permutations of {1..n}, named in cycle notation: `()`, `(12)`, `(123)`, ...

    on="self": acting on itself by left multiplication (LEGO Task 2 reading, 6 values for
    n = 3); on="points": acting on the points `1`..`n`.
    """
    if not 2 <= n <= 6:
        raise ConfigError(f"symmetric group needs 2 <= n <= 6 (|S_6| = 720 ops), got {n}")
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)  # identity first
    elements = tuple(_cycle_name(tuple(p)) for p in perms)
    action = _permutation_action(f"S{n}", elements, perms, tuple(str(i + 1) for i in range(n)))
    return _choose(action, on)


def dihedral(n: int, on: On = "self") -> GroupAction:
    """D_n, the 2n symmetries of a regular n-gon with vertices `0`..`n-1`.

    r{k} rotates by k (v -> v + k), s{k} reflects (v -> k - v), all mod n.
    on="self": acting on itself; on="points": acting on the n vertices.
    """
    if n < 3:
        raise ConfigError(f"dihedral group needs n >= 3 (so D_n acts faithfully), got {n}")
    v = np.arange(n)
    rotations = (v[None, :] + v[:, None]) % n  # r_k: v -> v + k
    reflections = (v[:, None] - v[None, :]) % n  # s_k: v -> k - v
    perms = np.concatenate([rotations, reflections])
    elements = tuple(f"r{k}" for k in range(n)) + tuple(f"s{k}" for k in range(n))
    action = _permutation_action(f"D{n}", elements, perms, tuple(str(k) for k in range(n)))
    return _choose(action, on)


def _choose(action: GroupAction, on: On) -> GroupAction:
    if on == "points":
        return action
    if on == "self":
        return GroupAction.on_itself(action.group)
    raise ConfigError(f"on must be 'self' or 'points', got {on!r}")


# ------------------------------------------------------------------ preset names

SPEC_HELP = (
    "z<N> (Z_N on itself; z2 is LEGO Task 1), s<N> / s<N>_points (S_N on itself / on 1..N; "
    "s3 is Task 2), d<N> / d<N>_points (D_N on itself / on its N vertices)"
)
MAX_ORDER = 1024
_SPEC = re.compile(r"^(z|s|d)(\d+)(_points)?$")


@lru_cache(maxsize=64)
def from_spec(spec: str) -> GroupAction:
    """The group action named by a preset string, e.g. "z2", "s3", "s3_points", "d4"."""
    m = _SPEC.match(spec)
    if m is None:
        raise ConfigError(f"unknown group {spec!r}; use {SPEC_HELP}")
    family, n, points = m.group(1), int(m.group(2)), m.group(3) is not None
    order = {"z": n, "d": 2 * n}.get(family, 0)
    if order > MAX_ORDER:  # checked before a Cayley table of order^2 ids is allocated
        raise ConfigError(f"group {spec!r} has {order:,} elements; at most {MAX_ORDER} fit (its "
                          f"table takes order^2 x 8 bytes and each element is a token)")
    if family == "z":
        if points:
            raise ConfigError(f"group {spec!r}: Z_N acts on itself only; use z{n}")
        return cyclic(n)
    builder = symmetric if family == "s" else dihedral
    return builder(n, on="points" if points else "self")
