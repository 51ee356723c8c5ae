"""LEGO generator vs. the independent text solver, layout, splits and config errors."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks import TASKS, build_task
from reasonlab.tasks.lego import LegoTask

PRESETS = ["z2", "s3", "s3_points", "d4_points", "d5"]


def task(**kw) -> LegoTask:
    return build_task({"name": "lego", **kw})


def check_against_solver(t: LegoTask, batch) -> None:
    """Every sentence: text round-trips to the same tokens, and the solver agrees."""
    for i in range(len(batch)):
        text = t.render(batch, i)
        assert t.parse(text) == batch.tokens[i].tolist(), text
        assert t.solve(text) == t.labels_text(batch, i), text


@pytest.mark.parametrize("root", ["fixed", "given", "random"])
@pytest.mark.parametrize("group", PRESETS)
def test_generator_agrees_with_solver(group, root):
    t = task(group=group, root=root)
    batch = t.sample(np.random.default_rng(1), 2000)
    check_against_solver(t, batch)


@settings(max_examples=25, deadline=None)
@given(
    root=st.sampled_from(["fixed", "given", "random"]),
    group=st.sampled_from(PRESETS + ["z3", "s4_points"]),
    n_clauses=st.integers(1, 15),
    extra_vars=st.integers(0, 12),
    shuffle=st.booleans(),
    rename=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_generator_agrees_with_solver_any_config(
    root, group, n_clauses, extra_vars, shuffle, rename, seed
):
    t = task(
        root=root,
        group=group,
        n_clauses=n_clauses,
        n_train_vars=1,
        n_vars=n_clauses + extra_vars,
        shuffle=shuffle,
        rename_ops=rename,
    )
    batch = t.sample(np.random.default_rng(seed), 40)
    assert batch.tokens.shape == (40, t.seq_len)
    check_against_solver(t, batch)


def test_task1_text_form():
    t = task(group="z2", n_clauses=3, n_train_vars=3, shuffle=False)
    text = t.render(t.sample(np.random.default_rng(0), 1), 0)
    clauses = text.split(" ; ")
    assert len(clauses) == 3
    var0, eq, op, root = clauses[0].split()
    assert eq == "=" and op in {"+", "-"} and root in {"+1", "-1"}
    assert clauses[1].split()[3] == var0  # chain order: next clause reads the previous variable
    # a hand-written sentence, solved by hand
    t3 = task(group="z2", n_clauses=3, n_train_vars=3)
    assert t3.solve("c = - b ; a = + +1 ; b = - a") == {"a": "+1", "b": "-1", "c": "+1"}


def test_layout_and_meta():
    t = task(group="s3", n_clauses=12)
    b = t.sample(np.random.default_rng(2), 500)
    v = t.vocab
    assert t.seq_len == 62 and b.tokens.shape == (500, 62) and b.tokens.dtype == torch.long
    assert (b.tokens[:, 0] == v.id("[CLS]")).all() and (b.tokens[:, -1] == v.id("[SEP]")).all()
    assert (b.tokens[:, 2::5][:, :12] == v.id("=")).all()
    assert (b.tokens[:, 5::5] == v.id(",")).all()
    assert b.pad_mask is None
    assert b.labels.shape == b.label_pos.shape == b.loss_mask.shape == (500, 12)
    assert t.n_classes == 6 and int(b.labels.max()) < 6
    # label positions: first token of a clause, each clause exactly once
    assert ((b.label_pos - 1) % 5 == 0).all()
    assert (b.label_pos.sort(dim=1).values == torch.arange(1, 61, 5)).all()
    # depth meta is the chain index, and chain order is recoverable from the tokens:
    # the clause at label_pos[:, k] has as argument the variable at label_pos[:, k-1]
    assert (b.meta["depth"] == torch.arange(12)).all() and b.meta["depth"].dtype == torch.long
    var_at = b.tokens.gather(1, b.label_pos)
    arg_at = b.tokens.gather(1, b.label_pos + 3)
    assert (arg_at[:, 1:] == var_at[:, :-1]).all()
    # the 12 variables of a sentence are distinct
    assert all(len(set(row)) == 12 for row in var_at.tolist())


def test_depths_and_labels_text():
    t = task(n_clauses=4, n_train_vars=2)
    b = t.sample(np.random.default_rng(3), 5)
    for i in range(5):
        d = t.depths(b, i)
        assert sorted(d.values()) == [0, 1, 2, 3]
        root_clause = next(c for c in t.render(b, i).split(" ; ") if c.split()[3] in {"+1", "-1"})
        assert d[root_clause.split()[0]] == 0
        assert set(t.labels_text(b, i)) == set(d)


def test_shuffle_false_gives_chain_order():
    t = task(shuffle=False)
    b = t.sample(np.random.default_rng(4), 100)
    assert (b.label_pos == 1 + 5 * torch.arange(12)).all()
    shuffled = task(shuffle=True).sample(np.random.default_rng(4), 100)
    assert not (shuffled.label_pos == 1 + 5 * torch.arange(12)).all()


def test_loss_mask():
    b = task(n_train_vars=6).sample(np.random.default_rng(5), 10)
    assert (b.loss_mask == (torch.arange(12) < 6)).all() and b.loss_mask.dtype == torch.bool
    b = task(supervised=[0, 1, 2, 3, 4, 11]).sample(np.random.default_rng(5), 10)
    expect = torch.zeros(12, dtype=torch.bool)
    expect[[0, 1, 2, 3, 4, 11]] = True
    assert (b.loss_mask == expect).all()


def test_splits_disjoint_and_deduplicated():
    # ordered vars 3*2 x non-root ops 2 x root clauses x clause orders 2
    for root, n in (("fixed", 48), ("given", 48), ("random", 96)):
        assert task(group="z2", n_clauses=2, n_vars=3, n_train_vars=1, root=root).n_sentences == n
    t = task(group="z2", n_clauses=2, n_vars=3, n_train_vars=1, root="random")
    assert t.n_sentences == 96
    train, test = t.splits(np.random.default_rng(6), 60, 30)
    tr = {tuple(r) for r in train.tokens.tolist()}
    te = {tuple(r) for r in test.tokens.tolist()}
    assert len(train) == len(tr) == 60 and len(test) == len(te) == 30
    assert not tr & te
    check_against_solver(t, train)
    # large default task: also exact counts, disjoint
    big = task()
    train, test = big.splits(np.random.default_rng(7), 5000, 1000)
    tr = {tuple(r) for r in train.tokens.tolist()}
    assert len(tr) == 5000 and not tr & {tuple(r) for r in test.tokens.tolist()}


def test_splits_impossible_raises():
    t = task(group="z2", n_clauses=2, n_vars=2, n_train_vars=1)  # 2 * 4 * 2 * 2 = 32
    with pytest.raises(ConfigError, match="distinct"):
        t.splits(np.random.default_rng(0), 30, 10)


def test_rename_ops_changes_ids_not_labels():
    plain, renamed = task(group="s3"), task(group="s3", rename_ops=True, rename_seed=1)
    a = plain.sample(np.random.default_rng(8), 200)
    b = renamed.sample(np.random.default_rng(8), 200)
    assert torch.equal(a.labels, b.labels) and torch.equal(a.label_pos, b.label_pos)
    # slots of `=`, op and `,` all carry different ids; variables and root values do not
    op_slots = torch.zeros(62, dtype=torch.bool)
    for off in (2, 3, 5):
        op_slots[off:61:5] = True
    assert (a.tokens[:, op_slots] != b.tokens[:, op_slots]).all()
    assert torch.equal(a.tokens[:, ~op_slots], b.tokens[:, ~op_slots])
    assert int(b.tokens.max()) < len(renamed.vocab)
    # the readable text is unchanged, and still solvable
    assert [plain.render(a, i) for i in range(20)] == [renamed.render(b, i) for i in range(20)]
    check_against_solver(renamed, b)
    other = task(group="s3", rename_ops=True, rename_seed=2)
    other_seed = other.sample(np.random.default_rng(8), 5)
    assert not torch.equal(other_seed.tokens, b.tokens[:5])


def test_determinism():
    t = task(group="s3_points")
    a, b = t.sample(np.random.default_rng(9), 300), t.sample(np.random.default_rng(9), 300)
    for f in ("tokens", "label_pos", "labels", "loss_mask"):
        assert torch.equal(getattr(a, f), getattr(b, f))
    (tr1, te1), (tr2, te2) = (t.splits(np.random.default_rng(10), 200, 50) for _ in range(2))
    assert torch.equal(tr1.tokens, tr2.tokens) and torch.equal(te1.tokens, te2.tokens)


def test_registered_and_config_errors():
    assert TASKS["lego"] is LegoTask
    with pytest.raises(ConfigError, match="n_train_vars"):
        build_task({"name": "lego", "n_clauses": 3, "n_train_vars": 5})
    with pytest.raises(ConfigError, match="unknown group"):
        build_task({"name": "lego", "group": "q8"})
    with pytest.raises(ConfigError, match="n_vars"):
        build_task({"name": "lego", "n_vars": 5})
    with pytest.raises(ConfigError, match="supervised"):
        build_task({"name": "lego", "supervised": [0, 12]})
    with pytest.raises(ConfigError, match="distinct"):
        build_task({"name": "lego", "supervised": [1, 1]})
    with pytest.raises(ConfigError, match="not both"):
        build_task({"name": "lego", "supervised": [1], "n_train_vars": 3})
    with pytest.raises(ConfigError, match="unknown key"):
        build_task({"name": "lego", "n_clause": 3})
    with pytest.raises(ConfigError, match="not associative"):
        build_task(
            {
                "name": "lego",
                "group": "custom",
                "elements": ["x", "y", "z"],
                "table": [[0, 1, 2], [1, 0, 0], [2, 0, 0]],
            }
        )


def test_custom_group():
    t = task(
        group="custom", elements=["E", "F"], table=[[0, 1], [1, 0]], n_clauses=5, n_train_vars=5
    )
    assert t.n_classes == 2
    check_against_solver(t, t.sample(np.random.default_rng(11), 200))


def test_parse_errors():
    t = task(n_clauses=2, n_train_vars=2)
    with pytest.raises(ParseError):
        t.parse("a = + +1")
    with pytest.raises(ParseError):
        t.parse("a = * +1 ; b = + a")
    with pytest.raises(ParseError):
        t.solve("a = + b ; b = + a")


def _root_clauses(t: LegoTask, n: int, seed: int) -> list[list[str]]:
    """The root clause (the one whose argument is a point, not a variable) of n sentences."""
    b = t.sample(np.random.default_rng(seed), n)
    out = []
    for i in range(n):
        clauses = [c.split() for c in t.render(b, i).split(" ; ")]
        roots = [c for c in clauses if c[3] in t.point_names]
        assert len(roots) == 1  # a line graph: exactly one clause reads the root vertex
        out.append(roots[0])
    return out


def test_fixed_root_is_the_papers_task1():
    """LEGO §2, Task 1: "Our sentences thus consists of n clauses of the form a_i = ±a_{i-1},
    where a_i ∈ A for i = 1, 2, ..., n and a_0 = 1 (we fix r = 1)", the graph being "a line
    graph directed away from some fixed root vertex r ∈ X". So the root clause is `a = ± +1`:
    a random sign applied to the fixed point +1, and the label of chain variable #0 is a
    function of that one sign token -- checked here against the text, not the generator."""
    t = task()  # the default task is the paper's
    assert t.config.root == "fixed"
    roots = _root_clauses(t, 2000, 11)
    assert {r[3] for r in roots} == {"+1"}  # r = +1 always
    assert {r[2] for r in roots} == {"+", "-"}  # both signs occur
    b = t.sample(np.random.default_rng(11), 2000)
    for i, r in enumerate(roots):
        assert t.labels_text(b, i)[r[0]] == ("+1" if r[2] == "+" else "-1")
    # the paper's own example sentence (n = 6), with its stated answer
    t6 = task(n_clauses=6, n_train_vars=6)
    text = "a = + +1 ; b = - a ; e = + b ; d = - f ; c = + d ; f = + e"
    assert t6.solve(text) == {"a": "+1", "b": "-1", "c": "+1", "d": "+1", "e": "-1", "f": "-1"}
    assert t6.parse(text)  # the paper's sentence is a valid sentence of the default task


def test_root_modes_differ_only_in_the_root_clause():
    """given (the authors' code: `a = val v`) is the identity op on a random point; random
    draws both; all three modes make the same draws, so the other clauses are identical."""
    modes = {m: task(root=m, group="s3") for m in ("fixed", "given", "random")}
    roots = {m: _root_clauses(t, 3000, 12) for m, t in modes.items()}
    s3 = modes["fixed"]
    first, ident = s3.point_names[0], s3.op_names[s3.action.group.identity]
    assert {r[3] for r in roots["fixed"]} == {first} and len({r[2] for r in roots["fixed"]}) == 6
    assert {r[2] for r in roots["given"]} == {ident} and len({r[3] for r in roots["given"]}) == 6
    assert len({(r[2], r[3]) for r in roots["random"]}) == 36
    toks = {m: t.sample(np.random.default_rng(13), 500).tokens for m, t in modes.items()}
    root_slot = {m: torch.isin(toks[m], torch.tensor(modes[m]._point_ids)) for m in modes}
    for m in ("fixed", "given"):  # outside the root clause's op and point, every token agrees
        arg = root_slot["random"]
        same = toks[m] == toks["random"]
        assert same[~(arg | arg.roll(-1, 1))].all()


def test_parse_rejects_a_root_clause_of_another_mode():
    with pytest.raises(ParseError, match="root='fixed'"):
        task(n_clauses=2, n_train_vars=1).parse("a = + -1 ; b = - a")
    with pytest.raises(ParseError, match="root='given'"):
        task(n_clauses=2, n_train_vars=1, root="given").parse("a = - -1 ; b = - a")
    assert task(n_clauses=2, n_train_vars=1, root="random").parse("a = - -1 ; b = - a")
