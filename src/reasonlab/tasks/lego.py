"""LEGO: chains of group actions (Zhang et al. 2022, "Unveiling Transformers with LEGO", §2).

A sentence is n clauses `a = g x`: a variable, a group element g (the op) and an argument x,
which is a point of X for the first clause of the chain and the previous chain variable for
every other clause. Clauses are shown in random order; the answer is the point of X held by
every variable.

Token layout (the authors' public code): [CLS], then n clauses of exactly 5 tokens
`var = op arg ,`, then [SEP]; length 5n + 2 (62 for n = 12). The label of a variable sits on
the first token of the clause that defines it. `Batch.label_pos`, `labels`, `loss_mask` and
`meta["depth"]` are all in CHAIN order: column k is chain variable #k (depth k), wherever its
clause was shuffled to.

Readable text form: the clauses as `var = op arg`, in sentence order, joined by ` ; `. The op
is always printed, identity included, so that text <-> tokens is a bijection. Task 1:

    c = - b ; a = + +1 ; b = - a

`parse(render(batch, i))` gives back `batch.tokens[i]` exactly, and `solve(text)` answers from
the text alone (iterative resolution with a name -> name action dict), independently of the
vectorised generator.

rename_ops (the control of §4, "replacing `=`/`-` with arbitrary tokens"): `=`, `,` and every
op token are emitted as fresh vocabulary entries `t0`..`tK` (assigned by a permutation seeded
with rename_seed), appended after the ordinary vocabulary so that their ids differ from the
unrenamed ones. Variables, points, [CLS]/[SEP] keep their ids, and the random draws are the
same, so labels are identical for the same rng. The readable text still shows `=`, `+`, ...
"""

from __future__ import annotations

import math
import string
from typing import Literal

import numpy as np
import torch
from pydantic import Field, field_validator, model_validator

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig, Vocab
from reasonlab.tasks.groups import GroupAction, from_spec, from_table

CLS, SEP, EQ, COMMA = "[CLS]", "[SEP]", "=", ","
CLAUSE_LEN = 5  # var = op arg ,
MAX_VARS = 26 + 26 * 26


def variable_names(n_vars: int) -> tuple[str, ...]:
    """a..z as in the authors' code, then aa, ab, ... for larger alphabets."""
    letters = string.ascii_lowercase
    names = list(letters) + [x + y for x in letters for y in letters]
    return tuple(names[:n_vars])


