"""Program execution: read a small C-like program, predict the value it prints (the task of
the LEGO paper's earlier version, "we begin to explore the task of learning to execute C
programs, where ... adding convolutional structures in the key/query/value maps, shows an
encouraging edge" (abstract); in the spirit of Zaremba & Sutskever 2014, "Learning to
Execute"; docs/papers.md §1.1). The paper gives no grammar; this one is ours:

    [CLS] a = 4 ; b = 7 ; c = 0 ;                  every variable initialised to a digit
          for ( i = 0 ; i < 3 ; i ++ ) {           loops with bounds 1 .. max_loop
            b = b * a ;                            x op y, op in + - *, x, y variables,
            if ( b > 5 ) { c = c + i ; }            loop counters or digits; x % d (d 2..9)
            else { a = b % 4 ; }                   if / else on (x < d), (x > d), (x == d)
          }
          print ( c ) ;                            one print, last

Semantics: integers; every assignment stores its value modulo `modulus` (the mathematical
remainder, in 0 .. modulus - 1), so the printed value is one of `modulus` classes (digits as
classes). `length` = number of assignments after the initialisations (bodies included, each
written once whatever the loop count); `nesting` = depth of the deepest block (0: straight
line). Each program draws its length uniformly in [min_length, max_length] and its nesting in
[0, max_nesting], and reaches exactly that depth. A program longer than seq_len tokens is
redrawn (rare at the defaults; `n_redrawn` in the tests).

Ground truth: `run`, an interpreter over the syntax tree the generator builds. Independent
check: `to_python` translates the program TEXT (not the tree) into Python source, which
`exec` runs (`solve`); the tests compare both on thousands of programs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig, Vocab

VARS = "abcdefgh"
LOOP_VARS = "ijk"
OPS = ("+", "-", "*")
CMPS = ("<", ">", "==")
KEYWORDS = ("=", "+", "-", "*", "%", ";", "(", ")", "{", "}", "<", ">", "==", "if", "else",
            "for", "print", "++")
CLS = "[CLS]"


class ProgramsConfig(TaskConfig):
    """Small C-like programs; the label is the printed value."""

    name: Literal["programs"] = "programs"
    n_vars: int = Field(3, ge=1, le=len(VARS))
    """Program variables (a, b, c, ...), each initialised at the top."""
    min_length: int = Field(1, ge=1)
    """Fewest assignments after the initialisations."""
    max_length: int = Field(6, ge=1)
    """Most assignments after the initialisations."""
    max_nesting: int = Field(2, ge=0, le=len(LOOP_VARS))
    """Deepest nesting of if / for blocks (0: straight-line programs only)."""
    max_loop: int = Field(3, ge=1, le=9)
    """Loop bounds are drawn in 1 .. max_loop."""
    modulus: int = Field(10, ge=2)
    """Every assignment stores its value modulo this: the number of classes."""
    seq_len: int = Field(128, ge=16)
    """Token budget of a program ([CLS] included); longer programs are redrawn."""

    @model_validator(mode="after")
    def _check(self) -> ProgramsConfig:
        if self.min_length > self.max_length:
            raise ValueError(f"min_length={self.min_length} exceeds max_length="
                             f"{self.max_length}")
        return self


# -- syntax tree: nested tuples -----------------------------------------------------------
# ("assign", var, expr) with expr ("num", d) | ("var", x) | (op, left, right)
# ("if", (cmp, x, d), then, else_or_None)   ("for", loop_var, bound, body)   ("print", var)


@dataclass
class Program:
    statements: list[tuple]  # initialisations, body, print
    length: int
    nesting: int


class Generator:
    """Draws programs with a given length and nesting (see the module docstring)."""

    def __init__(self, config: ProgramsConfig, rng: np.random.Generator):
        self.c, self.rng = config, rng

    def program(self) -> Program:
        c, r = self.c, self.rng
        length = int(r.integers(c.min_length, c.max_length + 1))
        nesting = int(r.integers(0, c.max_nesting + 1))
        names = VARS[: c.n_vars]
        init = [("assign", v, ("num", int(r.integers(0, 10)))) for v in names]
        body = self.block(length, 0, nesting, ())
        return Program(init + body + [("print", names[int(r.integers(len(names)))])],
                       length, nesting)

    def block(self, n: int, depth: int, reach: int, loops: tuple[str, ...]) -> list[tuple]:
        """Statements holding exactly n assignments, the deepest block exactly at `reach`."""
        r = self.rng
        deep = None
        if reach > depth:  # one compound statement carries the nesting down to `reach`
            k = int(r.integers(1, n + 1))
            deep, n = self.compound(k, depth, reach, loops), n - k
        items: list[tuple] = []
        while n > 0:
            if depth < reach and r.random() < 0.3:  # a shallower compound beside it
                k = int(r.integers(1, n + 1))
                items.append(self.compound(k, depth, int(r.integers(depth + 1, reach + 1)),
                                           loops))
                n -= k
            else:
                items.append(self.assign(loops))
                n -= 1
        if deep is not None:
            items.insert(int(r.integers(len(items) + 1)), deep)
        return items

    def compound(self, n: int, depth: int, reach: int, loops: tuple[str, ...]) -> tuple:
        """An if (with an else when n >= 2, half the time) or a for, n assignments inside."""
        r = self.rng
        if r.random() < 0.5:
            loop = LOOP_VARS[len(loops)]
            bound = int(r.integers(1, self.c.max_loop + 1))
            return ("for", loop, bound, self.block(n, depth + 1, reach, (*loops, loop)))
        cond = (CMPS[int(r.integers(3))], self.operand(loops, digits=False),
                int(r.integers(0, 10)))
        k_else = int(r.integers(1, n)) if n >= 2 and r.random() < 0.5 else 0
        then = self.block(n - k_else, depth + 1, reach, loops)
        other = (self.block(k_else, depth + 1, int(r.integers(depth + 1, reach + 1)), loops)
                 if k_else else None)
        return ("if", cond, then, other)

    def operand(self, loops: tuple[str, ...], digits: bool = True) -> tuple:
        r = self.rng
        names = VARS[: self.c.n_vars] + "".join(loops)
        if digits and r.random() < 0.3:
            return ("num", int(r.integers(0, 10)))
        return ("var", names[int(r.integers(len(names)))])

    def assign(self, loops: tuple[str, ...]) -> tuple:
        r = self.rng
        target = VARS[int(r.integers(self.c.n_vars))]
        u = r.random()
        if u < 0.15:
            expr: tuple = self.operand(loops)
        elif u < 0.3:
            expr = ("%", self.operand(loops, digits=False), ("num", int(r.integers(2, 10))))
        else:
            expr = (OPS[int(r.integers(3))], self.operand(loops), self.operand(loops))
        return ("assign", target, expr)


# -- rendering and the interpreter (ground truth) ------------------------------------------


def render(statements: list[tuple]) -> list[str]:
    """The program's tokens (no [CLS])."""
    out: list[str] = []
    for s in statements:
        if s[0] == "assign":
            out += [s[1], "=", *_expr(s[2]), ";"]
        elif s[0] == "print":
            out += ["print", "(", s[1], ")", ";"]
        elif s[0] == "for":
            _, v, n, body = s
            out += ["for", "(", v, "=", "0", ";", v, "<", str(n), ";", v, "++", ")", "{",
                    *render(body), "}"]
        else:
            _, (cmp, x, d), then, other = s
            out += ["if", "(", *_expr(x), cmp, str(d), ")", "{", *render(then), "}"]
            if other is not None:
                out += ["else", "{", *render(other), "}"]
    return out


