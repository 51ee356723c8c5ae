"""Command line: `reasonlab studies | run | train | data | attention`.

User errors end in one line `error: <what and how to fix>` and exit status 2 (DESIGN §3).
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any, NoReturn

from reasonlab.errors import ConfigError, ReasonlabError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        raise ConfigError(f"{message} (see `{self.prog} --help`)")


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`a.b=3 c=text` -> {"a": {"b": 3}, "c": "text"}; values are JSON when they parse as JSON."""
    out: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise ConfigError(f"override {item!r} is not key=value; write e.g. steps=500")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r} conflicts with another override of {p!r}")
        node[leaf] = value
    return out


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read config file {path} ({e.strerror}); check the path") from None
    try:
        return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"config file {path} is not valid {path.suffix[1:] or 'JSON'} ({e})") from None


def cmd_studies(args: argparse.Namespace) -> None:
    from reasonlab.studies import STUDIES

    for name, cls in STUDIES.items():
        cost = ("not yet measured" if cls.cpu_minutes is None
                else f"about {cls.cpu_minutes:g} min on 2 cores"
                + (f" once {cls.cpu_after} has run" if cls.cpu_after else ""))
        print(f"{name}  (cpu scale: {cost})\n  {cls.title}")
        for c in cls.claims:
            print(f"  - {c.text}  [{c.source}]")


def cmd_run(args: argparse.Namespace) -> None:
    from reasonlab.studies import STUDIES, run_study

    STUDIES[args.study]  # unknown names fail before anything is written
    if args.seeds is not None and args.seeds < 1:
        raise ConfigError(f"--seeds {args.seeds} must be at least 1")
    report, out = run_study(args.study, args.scale, args.seeds, args.out, args.workers, args.quiet)
    for v in report.verdicts:
        print(f"{v.status.upper():>15}  {v.claim.text}\n{'':>17}{v.evidence}")
    print(f"report: {out / 'report.md'}")


def cmd_train(args: argparse.Namespace) -> None:
    from reasonlab.runs import execute
    from reasonlab.train.config import TrainConfig

    data = deep_merge(read_config_file(args.config), parse_overrides(args.overrides))
    config = TrainConfig.build(data)
    result = execute(config, args.out, quiet=args.quiet)
    print(json.dumps(result["final"]))
    print(f"run: {args.out / 'runs' / result['id']}")


def cmd_data(args: argparse.Namespace) -> None:
    import numpy as np

    from reasonlab.tasks.base import build_task

    if args.n < 1:
        raise ConfigError(f"--n {args.n} must be at least 1")
    task = build_task({"name": args.task, **parse_overrides(args.overrides)})
    batch = task.sample(np.random.default_rng(args.seed), args.n)
    for i in range(args.n):
        if args.format == "text":
            print(task.render(batch, i))
        else:
            print(json.dumps(task.example_json(batch, i)))


def cmd_attention(args: argparse.Namespace) -> None:
    from reasonlab.analysis.attention import attention_report, top_heads
    from reasonlab.tasks.base import build_task

    if args.pretrained is None:
        if len(args.target) != 1:
            raise ConfigError("give one run directory, or --pretrained NAME [task key=value ...]")
        from reasonlab.runs import load_run_model

        run = Path(args.target[0])
        config, model = load_run_model(run)
        task = build_task(config.task)
        name = run.name
    else:
        from reasonlab.model.pretrained import pretrained_transformer

        task = build_task({"name": "lego", **parse_overrides(args.target)})
        model = pretrained_transformer(args.pretrained, task.vocab.tokens, task.n_classes,
                                       task.seq_len).eval()
        name = args.pretrained
    from reasonlab.tasks.lego import CLAUSE_LEN

    lego = task.config.name == "lego"
    span = CLAUSE_LEN if lego and args.chain_order else None
    # LEGO: also the association over variable queries only (the paper's head, §4.2.1)
    variables = [task.vocab.id(v) for v in task.var_names] if lego else []
    out = args.out or Path("reasonlab-out") / "attention" / name
    scores = attention_report(model, task, out, n=args.n, example=args.example, seed=args.seed,
                              span=span, window=args.window, title=name, variables=variables)
    for score, s in scores.items():
        best = ", ".join(f"L{l}H{h} {v:.2f}" for l, h, v in top_heads(s, 3))
        print(f"{score:>20}: top heads {best}")
    print(f"figures: {out / 'attention.png'}, {out / 'head_scores.png'}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="reasonlab", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("studies", help="list studies, their claims and CPU budget")
    s.set_defaults(fn=cmd_studies)

    s = sub.add_parser("run", help="run a study and write its report")
    s.add_argument("study")
    s.add_argument("--scale", choices=["smoke", "cpu", "paper"], default="cpu")
    s.add_argument("--seeds", type=int, default=None, help="number of seeds (study default)")
    s.add_argument("--out", type=Path, default=None, help="output folder")
    s.add_argument("--workers", type=int, default=None, help="runs trained side by side")
    s.add_argument("--quiet", action="store_true", help="no progress bars")
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("train", help="train one run from a JSON or TOML config")
    s.add_argument("config", type=Path)
    s.add_argument("overrides", nargs="*", help="key=value, dotted keys for nesting")
    s.add_argument("--out", type=Path, default=Path("reasonlab-out"))
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(fn=cmd_train)

    s = sub.add_parser("data", help="print task examples")
    s.add_argument("task")
    s.add_argument("overrides", nargs="*", help="task config key=value")
    s.add_argument("--n", type=int, default=10)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--format", choices=["text", "jsonl"], default="text")
    s.set_defaults(fn=cmd_data)

    s = sub.add_parser("attention", help="attention maps and head scores of a run or a "
                       "pretrained model")
    s.add_argument("target", nargs="*", help="a run directory; or, with --pretrained, LEGO "
                   "task key=value overrides")
    s.add_argument("--pretrained", default=None, help="pretrained checkpoint name")
    s.add_argument("--n", type=int, default=64, help="examples averaged in the head scores")
    s.add_argument("--example", type=int, default=0, help="example whose maps are drawn")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--window", type=int, default=2, help="manipulation half-width")
    s.add_argument("--no-chain-order", dest="chain_order", action="store_false",
                   help="draw LEGO positions in sentence order, not chain order")
    s.add_argument("--out", type=Path, default=None)
    s.set_defaults(fn=cmd_attention)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        args.fn(args)
    except ReasonlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