class LegoConfig(TaskConfig):
    """LEGO task config. Defaults are the paper's Task 1 (n = 12, first 6 variables trained)."""

    name: Literal["lego"] = "lego"
    group: str = "z2"
    """Group acting on X: z<N> (Z_N on itself; z2 = Task 1, + and - on +1/-1), s<N> (S_N on
    itself; s3 = Task 2), s<N>_points (S_N on 1..N), d<N> / d<N>_points (D_N on itself / on
    its N vertices), or "custom" with `elements` and `table` (acting on itself)."""
    elements: list[str] | None = None
    """Element names of a custom group (group="custom"), one token each, no spaces."""
    table: list[list[int]] | None = None
    """Cayley table of a custom group: table[g][h] = id of g*h (apply h, then g)."""
    n_clauses: int = Field(12, gt=0)
    """Chain length n: number of clauses (and of variables) per sentence."""
    n_train_vars: int = Field(6, ge=1)
    """Supervise the first n_train_vars chain variables (#0..#n_train_vars-1), as the paper."""
    supervised: list[int] | None = None
    """Explicit chain positions to supervise (e.g. [0,1,2,3,4,11] for the shortcut study);
    replaces n_train_vars, which must then be left at its default."""
    shuffle: bool = True
    """Present clauses in random order (the paper); False keeps chain order."""
    n_vars: int = Field(26, ge=1, le=MAX_VARS)
    """Size of the variable alphabet (a..z is 26); each sentence uses n_clauses of them."""
    rename_ops: bool = False
    """Map `=`, `,` and op tokens to arbitrary fresh tokens t0..tK (the §4 control)."""
    rename_seed: int = 0
    """Seed of the permutation assigning fresh tokens under rename_ops."""
    root: Literal["fixed", "given", "random"] = "fixed"
    """The root clause, the one whose argument is a point of X (LEGO §2).
    "fixed" (the paper, §2 Task 1: "a_0 = 1 (we fix r = 1)"): a random op applied to the
    action's first point (`+1` for Task 1), so label #0 depends on one token, the root op.
    "given" (the authors' public code: `a = val v`): the identity op and a random point, again
    one token. "random" (this project before RESULTS_VERSION 3): random op AND random point, so
    every label is a parity of >= 2 tokens -- the setting that sits on long loss plateaus."""
    min_clauses: int | None = Field(None, gt=0, exclude_if=lambda v: v is None)
    """Mixed lengths (dataset composition, LEGO §1 and §4): each TRAINING sentence draws its
    chain length uniformly in [min_clauses, n_clauses] and is right-padded (pad_mask; missing
    slots have label_pos -1 and no loss); the test set keeps n_clauses, so it measures
    extrapolation. None: every sentence has n_clauses."""

    @field_validator("group")
    @classmethod
    def _group_known(cls, v: str) -> str:
        if v != "custom":
            try:
                from_spec(v)
            except ConfigError as e:
                raise ValueError(str(e)) from None
        return v

    @model_validator(mode="after")
    def _consistent(self) -> LegoConfig:
        n = self.n_clauses
        custom = self.group == "custom"
        if custom != (self.table is not None) or custom != (self.elements is not None):
            raise ValueError(
                "a custom group needs group='custom' together with both elements and table"
            )
        if custom:
            try:
                from_table(self.elements, self.table)  # type: ignore[arg-type]
            except ConfigError as e:
                raise ValueError(f"table: {e}") from None
        if self.supervised is None:
            if self.n_train_vars > n:
                raise ValueError(
                    f"n_train_vars={self.n_train_vars} exceeds n_clauses={n}; "
                    f"set n_train_vars <= {n} (or list positions in supervised)"
                )
        else:
            if self.n_train_vars != type(self).model_fields["n_train_vars"].default:
                raise ValueError("set either n_train_vars or supervised, not both")
            bad = [k for k in self.supervised if not 0 <= k < n]
            if bad:
                raise ValueError(f"supervised: positions {bad} outside chain 0..{n - 1}")
            if len(set(self.supervised)) != len(self.supervised):
                raise ValueError("supervised: positions must be distinct")
        if self.min_clauses is not None and self.min_clauses > n:
            raise ValueError(f"min_clauses={self.min_clauses} exceeds n_clauses={n}; lower it")
        if self.n_vars < n:
            raise ValueError(
                f"n_vars={self.n_vars} < n_clauses={n}: every clause needs its own variable; "
                f"set n_vars >= {n}"
            )
        return self

    @property
    def supervised_positions(self) -> tuple[int, ...]:
        """Chain positions that enter the loss."""
        if self.supervised is not None:
            return tuple(sorted(self.supervised))
        return tuple(range(self.n_train_vars))

    def action(self) -> GroupAction:
        """The group action this config names."""
        if self.group == "custom":
            group = from_table(self.elements, self.table)  # type: ignore[arg-type]
            return GroupAction.on_itself(group)
        return from_spec(self.group)