def _expr(e: tuple) -> list[str]:
    if e[0] == "num":
        return [str(e[1])]
    if e[0] == "var":
        return [e[1]]
    return [*_expr(e[1]), e[0], *_expr(e[2])]


def run(statements: list[tuple], modulus: int) -> int:
    """Execute the tree; returns the printed value."""
    env: dict[str, int] = {}
    printed: list[int] = []

    def value(e: tuple) -> int:
        if e[0] == "num":
            return e[1]
        if e[0] == "var":
            return env[e[1]]
        a, b, op = value(e[1]), value(e[2]), e[0]
        if op == "%":  # the divisor is a digit 2..9 (never 0)
            return a % b
        return a + b if op == "+" else a - b if op == "-" else a * b

    def execute(block: list[tuple]) -> None:
        for s in block:
            if s[0] == "assign":
                env[s[1]] = value(s[2]) % modulus
            elif s[0] == "print":
                printed.append(env[s[1]])
            elif s[0] == "for":
                _, v, n, body = s
                for i in range(n):
                    env[v] = i
                    execute(body)
                del env[v]  # the counter is not visible after its loop
            else:
                _, (cmp, x, d), then, other = s
                a = value(x)
                if {"<": a < d, ">": a > d, "==": a == d}[cmp]:
                    execute(then)
                elif other is not None:
                    execute(other)

    execute(statements)
    return printed[-1]


def to_python(text: str, modulus: int) -> str:
    """Translate the program text to Python, line by line (independent of the tree): blocks
    become indentation, `for ( i = 0 ; i < n ; i ++ )` a range loop, every assignment
    `x = e ;` becomes `x = (e) % modulus`, `print ( x ) ;` sets `_printed`."""
    toks = text.split()
    if toks and toks[0] == CLS:
        toks = toks[1:]
    lines, indent, i = [], 0, 0
    try:
        while i < len(toks):
            t = toks[i]
            if t == "}":
                indent -= 1
                i += 1
            elif t == "else":  # `else {`
                lines.append("    " * indent + "else:")
                indent, i = indent + 1, i + 2
            elif t == "if":  # `if ( e ) {`
                close = toks.index(")", i)
                lines.append("    " * indent + f"if {' '.join(toks[i + 2:close])}:")
                indent, i = indent + 1, close + 2
            elif t == "for":  # `for ( v = 0 ; v < n ; v ++ ) {`
                v, n = toks[i + 2], toks[i + 8]
                lines.append("    " * indent + f"for {v} in range(0, {n}):")
                indent, i = indent + 1, i + 14
            elif t == "print":  # `print ( x ) ;`
                lines.append("    " * indent + f"_printed = {toks[i + 2]}")
                i += 5
            else:  # `x = e ;`
                end = toks.index(";", i)
                lines.append("    " * indent + f"{t} = ({' '.join(toks[i + 2:end])}) % {modulus}")
                i = end + 1
    except (ValueError, IndexError):
        raise ParseError("not a program of this task's grammar") from None
    return "\n".join(lines) + "\n"


def distinct_rows(rows: np.ndarray) -> np.ndarray:
    """Row keys as bytes (rows equal iff keys equal)."""
    return np.frombuffer(np.ascontiguousarray(rows).tobytes(), dtype=f"S{rows.shape[1] * 8}")


@TASKS.register("programs")
class ProgramsTask(Task):
    """Predict the printed value of a small C-like program."""

    Config = ProgramsConfig

    def __init__(self, config: ProgramsConfig):
        self.config = config
        digits = tuple(str(d) for d in range(10))
        self.vocab = Vocab((Vocab.PAD, CLS, *VARS[: config.n_vars],
                            *LOOP_VARS[: config.max_nesting], *digits, *KEYWORDS))

    @property
    def n_classes(self) -> int:
        return self.config.modulus

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    def programs(self, rng: np.random.Generator, n: int) -> list[Program]:
        """n programs that fit in seq_len tokens."""
        gen, out = Generator(self.config, rng), []
        while len(out) < n:
            p = gen.program()
            if len(render(p.statements)) + 1 <= self.config.seq_len:
                out.append(p)
        return out

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Batch:
        """n programs; both splits are drawn alike (they differ by de-duplication only)."""
        T = self.config.seq_len
        progs = self.programs(rng, n)
        tokens = np.zeros((n, T), dtype=np.int64)
        for r, p in enumerate(progs):
            ids = self.vocab.ids([CLS, *render(p.statements)])
            tokens[r, : len(ids)] = ids
        tok = torch.from_numpy(tokens)
        label = [run(p.statements, self.config.modulus) for p in progs]
        return Batch(tokens=tok, label_pos=torch.zeros(n, 1, dtype=torch.long),
                     labels=torch.tensor(label, dtype=torch.long)[:, None],
                     loss_mask=torch.ones(n, 1, dtype=torch.bool), pad_mask=tok != 0,
                     meta={"length": torch.tensor([[p.length] for p in progs]),
                           "nesting": torch.tensor([[p.nesting] for p in progs])})

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """De-duplicated train set and a test set disjoint from it (by token rows)."""
        train = self._distinct(rng, n_train, np.empty(0, dtype="S1"))
        return train, self._distinct(rng, n_test, distinct_rows(train.tokens.numpy()))

    def _distinct(self, rng: np.random.Generator, n: int, exclude: np.ndarray) -> Batch:
        kept: list[Batch] = []
        seen = set(exclude.tolist())
        have = 0
        for _ in range(50):
            b = self.sample(rng, max(n - have, 1) + (n - have) // 10)
            keys = distinct_rows(b.tokens.numpy()).tolist()
            keep = []
            for i, k in enumerate(keys):
                if k not in seen and have + len(keep) < n:
                    seen.add(k)
                    keep.append(i)
            kept.append(b[torch.tensor(keep, dtype=torch.long)])
            have += len(keep)
            if have == n:
                return Batch.cat(kept)
        raise ConfigError(f"could not draw {n} distinct programs; raise max_length or "
                          "n_vars, or lower n_train / n_test")

    def render(self, batch: Batch, i: int) -> str:
        ids = batch.tokens[i][batch.tokens[i] != 0]
        return " ".join(self.vocab.decode(ids))

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        return {"text": self.render(batch, i), "labels": {"print": str(int(batch.labels[i, 0]))},
                "length": int(batch.meta["length"][i, 0]),
                "nesting": int(batch.meta["nesting"][i, 0])}

    def solve(self, text: str) -> dict[str, str]:
        """The printed value, by translating the text to Python and running it."""
        scope: dict[str, int] = {}
        exec(to_python(text, self.config.modulus), {"__builtins__": {"range": range}}, scope)
        return {"print": str(scope["_printed"])}