@TASKS.register("lego")
class LegoTask(Task):
    """LEGO sentences: vectorised generator, text <-> tokens, and a reference solver."""

    Config = LegoConfig

    def __init__(self, config: LegoConfig):
        self.config = config
        self.action = config.action()
        group = self.action.group
        self.var_names = variable_names(config.n_vars)
        self.op_names = group.elements
        self.point_names = self.action.points

        # The text is parsed by names, so a name may have only one meaning. (An op may share
        # its token with a point, e.g. S3 acting on itself: ops and args sit in different slots.)
        fixed = {CLS, SEP, EQ, COMMA, ";", Vocab.PAD}
        for kind, names in (("element", self.op_names), ("point", self.point_names)):
            clash = (set(names) & (fixed | set(self.var_names))) or {
                n for n in names if ";" in n
            }
            if clash:
                raise ConfigError(
                    f"task.group: {kind} name {sorted(clash)[0]!r} clashes with a variable or "
                    "a reserved token; rename it"
                )

        base = [Vocab.PAD, CLS, SEP, EQ, COMMA, *self.var_names, *self.op_names]
        base += [p for p in self.point_names if p not in set(self.op_names)]
        index = {t: i for i, t in enumerate(base)}
        # readable[id] is how a token id is written in the text form
        readable = list(base)
        emitted = {s: index[s] for s in [EQ, COMMA, *self.op_names]}
        if config.rename_ops:
            renamed = [EQ, COMMA, *self.op_names]
            perm = np.random.default_rng(config.rename_seed).permutation(len(renamed))
            fresh = [f"t{k}" for k in range(len(renamed))]
            if set(fresh) & set(base):
                raise ConfigError("task.rename_ops: fresh tokens t0.. clash with group names")
            for sym, k in zip(renamed, perm):
                emitted[sym] = len(base) + int(k)
            readable += [renamed[int(j)] for j in np.argsort(perm)]
            base += fresh
        self.vocab = Vocab(tuple(base))
        self._readable = tuple(readable)

        # id lookup arrays used by the vectorised generator
        self._eq_id = emitted[EQ]
        self._comma_id = emitted[COMMA]
        self._var_ids = np.array([index[v] for v in self.var_names], dtype=np.int64)
        self._op_ids = np.array([emitted[g] for g in self.op_names], dtype=np.int64)
        self._point_ids = np.array([index[p] for p in self.point_names], dtype=np.int64)
        # name -> id maps used by parse (slot-aware: op slot vs arg slot)
        self._parse_var = {v: index[v] for v in self.var_names}
        self._parse_op = {g: emitted[g] for g in self.op_names}
        self._parse_point = {p: index[p] for p in self.point_names}

        # The solver's own view of the action: op name -> {point name -> point name}.
        act = self.action.act.tolist()
        self._act_by_name = {
            g: {x: self.point_names[act[gi][xi]] for xi, x in enumerate(self.point_names)}
            for gi, g in enumerate(self.op_names)
        }
        mask = np.zeros(config.n_clauses, dtype=bool)
        mask[list(config.supervised_positions)] = True
        self._loss_mask = mask

    # ------------------------------------------------------------------ shapes

    @property
    def n_classes(self) -> int:
        return self.action.n_points

    def class_names(self) -> tuple[str, ...]:
        return tuple(self.point_names)

    @property
    def seq_len(self) -> int:
        return CLAUSE_LEN * self.config.n_clauses + 2

    @property
    def n_sentences(self) -> int:
        """Number of distinct token sequences: ordered variables x ops x root x clause order.
        The root clause shows order x 1 (fixed), 1 x n_points (given) or order x n_points
        (random) (op, point) pairs."""
        c = self.config
        n = math.perm(c.n_vars, c.n_clauses) * self.action.group.order ** (c.n_clauses - 1)
        n *= {"fixed": self.action.group.order, "given": self.action.n_points,
              "random": self.action.group.order * self.action.n_points}[c.root]
        return n * (math.factorial(c.n_clauses) if c.shuffle else 1)

    # ------------------------------------------------------------------ generation

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Batch:
        """n fresh random sentences (mixed lengths when min_clauses is set); both splits are
        drawn alike (the test set differs from the training set by de-duplication only)."""
        c = self.config
        if c.min_clauses is None:
            return self._sample_len(rng, n, c.n_clauses)
        lengths = rng.integers(c.min_clauses, c.n_clauses + 1, size=n)
        parts, rows = [], []
        for N in np.unique(lengths):  # one vectorised draw per length, then padded
            at = np.flatnonzero(lengths == N)
            parts.append(self._pad(self._sample_len(rng, len(at), int(N))))
            rows.append(at)
        order = np.argsort(np.concatenate(rows), kind="stable")
        return Batch.cat(parts)[torch.from_numpy(order)]

    def _pad(self, b: Batch) -> Batch:
        """Right-pad a batch of shorter sentences to seq_len tokens and n_clauses slots."""
        B, T = b.tokens.shape
        N, P = b.label_pos.shape[1], self.config.n_clauses
        grow = self.seq_len - T
        tokens = torch.cat([b.tokens, torch.zeros(B, grow, dtype=torch.long)], 1)  # 0 = [PAD]

        def slots(x: torch.Tensor, fill: object) -> torch.Tensor:
            return torch.cat([x, torch.full((B, P - N), fill, dtype=x.dtype)], 1)

        return Batch(tokens=tokens, label_pos=slots(b.label_pos, -1), labels=slots(b.labels, 0),
                     loss_mask=slots(b.loss_mask, False),
                     pad_mask=(torch.arange(self.seq_len) < T).expand(B, -1).clone(),
                     meta={"depth": torch.arange(P).expand(B, P).clone()})

    def _sample_len(self, rng: np.random.Generator, n: int, N: int) -> Batch:
        """n sentences of exactly N clauses, vectorised over the batch (loops over chain
        positions)."""
        c = self.config
        B = n
        rows = np.arange(B)[:, None]
        # Draws happen in a fixed order that does not depend on rename_ops, so renaming
        # changes token ids only. Authors' code: a random permutation of the 26 letters per
        # sentence, whose first n letters form the chain (docs/papers.md §1 LEGO).
        letters = np.broadcast_to(np.arange(c.n_vars), (B, c.n_vars))
        chain_vars = rng.permuted(letters, axis=1)[:, :N]  # [B, N] var index in chain order
        ops = rng.integers(0, self.action.group.order, size=(N, B))  # [N, B] element ids
        root = rng.integers(0, self.action.n_points, size=B)  # [B] point id
        # Every root mode makes the same draws, so the modes differ only in the root clause.
        if c.root == "fixed":  # paper §2: a_0 = g_0 r with r fixed (the first point)
            root[:] = 0
        elif c.root == "given" and N:  # authors' code: a_0 = val v (identity op, random v)
            ops[0] = self.action.group.identity
        if c.shuffle:
            # order[b, j] = chain index of the clause shown in slot j
            order = rng.permuted(np.broadcast_to(np.arange(N), (B, N)), axis=1)
        else:
            order = np.broadcast_to(np.arange(N), (B, N))

        # values along the chain: x_k = g_k . x_{k-1}, x_{-1} = root. ops is [N, B] so each
        # step reads one contiguous row; act is flattened so a step is a single take.
        act = self.action.act.ravel()
        n_pts = self.action.n_points
        values = np.empty((N, B), dtype=np.int64)
        prev = root
        for k in range(N):
            prev = act[ops[k] * n_pts + prev]
            values[k] = prev
        values = values.T  # [B, N], chain order

        # token of each clause part, chain order [B, N]
        var_tok = self._var_ids[chain_vars]
        arg_tok = np.empty_like(var_tok)
        arg_tok[:, 0] = self._point_ids[root]
        arg_tok[:, 1:] = var_tok[:, :-1]
        op_tok = self._op_ids[ops.T]

        tokens = np.empty((B, CLAUSE_LEN * N + 2), dtype=np.int64)
        tokens[:, 0] = self.vocab.id(CLS)
        tokens[:, -1] = self.vocab.id(SEP)
        clauses = tokens[:, 1:-1].reshape(B, N, CLAUSE_LEN)  # a view: writes land in tokens
        clauses[:, :, 1] = self._eq_id
        clauses[:, :, 4] = self._comma_id
        if c.shuffle:
            clauses[:, :, 0] = var_tok[rows, order]
            clauses[:, :, 2] = op_tok[rows, order]
            clauses[:, :, 3] = arg_tok[rows, order]
            # the clause of chain variable #k sits in slot inverse(order)[b, k]
            slot = np.empty((B, N), dtype=np.int64)
            slot[rows, order] = np.arange(N)
        else:
            clauses[:, :, 0] = var_tok
            clauses[:, :, 2] = op_tok
            clauses[:, :, 3] = arg_tok
            slot = np.broadcast_to(np.arange(N), (B, N))
        label_pos = 1 + CLAUSE_LEN * slot

        return Batch(
            tokens=torch.from_numpy(tokens),
            label_pos=torch.from_numpy(label_pos),
            labels=torch.from_numpy(np.ascontiguousarray(values)),
            loss_mask=torch.from_numpy(self._loss_mask[:N]).expand(B, N).clone(),
            pad_mask=None,
            meta={"depth": torch.arange(N).expand(B, N).clone()},
        )

    def sample_full(self, rng: np.random.Generator, n: int) -> Batch:
        """n fresh sentences of the test distribution: all n_clauses long, under min_clauses too
        (mixed lengths are a training curriculum; the test set keeps the full chain). Without
        min_clauses the same draw as `sample`."""
        return self._sample_len(rng, n, self.config.n_clauses)

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """De-duplicated train set and a test set disjoint from it (and de-duplicated).

        The authors draw train and test independently (docs/papers.md §1 LEGO); we remove repeats so
        that test accuracy measures generalisation to unseen sentences.
        """
        if n_train + n_test > self.n_sentences:
            raise ConfigError(
                f"asked for {n_train} train + {n_test} test sentences but only "
                f"{self.n_sentences} distinct LEGO sentences exist; lower the counts or raise "
                "n_clauses/n_vars"
            )
        train = self._draw_distinct(rng, n_train, exclude=None)
        test = self._draw_distinct(rng, n_test, exclude=_row_keys(train.tokens), full=True)
        return train, test

    def _draw_distinct(
        self, rng: np.random.Generator, n: int, exclude: np.ndarray | None, full: bool = False
    ) -> Batch:
        """n distinct sentences whose token rows are not in `exclude` (rows keyed as bytes);
        `full`: all n_clauses long even under min_clauses (the test set)."""
        def sample(k: int) -> Batch:
            return self.sample_full(rng, k) if full else self.sample(rng, k)

        if n == 0:
            return sample(0)
        drawn: list[Batch] = []
        have, rounds = 0, 0
        if exclude is not None:
            exclude = np.sort(exclude)
        while have < n:
            rounds += 1
            if rounds > 50:
                raise ConfigError(
                    f"could only find {have} of {n} distinct unseen LEGO sentences after 50 "
                    "rounds; lower the counts or raise n_clauses/n_vars"
                )
            drawn.append(sample(max(2 * (n - have), 1024)))
            pool = Batch.cat(drawn)
            keys = _row_keys(pool.tokens)
            _, first = np.unique(keys, return_index=True)
            first = np.sort(first)  # keep draw order: deterministic, no bias
            if exclude is not None and len(exclude):
                hit = np.searchsorted(exclude, keys[first]).clip(max=len(exclude) - 1)
                first = first[exclude[hit] != keys[first]]
            have = len(first)
        return pool[torch.from_numpy(first[:n])]

    # ------------------------------------------------------------------ text

    def render(self, batch: Batch, i: int) -> str:
        """Sentence i as readable text: `var = op arg` clauses joined by ` ; `."""
        T = int(batch.pad_mask[i].sum()) if batch.pad_mask is not None else batch.tokens.shape[1]
        words = [self._readable[t] for t in batch.tokens[i, 1 : T - 1].tolist()]
        clauses = (words[j : j + CLAUSE_LEN - 1] for j in range(0, len(words), CLAUSE_LEN))
        return " ; ".join(" ".join(c) for c in clauses)

    def parse(self, text: str) -> list[int]:
        """Token ids of a sentence in the readable text form (inverse of `render`)."""
        clauses = [c.split() for c in text.split(";")]
        c = self.config
        lo = c.n_clauses if c.min_clauses is None else c.min_clauses
        if not lo <= len(clauses) <= c.n_clauses:
            want = c.n_clauses if lo == c.n_clauses else f"{lo} to {c.n_clauses}"
            raise ParseError(f"expected {want} clauses, got {len(clauses)}")
        ids = [self.vocab.id(CLS)]
        for words in clauses:
            if len(words) != 4 or words[1] != EQ:
                raise ParseError(f"clause {' '.join(words)!r} is not `var = op arg`")
            var, _, op, arg = words
            if var not in self._parse_var:
                raise ParseError(f"unknown variable {var!r} in clause {' '.join(words)!r}")
            if op not in self._parse_op:
                raise ParseError(f"unknown group element {op!r} in clause {' '.join(words)!r}")
            arg_id = self._parse_var.get(arg, self._parse_point.get(arg))
            if arg_id is None:
                raise ParseError(f"unknown argument {arg!r} in clause {' '.join(words)!r}")
            if arg in self._parse_point:
                self._check_root(words)
            ids += [self._parse_var[var], self._eq_id, self._parse_op[op], arg_id, self._comma_id]
        ids.append(self.vocab.id(SEP))
        return ids

    def _check_root(self, words: list[str]) -> None:
        """A root clause must have the form the task's `root` mode generates."""
        mode, clause = self.config.root, " ".join(words)
        if mode == "fixed" and words[3] != self.point_names[0]:
            raise ParseError(f"root clause {clause!r}: root='fixed' applies an op to "
                             f"{self.point_names[0]!r} only")
        if mode == "given" and words[2] != self.op_names[self.action.group.identity]:
            raise ParseError(f"root clause {clause!r}: root='given' uses the identity op "
                             f"{self.op_names[self.action.group.identity]!r} only")

    def solve(self, text: str) -> dict[str, str]:
        """Reference answer from the text alone: resolve clauses whose argument is known.

        Written independently of `sample`: string clauses, a name -> name action dict, and
        repeated passes until every variable is assigned (at most n passes for a chain).
        """
        pending: dict[str, tuple[str, str]] = {}
        for clause in text.split(";"):
            words = clause.split()
            if len(words) != 4 or words[1] != "=":
                raise ParseError(f"clause {clause.strip()!r} is not `var = op arg`")
            var, _, op, arg = words
            pending[var] = (op, arg)
        points = set(self.point_names)
        value: dict[str, str] = {}
        while pending:
            progress = False
            for var, (op, arg) in list(pending.items()):
                x = arg if arg in points else value.get(arg)
                if x is not None:
                    value[var] = self._act_by_name[op][x]
                    del pending[var]
                    progress = True
            if not progress:
                raise ParseError(f"cannot resolve {sorted(pending)}: no chain to a value")
        return value

    def labels_text(self, batch: Batch, i: int) -> dict[str, str]:
        """The generator's answer for sentence i: variable name -> point name."""
        ok = batch.label_pos[i] >= 0  # padded slots (mixed lengths) have none
        var_tok = batch.tokens[i, batch.label_pos[i][ok]].tolist()
        return {
            self._readable[t]: self.point_names[y]
            for t, y in zip(var_tok, batch.labels[i][ok].tolist())
        }

    def depths(self, batch: Batch, i: int) -> dict[str, int]:
        """Chain depth of every variable of sentence i (0 = defined from the root value)."""
        ok = batch.label_pos[i] >= 0
        var_tok = batch.tokens[i, batch.label_pos[i][ok]].tolist()
        return {self._readable[t]: d
                for t, d in zip(var_tok, batch.meta["depth"][i][ok].tolist())}

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        """Sentence i as a JSON-ready record: readable text, answers and chain depths."""
        return {"text": self.render(batch, i), "labels": self.labels_text(batch, i),
                "depth": self.depths(batch, i)}


# ---------------------------------------------------------------------- helpers


def _row_keys(tokens: torch.Tensor) -> np.ndarray:
    """One hashable, sortable key per row: the row's bytes (exact, no hash collisions)."""
    a = np.ascontiguousarray(tokens.numpy().astype(np.int32))
    return a.view(np.dtype((np.void, a.itemsize * a.shape[1]))).ravel()
