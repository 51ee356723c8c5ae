"""The `reasonlab` command: studies, claims, calibrate, readme, run, sweep, train, data,
attention, runs, site, new.

User errors end in one line `error: <what and how to fix>` and exit status 2 (docs/design.md
§4 Conventions).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from reasonlab.config import deep_merge, parse_overrides, read_config_file
from reasonlab.console import check_seeds, check_workers
from reasonlab.errors import ConfigError, ReasonlabError

MAX_DATA_N = 1_000_000
"""Most examples `data` prints or `attention` averages over (memory, not a law)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        raise ConfigError(f"{message} (see `{self.prog} --help`)")


def cmd_studies(args: argparse.Namespace) -> None:
    from reasonlab.listing import listing

    if args.scale is not None:
        print_costs(args.scale)  # no study imported when cached either
        return
    print(listing(["studies"], studies_text, shipped_as=["studies"]), end="")


def studies_text() -> str:
    from reasonlab.studies import STUDIES

    lines = []
    for name, cls in STUDIES.items():
        costs = "; ".join(scale_cost(cls, s) for s in cls.scales if s != "smoke")
        lines += [f"{name}  ({costs})", f"  {cls.title}"]
        lines += [f"  - {c.text}  [{c.source}]" for c in cls.claims]
    return "".join(f"{line}\n" for line in lines)


def cmd_claims(args: argparse.Namespace) -> None:
    from reasonlab.listing import listing
    from reasonlab.site import report_files

    # The store's report files enter the key: a report written since shows its verdicts.
    command = ["claims", str(args.paper), str(args.summary), args.scale]
    reports = report_files(args.store)
    print(listing([*command, str(args.store.resolve())],
                  lambda: claims_text(args.store, args.paper, args.summary, args.scale),
                  extra=reports, shipped_as=None if reports else command), end="")


def claims_text(store: Path | None, paper: str | None, summary: bool, scale: str) -> str:
    """`reasonlab claims`' text over the reports in `store` (None: none)."""
    from reasonlab.site import find_reports
    from reasonlab.studies.kit.ledger import ledger, ledger_text, summary_markdown

    reports = find_reports(store) if store is not None and store.is_dir() else []
    book = ledger(reports, paper)
    return summary_markdown(book, scale) if summary else ledger_text(book)


SHIPPED_SCALES = ("smoke", "cpu", "long", "paper")


def shipped_listings() -> dict[tuple[str, ...], Any]:
    """The texts shipped with the package (reasonlab/listing.py): `studies`, `claims` over a
    store without reports (as a first command finds it) and `studies --scale S` for the torch
    installed (the project pins it), each keyed as its command looks it up."""
    keys: dict[tuple[str, ...], Any] = {("studies",): studies_text,
                                        ("claims", "None", "False", "cpu"):
                                        lambda: claims_text(None, None, False, "cpu")}
    for scale in SHIPPED_SCALES:
        keys[("studies", "--scale", scale, f"torch {torch_version()}")] = (
            lambda s=scale: costs_json(s))
    return keys


def torch_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:  # the op counts depend on torch's dispatch: an upgrade lists anew
        return version("torch")
    except PackageNotFoundError:
        return "none"


def cmd_calibrate(args: argparse.Namespace) -> None:
    from reasonlab.studies.kit.calibration import families_cases, noise
    from reasonlab.studies.kit.calibration_engine import Sim, run_sim, sim_table

    known = dict(families_cases())
    if args.family is not None and args.family not in known:
        raise ConfigError(f"no family {args.family!r}; families: {', '.join(known)}")
    chosen = [(f, c) for f, cs in known.items() if args.family in (None, f) for c in cs]
    sims = [run_sim(c, noise(f, c.noise), seq_draws=300) for f, c in chosen
            if isinstance(c, Sim)]
    print(sim_table(sims))


def cmd_readme(args: argparse.Namespace) -> None:
    import json

    import reasonlab
    from reasonlab.studies.kit import readme

    root = Path(reasonlab.__file__).resolve().parents[2]
    if not (root / "README.md").is_file() or not (root / "src" / "reasonlab").is_dir():
        raise ConfigError(f"no source checkout at {root}: `reasonlab readme` rewrites the "
                          "READMEs of an editable install (pip install -e .)")
    if args.store is not None:
        if not args.store.is_dir():
            raise ConfigError(f"no store at {args.store}; give the folder a study wrote to "
                              "(--out of `reasonlab run`)")
        timings = ([json.loads(line) for line in args.timings.read_text().splitlines() if line]
                   if args.timings is not None else [])
        for p in readme.write_measured(readme.collect(args.store, timings), root / "src" /
                                       "reasonlab"):
            print(f"wrote {p.relative_to(root)}")
    stale = readme.update(root, check=args.check)
    if args.check and stale:
        raise ConfigError("generated README blocks out of date: " + ", ".join(
            str(p.relative_to(root)) for p in stale) + "; run `reasonlab readme`")
    for p in stale:
        print(f"updated {p.relative_to(root)}")
    ship_listings(root, args.check)


def ship_listings(root: Path, check: bool) -> None:
    """The listing texts shipped with the package (reasonlab/listing.py), rewritten after the
    measured times they show; with --check, an error while they are stale."""
    from reasonlab import listing, plugins

    path = listing.shipped_path()
    if check:
        if listing.stale():
            raise ConfigError(f"{path.relative_to(root)} was written from other source; run "
                              "`reasonlab readme`")
        return
    if plugins.sources():  # the shipped texts are the package's own studies alone
        raise ConfigError("plugins are configured (REASONLAB_PLUGINS, --include or entry "
                          "points): the listings shipped with reasonlab must not show them; "
                          "run `reasonlab readme` without them")
    if listing.ship(shipped_listings()):
        print(f"updated {path.relative_to(root)}")


def print_costs(scale: str) -> None:
    """`studies --scale S`: per study, runs, training FLOPs, estimated GPU time with its
    launch floor and bound, checkpoints and disk, and CPU time (plan.py); then what the
    studies need from this machine. The table follows from the code alone, so it is
    remembered between commands as `studies` is (reasonlab/listing.py), with the assets the
    runs read as data; whether each is on this machine is looked up every time."""
    from reasonlab.listing import listing

    torch = f"torch {torch_version()}"
    costs = json.loads(listing(["studies", "--scale", scale], lambda: costs_json(scale),
                               extra=[torch], shipped_as=["studies", "--scale", scale, torch]))
    print(costs["table"])
    if costs["needs"]:  # weights and data from outside the lab, looked for now
        from reasonlab.assets import look_for  # the library's: imports no study

        print("\nWhat the studies need from this machine (pretrained weights, data sets):\n"
              + "\n".join(f"- {study}: {a.line()}" for study, specs in costs["needs"]
                           for a in look_for([tuple(s) for s in specs])))


def costs_json(scale: str) -> str:
    """print_costs's table and, per study, the specs of the assets its runs read
    (reasonlab/assets.py asset_specs), as JSON: what `studies --scale` remembers."""
    from reasonlab import plan
    from reasonlab.report import table
    from reasonlab.studies import STUDIES

    from reasonlab.assets import asset_specs

    rows, every, needs = [], [], []
    for name, cls in STUDIES.items():
        if scale not in cls.scales:  # e.g. `long`: only the studies that define it
            continue
        study = cls()
        minutes = cls.measured(scale)
        measured = "-" if minutes is None else f"{minutes:g} min"
        if not study.trains:
            rows.append([name, "0", *["-"] * 9, measured])
            continue
        configs = [s.config for s in study.runs(scale, study.default_seeds[scale])]
        if specs := asset_specs(configs):
            needs.append([name, specs])
        every += configs
        # what its finished runs would keep with keep_checkpoints=none, where its analysis
        # reads metrics alone (Study.reads_weights); a pretraining run keeps its weights
        slim = ("-" if cls.reads_weights else plan.fmt_bytes(plan.study_cost(
            [c.model_copy(update={"keep_checkpoints": "none"}) for c in configs],
            launches=False).peak))
        rows.append([name, *_cost_cells(plan, plan.study_cost(configs), slim), measured])
    total = plan.study_cost(every)  # a run two studies share is trained once
    rows.append(["all studies (shared runs once)", *_cost_cells(plan, total, "-"), "-"])
    text = table(["study", "runs", "training FLOPs", "1 H100, bf16", "bound", "launch floor",
                  "checkpoints written", "disk kept", "disk at most",
                  "at most, keep_checkpoints=none", "this CPU, 1 run at a time",
                  "measured, 2 cores"], rows)
    text += (f"\n\nH100: {plan.H100_BF16_DENSE / 1e12:.0f} TFLOP/s dense bf16 at "
             f"{plan.GPU_UTILISATION:.0%} utilisation plus the optimizer's memory traffic "
             f"({plan.OPTIMIZER_BYTES} bytes per trained parameter and step at "
             f"{plan.H100_HBM_BYTES_PER_S / 1e12:g} TB/s), and each run at least its launch floor: "
             f"the kernel-launching ops of its steps and evaluations (counted from the shapes) at "
             f"{plan.PER_OP_SECONDS * 1e6:g} us each; 'bound' says which of the two dominates the "
             "study (launches: small kernels, the GPU mostly idle; run several at once with "
             "--runs-per-gpu). Checkpoints: every one the runs write (every ckpt_every steps and "
             "at the end; those before a run's last step hold Adam's moments too) and their bytes; "
             "a run keeps one at a time, so the disk kept is the finished runs' last checkpoints "
             "(trained weights only where a frozen part is rebuilt from the config) and the disk "
             "at most adds the two side by side of the run training (one at a time; add as much "
             "per run training at once). keep_checkpoints=none (`reasonlab run STUDY "
             "keep_checkpoints=none`, for a study whose analysis reads metrics alone, '-' for the "
             "others) keeps no weights of a finished run. CPU: "
             f"{plan.CPU_FLOPS / 1e9:.0f} GFLOP/s measured (plan.py says how); the CPU time was "
             "0.06x to 1.3x the measured column at the cpu scales. Runs of one study go one per "
             "GPU: divide by the GPUs you have. The last column is the study's wall clock as "
             "measured on the 2-core reference machine (two runs side by side), '-' where not "
             "measured. None of the GPU figures has been measured on a GPU yet (scripts/gpu-check "
             "measures them).")
    return json.dumps({"table": text, "needs": needs})


def _cost_cells(plan: Any, cost: Any, slim: str) -> list[str]:
    return [str(cost.runs), f"{cost.flops:.2e}", plan.fmt_hours(cost.gpu_hours), cost.bound,
            plan.fmt_hours(cost.launch_hours),
            f"{cost.checkpoints} ({plan.fmt_bytes(cost.written)})", plan.fmt_bytes(cost.disk),
            plan.fmt_bytes(cost.peak), slim, plan.fmt_hours(cost.cpu_hours)]


def scale_cost(cls: Any, scale: str) -> str:
    """'cpu: about 12.3 min on 2 cores', 'long: not measured', ... for `reasonlab studies`."""
    minutes = cls.measured(scale)
    if minutes is None:
        return f"{scale}: not measured" + (" (for a GPU)" if scale == "paper" else "")
    before = " and ".join(cls.cpu_after)
    after = (f" once {before} {'has' if len(cls.cpu_after) == 1 else 'have'} run"
             if cls.cpu_after and scale == "cpu" else "")
    return f"{scale}: about {minutes:g} min on 2 cores{after}"


def cmd_run(args: argparse.Namespace) -> None:
    from reasonlab.studies import STUDIES, run_study

    STUDIES[args.study]  # unknown names fail before anything is written
    check_seeds(args.seeds)
    check_workers(args.workers)
    share_gpus(args.runs_per_gpu)
    choose_tracker(args.tracker, args.tracker_dir)
    overrides = parse_overrides(args.overrides)
    for flag in ("device", "dtype"):  # --device D is device=D
        if getattr(args, flag) is not None:
            overrides[flag] = getattr(args, flag)
    slurm = slurm_options(args)  # checked first: a dry run fails as the run would
    if args.max_units is not None and not args.until_decided:
        raise ConfigError("--max-units caps --until-decided; give both")
    if args.until_decided and (args.dry_run or slurm is not None):
        raise ConfigError("--until-decided decides after each batch of seeds on this machine; "
                          "run it without --dry-run and --executor slurm")
    if args.dry_run:
        from reasonlab.studies.kit.dry_run import describe, planned_runs

        rows = planned_runs(args.study, args.scale, args.seeds, args.out or Path("reasonlab-out"),
                            overrides, args.executor)
        print(describe(args.study, args.scale, rows, args.workers or 1))
        return
    if slurm is not None:
        submit_study(args, overrides, slurm)
        return
    if args.until_decided:
        from reasonlab.studies.kit.base import run_until_decided

        report, out = run_until_decided(args.study, args.scale, args.max_units, args.out,
                                        args.workers, args.quiet, args.executor, args.address,
                                        overrides, args.seeds)
    else:
        report, out = run_study(args.study, args.scale, args.seeds, args.out, args.workers,
                                args.quiet, args.executor, args.address, overrides)
    for v in report.verdicts:
        print(f"{v.status.upper():>15}  {v.claim.text}\n{'':>17}{v.evidence}")
    print(f"report: {out / 'report.md'}")


SLURM_FLAGS = ("partition", "gpus", "time", "array", "cpus_per_task", "mem", "requeues",
               "sbatch")


def slurm_options(args: argparse.Namespace) -> Any:
    """The SLURM flags given to `run --executor slurm` (None for the other executors, which
    take none of them); submit_study completes them into a slurm.SlurmConfig."""
    given = {k: getattr(args, k) for k in SLURM_FLAGS if getattr(args, k) is not None}
    if args.executor != "slurm":
        if given:
            flag = next(iter(given)).replace("_", "-")
            raise ConfigError(f"--{flag} is an option of --executor slurm")
        return None
    if args.address is not None:
        raise ConfigError("--address names a Ray cluster; use it with --executor ray")
    if "sbatch" in given:
        given["sbatch"] = tuple(given["sbatch"])
    from reasonlab import slurm

    slurm.SlurmConfig.build({"array": 1, **given}, where="slurm")  # --dry-run refuses as run
    return given


def submit_study(args: argparse.Namespace, overrides: dict[str, Any],
                 given: dict[str, Any]) -> None:
    """`run STUDY --executor slurm ...`: check the study as `run` would, write the sbatch
    script of an array whose tasks each run this command without --executor (slurm.py) into
    the report folder, and submit it."""
    from reasonlab import slurm
    from reasonlab.errors import AssetError
    from reasonlab.runs import load_result, run_dir_for
    from reasonlab.store import output_dir, write_text_atomic
    from reasonlab.studies import STUDIES
    from reasonlab.runs import check_runs
    from reasonlab.studies.kit.base import check_keep, overrides_tag
    from reasonlab.studies.kit.core import overridden

    study = STUDIES[args.study]()
    if why := study.missing():
        raise AssetError(f"study {args.study} {why}")
    if args.scale not in study.scales:
        raise ConfigError(f"study {args.study} has no {args.scale!r} scale; use one of "
                          + ", ".join(study.scales))
    if "seed" in overrides:
        raise ConfigError("choose the seeds with --seeds N, not seed=...")
    if not study.trains:
        raise ConfigError(f"study {args.study} trains no runs: run it without --executor "
                          "slurm")
    seeds = args.seeds or study.default_seeds[args.scale]
    check_keep(study, overrides)
    configs = [s.config for s in overridden(study.runs(args.scale, seeds), overrides)]
    check_keep(study, {}, configs)
    root = (args.out or Path("reasonlab-out")).resolve()
    left = sum(load_result(run_dir_for(c, root)) is None for c in configs)
    config = slurm.SlurmConfig.build({"array": max(1, left), **given}, where="slurm")
    slurm.sbatch_path()  # there, before anything is written
    command = [sys.executable, "-m", "reasonlab.cli", "run", args.study, "--scale", args.scale,
               "--out", str(root)]
    if args.seeds is not None:
        command += ["--seeds", str(args.seeds)]
    workers = args.workers or (None if config.gpus else config.cpus_per_task or 1)
    if workers is not None:  # a CPU task's cores are its allocation, not the node's
        command += ["--workers", str(workers)]
    if args.runs_per_gpu is not None:
        command += ["--runs-per-gpu", str(args.runs_per_gpu)]
    if args.tracker is not None:
        command += ["--tracker", args.tracker]
        if args.tracker_dir is not None:
            command += ["--tracker-dir", str(args.tracker_dir.resolve())]
    command += args.overrides
    for flag in ("device", "dtype"):
        if getattr(args, flag) is not None:
            command += [f"--{flag}", getattr(args, flag)]
    folder = root / args.study / (f"{args.scale}-{overrides_tag(overrides)}" if overrides
                                  else args.scale)
    logs = folder / "slurm"
    env = {k: os.environ[k] for k in ("PYTHONPATH",) if os.environ.get(k)}
    with output_dir(logs):
        check_runs(configs, root, "slurm")  # damaged folders; the nodes check their device
        path = logs / f"{args.study}-{args.scale}.sbatch"
        before = path.read_text() if path.is_file() else None  # an earlier submission's
        write_text_atomic(path, slurm.script(config, f"reasonlab-{args.study}", command,
                                             Path.cwd(), logs, env))
        try:
            job = slurm.submit(path)
        except ConfigError:  # refused: the folder is left as it was
            if before is None:
                path.unlink(missing_ok=True)
            else:
                write_text_atomic(path, before)
            raise
    print(f"submitted SLURM job {job}: {config.array} array task(s), each running\n  "
          + " ".join(command[3:]) + f"\nagainst the store {root} (each trains the runs no "
          f"other task holds, then writes the report: {folder / 'report.md'}); script "
          f"{path}; logs {logs}/{job}_<task>.log; follow with `squeue -j {job}`")


def choose_tracker(name: str | None, folder: Path | None) -> Any:
    """--tracker / --tracker-dir: checked, and handed to the executors (tracking.choose)."""
    from reasonlab.tracking import choose

    return choose(name, folder)


def share_gpus(k: int | None) -> None:
    """--runs-per-gpu K: the executors read it from the environment (execution.runs_per_gpu),
    so that it reaches them through the study and sweep layers unchanged."""
    from reasonlab.execution import RUNS_PER_GPU

    if k is None:
        return
    if k < 1:
        raise ConfigError(f"--runs-per-gpu {k} must be at least 1")
    os.environ[RUNS_PER_GPU] = str(k)


def cmd_sweep(args: argparse.Namespace) -> None:
    from reasonlab.sweep import run_sweep

    share_gpus(args.runs_per_gpu)
    choose_tracker(args.tracker, args.tracker_dir)
    md, folder = run_sweep(args.config, args.axes, args.seeds, args.out, args.workers,
                           args.quiet, args.yes, args.executor, args.address)
    print(md)
    figure = folder / "sweep.png"
    print(f"table: {folder / 'sweep.md'}" + (f", figure: {figure}" if figure.exists() else ""))


def _tracker_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--tracker", choices=["tensorboard", "wandb", "mlflow"], default=None,
                   help="mirror every metrics line a run logs, live, with its hyperparameters "
                   "and per-step training loss, to TensorBoard event files, a W&B run "
                   "(offline unless WANDB_MODE says otherwise) or an MLflow file store "
                   "(pip install 'reasonlab[tracking]'); metrics.jsonl stays the record")
    s.add_argument("--tracker-dir", type=Path, default=None, metavar="DIR",
                   help="one folder per run, DIR/<run id> (tensorboard --logdir DIR); "
                   "default: each run's own tb/, wandb/ or mlflow/")


def _slurm_options(s: argparse.ArgumentParser) -> None:
    g = s.add_argument_group("--executor slurm", "a job array whose tasks each run this "
                             "command on the shared store (--out on a filesystem every node "
                             "mounts)")
    g.add_argument("--array", type=int, default=None, metavar="N",
                   help="array tasks (default: the runs left to train)")
    g.add_argument("--partition", default=None, help="SLURM partition (default: the cluster's)")
    g.add_argument("--gpus", type=int, default=None, help="GPUs per array task (default 0)")
    g.add_argument("--time", default=None, help="time limit per task, e.g. 4:00:00; near it a "
                   "task requeues itself and its run resumes from its checkpoint")
    g.add_argument("--cpus-per-task", type=int, default=None, metavar="C",
                   help="CPUs per task (default: the cluster's); without GPUs, each task "
                   "trains C runs side by side")
    g.add_argument("--mem", default=None, help="memory per task, e.g. 32G")
    g.add_argument("--requeues", type=int, default=None, metavar="R",
                   help="times a task requeues itself at its time limit (default 3)")
    g.add_argument("--sbatch", action="append", default=None, metavar="OPTION",
                   help="another #SBATCH option, e.g. --sbatch=--account=lab (repeatable)")


def _executor_options(s: argparse.ArgumentParser, slurm: bool = False) -> None:
    s.add_argument("--workers", type=int, default=None,
                   help="runs trained side by side (local; Ray: CPUs of a new local instance)")
    choices = ["local", "ray", "slurm"] if slurm else ["local", "ray"]
    s.add_argument("--executor", choices=choices, default="local",
                   help="local process pool (default), Ray tasks (pip install 'reasonlab[ray]')"
                   + (", or a SLURM job array (sbatch)" if slurm else ""))
    s.add_argument("--address", default=None, help="Ray cluster address (host:port or "
                   "ray://host:10001); default: start a local Ray")
    s.add_argument("--runs-per-gpu", type=int, default=None, metavar="K",
                   help="runs sharing each GPU (default 1): for launch-bound studies, which "
                   "`reasonlab studies --scale paper` marks; Ray: each run asks for 1/K GPU")


def cmd_site(args: argparse.Namespace) -> None:
    from reasonlab.site import build_site

    out = args.out or args.store / "site"
    index, n = build_site(args.store, out)
    print(f"site of {n} study reports: {index}")


def cmd_train(args: argparse.Namespace) -> None:
    from reasonlab.runs import execute, load_result, run_dir_for
    from reasonlab.store import output_dir
    from reasonlab.train.config import TrainConfig

    from reasonlab.execution import check_disk

    data = deep_merge(read_config_file(args.config), parse_overrides(args.overrides))
    config = TrainConfig.build(data)
    tracker = choose_tracker(args.tracker, args.tracker_dir)
    with output_dir(args.out):
        if load_result(run_dir_for(config, args.out)) is None:
            check_disk([config], args.out, 1)
        result = execute(config, args.out, quiet=args.quiet, tracker=tracker)
    print(json.dumps(result["final"]))
    print(f"run: {args.out / 'runs' / result['id']}")


def cmd_data(args: argparse.Namespace) -> None:
    import numpy as np

    from reasonlab.tasks.base import build_task

    if args.task in ("export", "lm-eval"):  # `data export|lm-eval TASK [key=value] --out DIR`
        export_data(args)
        return
    given = [f"--{k.replace('_', '-')}" for k in EXPORT_ONLY if getattr(args, k) is not None]
    if given:
        raise ConfigError(f"{given[0]} is an option of `reasonlab data export TASK ... --out "
                          "DIR`; printing examples takes --n, --seed and --format")
    args.n = 10 if args.n is None else args.n
    args.seed = 0 if args.seed is None else args.seed
    args.format = args.format or "text"
    if not 1 <= args.n <= MAX_DATA_N:
        raise ConfigError(f"--n {args.n} must be between 1 and {MAX_DATA_N:,}")
    if args.seed < 0:
        raise ConfigError(f"--seed {args.seed} must be 0 or more")
    if args.task == "corpus":  # `data corpus NAME [key=value]`: a pretraining corpus, raw
        print_corpus(args)
        return
    task = build_task({"name": args.task, **parse_overrides(args.overrides)})
    batch = task.sample(np.random.default_rng(args.seed), args.n)
    if args.format == "prompt":  # what a generative model is asked (tasks/text/)
        from reasonlab.tasks.text import text_items

        for item in text_items(task, batch):
            print(json.dumps({"prompt": item.prompt, "answer": item.answer, "meta": item.meta}))
        return
    for i in range(args.n):
        if args.format == "text":
            print(task.render(batch, i))
        else:
            print(json.dumps(task.example_json(batch, i)))


EXPORT_ONLY = ("out", "n_train", "n_test", "n_val", "config")


def export_data(args: argparse.Namespace) -> None:
    """`data export TASK [key=value ...] --out DIR` (or `--config FILE|RUN_DIR`): a run's
    train / validation / test splits as Parquet with a dataset card (data_export.py);
    `data lm-eval ...`: the same splits as an lm-evaluation-harness task folder
    (lm_eval_export.py)."""
    from reasonlab.data_export import DataConfig, export
    from reasonlab.train.config import TrainConfig

    command = f"data {args.task}"
    if args.n is not None or args.format is not None:
        raise ConfigError(f"`{command}` writes every example of each split: give the sizes "
                          "with --n-train, --n-test and --n-val, not --n or --format")
    if args.out is None:
        raise ConfigError(f"`{command}` needs --out DIR, a new or empty folder")
    if args.config is not None:
        if args.overrides:
            raise ConfigError("give the task either on the command line or in --config, not "
                              "both")
        path = args.config / "config.json" if args.config.is_dir() else args.config
        run = TrainConfig.build(read_config_file(path))
        data = DataConfig.of_run(run).model_dump()
    else:
        if not args.overrides or "=" in args.overrides[0]:
            from reasonlab.tasks.base import TASKS

            raise ConfigError(f"name the task: reasonlab {command} TASK [key=value ...] --out "
                              f"DIR; tasks: {', '.join(TASKS)}")
        name, *rest = args.overrides
        if name == "corpus":
            raise ConfigError("a corpus exports as the masked-LM examples a pretraining run "
                              "draws from it: reasonlab data export mlm corpus=NAME ... --out "
                              "DIR")
        data = {"task": {"name": name, **parse_overrides(rest)}}
    for key in ("seed", "n_train", "n_test", "n_val"):  # a flag overrides the config's value
        if getattr(args, key) is not None:
            data[key] = getattr(args, key)
    config = DataConfig.build(data)
    if args.task == "lm-eval":
        from reasonlab import lm_eval_export

        sizes = lm_eval_export.export(config, args.out)
        name = lm_eval_export.task_name(config)
        print(f"{name}: {sizes['test']:,} test prompts, {sizes['train']:,} few-shot examples "
              f"(seed {config.seed}): lm_eval --include_path {args.out} --tasks {name} ...")
        return
    sizes = export(config, args.out, quiet=args.quiet)
    print(", ".join(f"{name} {n:,}" for name, n in sizes.items()) + f" examples of "
          f"{config.task.name} (seed {config.seed}): {args.out}")


def print_corpus(args: argparse.Namespace) -> None:
    """n windows of a CORPORA stream (tasks/mlm.py, tasks/artificial.py), unmasked, one a line;
    the overrides after the name are masked-LM task keys (words, seq_len, corpus_tokens, ...)."""
    import numpy as np

    from reasonlab.tasks import natural
    from reasonlab.tasks.base import build_task
    from reasonlab.tasks.mlm import CORPORA

    if not args.overrides or "=" in args.overrides[0]:
        raise ConfigError("name the corpus: reasonlab data corpus NAME [key=value ...]; "
                          f"corpora: {', '.join(CORPORA)}")
    name, *rest = args.overrides
    task = build_task({"name": "mlm", "seq_len": 34, **parse_overrides(rest), "corpus": name})
    ids = task.windows(np.random.default_rng(args.seed), args.n, task.seq_len - 2)
    # a foreign corpus (german, javascript, amino) in its own tokens, not the English words
    # that share its ids
    own = natural.own_tokens(name, task.words) if name in natural.FOREIGN else None
    for row in ids:
        words = [own[i] for i in row] if own else task.vocab.decode(row)
        print(" ".join(words) if args.format == "text" else json.dumps({"tokens": words}))


def cmd_attention(args: argparse.Namespace) -> None:
    from reasonlab.analysis.attention import attention_report, top_heads
    from reasonlab.store import output_dir
    from reasonlab.tasks.base import build_task

    if not 1 <= args.n <= MAX_DATA_N:
        raise ConfigError(f"--n {args.n} must be between 1 and {MAX_DATA_N:,}")
    if not 0 <= args.example < args.n:
        raise ConfigError(f"--example {args.example} must be between 0 and --n - 1 = "
                          f"{args.n - 1} (the examples drawn)")
    if args.window < 0:
        raise ConfigError(f"--window {args.window} must be 0 or more")
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
    with output_dir(out):
        scores = attention_report(model, task, out, n=args.n, example=args.example,
                                  seed=args.seed, span=span, window=args.window, title=name,
                                  variables=variables, control_span=CLAUSE_LEN if lego else None)
    permuted = scores.pop("association_variable, clauses permuted", None)
    positional = scores.pop("positional head", None)
    for score, s in scores.items():
        best = ", ".join(f"L{l}H{h} {v:.2f}" for l, h, v in top_heads(s, 3))
        print(f"{score:>20}: top heads {best}")
    if permuted is not None and positional is not None:
        # the association's positional controls, as the LEGO study reports print them (§4.2.1)
        top = ", ".join(f"L{l}H{h} {float(permuted[l, h]):.2f}"
                        for l, h, _ in top_heads(scores["association_variable"], 3))
        print(f"{'positional controls':>20}: association_variable of those heads with each "
              f"sentence's clauses permuted {top}; a content-blind head on the same slot of "
              f"every clause {float(positional):.2f} (an association head beats both)")
    print(f"figures: {out / 'attention.png'}, {out / 'head_scores.png'}")


def cmd_export(args: argparse.Namespace) -> None:
    from reasonlab.export import export_run

    cls, out = export_run(Path(args.run), args.format, Path(args.out), args.last_checkpoint)
    print(f"{out}: {cls} ({args.format}); see {out / 'README.md'} for how to load it")


def cmd_runs(args: argparse.Namespace) -> None:
    from reasonlab import index

    root = args.out
    if args.action in (None, "list"):
        infos = index.filter_runs(index.store_runs(root), index.parse_filters(args.filter))
        if not infos:
            raise ConfigError(f"no run under {root / 'runs'} matches "
                              f"{' '.join(args.filter)}; `reasonlab runs` lists them all")
        if args.format != "table":  # machine-readable: the records alone on stdout
            print(index.EXPORTS[args.format](infos), end="")
            return
        print(index.list_table(infos))
        counts: dict[str, int] = {}
        for r in infos:
            counts[r.status] = counts.get(r.status, 0) + 1
        print(f"{len(infos)} run(s): " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    elif args.action == "show":
        print(index.show(root, args.id))
    elif args.action == "diff":
        print(index.diff(root, args.id1, args.id2))
    elif args.action == "verify":
        damaged, n = index.verify(root)
        for line in damaged:
            print(line)
        if damaged:
            raise ReasonlabError(f"{len(damaged)} of {n} runs are damaged (listed above); "
                                 "`reasonlab runs gc` removes them, and running their "
                                 "commands again retrains them")
        print(f"{n} run(s) verified: none is damaged")
    else:
        print(index.gc(root, index.parse_age(args.older_than), args.yes))


# ------------------------------------------------------------------ plugins, new, options


def cmd_new(args: argparse.Namespace) -> None:
    """`new family NAME [--out DIR]`: the skeleton of a study family (docs/adding-a-family.md),
    inside this source checkout or, with --out, as an outside plugin in DIR/NAME."""
    import reasonlab
    from reasonlab.studies.kit.newfamily import next_steps, write_family

    root = Path(reasonlab.__file__).resolve().parents[2]
    if args.out is None and not (root / "pyproject.toml").is_file():
        raise ConfigError(f"no source checkout at {root} to add a family to; write it as a "
                          "plugin with --out DIR (load it with `reasonlab --include DIR`)")
    for path in write_family(args.name, root if args.out is None else None, args.out):
        print(f"wrote {path}")
    print(next_steps(args.name, args.out))


def _new_command(sub: Any) -> None:
    s = sub.add_parser("new", help="write the skeleton of a new study family: claims.toml, "
                       "recipes, analysis, verdict rule, a study, calibration, README, tests")
    s.add_argument("what", choices=["family"])
    s.add_argument("name", help="the family's key, a Python name (lowercase letters, digits, _)")
    s.add_argument("--out", type=Path, default=None, help="write it as an outside plugin, "
                   "DIR/NAME and DIR/tests (load it with `reasonlab --include DIR`); default: "
                   "into this source checkout, src/reasonlab/studies/NAME")
    s.set_defaults(fn=cmd_new)


STORE_COMMANDS = ("run", "sweep", "train")
"""Commands that took the store as --out: --store there too (claims, site, readme and runs name
it so), --out staying as its alias."""


def _store_option(sub: Any) -> None:
    for name in STORE_COMMANDS:
        sub.choices[name].add_argument(
            "--store", dest="out", type=Path, default=argparse.SUPPRESS, metavar="DIR",
            help="the store: the folder holding runs/ and the reports (--out is the same)")


def _global_options(p: argparse.ArgumentParser) -> None:
    from reasonlab import __version__

    p.add_argument("--version", action="version", version=f"reasonlab {__version__}")
    p.add_argument("--include", action="append", default=[], type=Path, metavar="PATH",
                   help="load plugins from PATH: a folder of modules, a package folder or a .py "
                   "file (repeatable; anywhere on the line; REASONLAB_PLUGINS also lists them)")


def hoist_include(argv: list[str]) -> list[str]:
    """`--include PATH` may follow the subcommand (`reasonlab run STUDY --include DIR`): move
    each to the front, where the top-level parser reads it."""
    front: list[str] = []
    rest: list[str] = []
    it = iter(argv)
    for a in it:
        if a == "--include":
            path = next(it, None)
            if path is None:
                raise ConfigError("--include needs a PATH: a folder of plugin modules, a "
                                  "package folder or a .py file")
            front += [a, path]
        elif a.startswith("--include="):
            front.append(a)
        else:
            rest.append(a)
    return front + rest


def load_plugins(paths: list[Path]) -> None:
    """The plugins of --include PATH, REASONLAB_PLUGINS and the entry points, imported before
    the command starts (a broken one is one line before anything is written); with none, this
    costs a look at the installed distributions' entry points."""
    from reasonlab import plugins

    plugins.include(paths) if paths else plugins.load()


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="reasonlab", description=" ".join(__doc__.split("\n\n")[0].split()))
    _global_options(p)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("studies", help="list studies, their claims and CPU budget; with "
                       "--scale, what each costs (runs, FLOPs, estimated GPU and CPU hours, "
                       "checkpoints and disk)")
    s.add_argument("--scale", choices=["smoke", "cpu", "long", "paper"], default=None,
                   help="print the cost of every study at this scale instead (long: only the "
                   "studies that define it)")
    s.set_defaults(fn=cmd_studies)

    s = sub.add_parser("claims", help="the claims ledger: per paper, every claim, its study "
                       "(or why none tests it) and the latest verdict at each scale")
    s.add_argument("paper", nargs="?", default=None, help="a paper's family key (lego, "
                   "symbols, anchors, fpt, artificial); default: all")
    s.add_argument("--store", type=Path, default=Path("reasonlab-out"),
                   help="where the study reports are (default reasonlab-out)")
    s.add_argument("--summary", action="store_true", help="only the per-paper counts, as a "
                   "Markdown table (the README's)")
    s.add_argument("--scale", choices=["smoke", "cpu", "long", "paper"], default="cpu",
                   help="the scale --summary counts (default cpu)")
    s.set_defaults(fn=cmd_claims)

    s = sub.add_parser("calibrate", help="every verdict rule simulated under its null (false "
                       "'reproduced' rate) and at the paper's effect (power at the study's "
                       "seeds), at the per-seed noise our runs show")
    s.add_argument("family", nargs="?", default=None, help="one family (kit, lego, symbols, "
                   "anchors, fpt, artificial); default: all")
    s.set_defaults(fn=cmd_calibrate)

    s = sub.add_parser("readme", help="record a store's verdicts and measured times in each "
                       "family's measured.json and regenerate the READMEs' tables from them")
    s.add_argument("--store", type=Path, default=None, help="read the newest report of every "
                   "study and scale here first (default: regenerate from measured.json only)")
    s.add_argument("--timings", type=Path, default=None, help="a JSON-lines timing log (study, "
                   "scale, wall_s, user_s, sys_s) for reports whose command trained nothing")
    s.add_argument("--check", action="store_true", help="change nothing; fail if a block is "
                   "out of date")
    s.set_defaults(fn=cmd_readme)

    s = sub.add_parser("run", help="run a study and write its report")
    s.add_argument("study")
    s.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="change every run of the "
                   "study (dotted keys, JSON values), e.g. steps=100 to time the paper scale")
    s.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None,
                   help="where every run trains (default: each recipe's, auto)")
    s.add_argument("--dtype", choices=["auto", "fp32", "tf32", "bf16"], default=None,
                   help="precision (default auto: bf16 on a CUDA GPU with bf16, else fp32)")
    s.add_argument("--scale", choices=["smoke", "cpu", "long", "paper"], default="cpu",
                   help="smoke (seconds), cpu (the default, ~15 min on 2 cores), long (hours "
                   "on 2 cores; `reasonlab studies` lists the studies that have it and their "
                   "measured times), paper")
    s.add_argument("--seeds", type=int, default=None, help="number of seeds (study default)")
    s.add_argument("--until-decided", action="store_true", help="add seeds in batches (of "
                   "--seeds, default the study's) until every claim is decided, curtailed (its "
                   "precondition out of reach of any seed to come) or at the cap, judging after "
                   "each batch with a group-sequential boundary that keeps false 'reproduced' "
                   "within 2.5%% over all looks (kit/sequential.py)")
    s.add_argument("--max-units", type=int, default=None, metavar="N", help="the cap of "
                   "--until-decided in seeds (default: the study's budget, else 4x its seeds)")
    s.add_argument("--out", type=Path, default=None, help="output folder")
    s.add_argument("--dry-run", action="store_true", help="train and write nothing: list the "
                   "study's runs with what the store holds of each (finished, training now, a "
                   "checkpoint to resume from) and estimate the time of the rest")
    _executor_options(s, slurm=True)
    _slurm_options(s)
    _tracker_options(s)
    s.add_argument("--quiet", action="store_true", help="no progress bars")
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("sweep", help="train a grid over a train config; table of final "
                       "metrics per cell")
    s.add_argument("config", type=Path)
    s.add_argument("axes", nargs="*", metavar="KEY=V1,V2", help="a swept key and its values "
                   "(dotted keys; JSON values); a single value just overrides")
    s.add_argument("--seeds", type=int, default=1, help="seeds per cell (0..N-1)")
    s.add_argument("--out", type=Path, default=None, help="store and report folder (default: "
                   "runs in reasonlab-out, report in reasonlab-out/sweeps/<config>-<hash>)")
    s.add_argument("--yes", action="store_true", help="run a grid larger than 64 runs")
    _executor_options(s)
    _tracker_options(s)
    s.add_argument("--quiet", action="store_true", help="no progress bars")
    s.set_defaults(fn=cmd_sweep)

    s = sub.add_parser("train", help="train one run from a JSON or TOML config")
    s.add_argument("config", type=Path)
    s.add_argument("overrides", nargs="*", help="key=value, dotted keys for nesting")
    s.add_argument("--out", type=Path, default=Path("reasonlab-out"))
    _tracker_options(s)
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(fn=cmd_train)

    s = sub.add_parser("data", help="print task examples (`data corpus NAME`: a pretraining "
                       "corpus; `data export TASK --out DIR`: a run's splits as Parquet; "
                       "`data lm-eval TASK --out DIR`: as an lm-evaluation-harness task)")
    s.add_argument("task", help="a task name, `corpus` followed by a corpus name, or `export` "
                   "or `lm-eval` followed by a task name")
    s.add_argument("overrides", nargs="*", help="task config key=value")
    s.add_argument("--n", type=int, default=None, help="examples printed (default 10)")
    s.add_argument("--seed", type=int, default=None, help="seed of the examples printed "
                   "(default 0); export: the run's seed, whose data stream it draws")
    s.add_argument("--format", choices=["text", "jsonl", "prompt"], default=None,
                   help="printed form (default text; prompt: what a generative model is asked, "
                   "and the answer, as JSON lines)")
    s.add_argument("--out", type=Path, default=None, help="export: the dataset folder (new or "
                   "empty)")
    s.add_argument("--n-train", type=int, default=None, help="export: training examples "
                   "(default: a run's, 20000)")
    s.add_argument("--n-test", type=int, default=None, help="export: test examples (default "
                   "2000)")
    s.add_argument("--n-val", type=int, default=None, help="export: validation examples, held "
                   "out of the training draw as a run holds them (default 0)")
    s.add_argument("--config", type=Path, default=None, help="export: the data of this train "
                   "config (JSON or TOML) or run folder (its config.json), instead of TASK")
    s.add_argument("--quiet", action="store_true", help="export: no progress bar")
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

    s = sub.add_parser("export", help="write a trained run in a format other tools load: "
                       "transformers (hf) or TransformerLens")
    s.add_argument("run", help="a run directory (<out>/runs/<id>)")
    s.add_argument("--format", default="hf", choices=["hf", "transformer-lens"])
    s.add_argument("--out", required=True, help="a new (or empty) folder to write")
    s.add_argument("--last-checkpoint", action="store_true", help="export an unfinished run: "
                   "the weights of its last checkpoint, verified (refused without this flag)")
    s.set_defaults(fn=cmd_export)

    s = sub.add_parser("site", help="a static HTML site of every study report (offline)")
    s.add_argument("--out", type=Path, default=None, help="site folder (default <store>/site)")
    s.add_argument("--store", type=Path, default=Path("reasonlab-out"),
                   help="where reports and runs are (default reasonlab-out)")
    s.set_defaults(fn=cmd_site)

    store = _Parser(add_help=False)
    store.add_argument("--store", "--out", dest="out", type=Path, default=Path("reasonlab-out"),
                       help="the store: the folder holding runs/ (default reasonlab-out)")
    s = sub.add_parser("runs", parents=[store], help="list the run store; show, diff or "
                       "garbage-collect runs")
    s.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="keep runs with this config value (dotted key), status or task; "
                   "repeatable")
    s.add_argument("--format", choices=["table", "json", "csv"], default="table",
                   help="table (default), or the index as JSON (a list of records) or CSV (one "
                   "column per config key a run changed) for pandas, spreadsheets, jq")
    s.set_defaults(fn=cmd_runs, action=None)
    # A sub-action's defaults would overwrite `runs --out X show ID`'s X: suppress them.
    store = _Parser(add_help=False)
    store.add_argument("--store", "--out", dest="out", type=Path, default=argparse.SUPPRESS,
                       help="the store")
    acts = s.add_subparsers(dest="action", parser_class=_Parser)
    a = acts.add_parser("list", parents=[store], help="list runs (the default)")
    a.add_argument("--filter", action="append", default=argparse.SUPPRESS, metavar="KEY=VALUE")
    a.add_argument("--format", choices=["table", "json", "csv"], default=argparse.SUPPRESS)
    a = acts.add_parser("show", parents=[store], help="config, curve and checkpoint of a run")
    a.add_argument("id", help="run id or a unique prefix")
    a = acts.add_parser("diff", parents=[store], help="config and metric differences")
    a.add_argument("id1")
    a.add_argument("id2")
    acts.add_parser("verify", parents=[store], help="read every run whole and list the "
                    "damaged ones, one line each naming the file (exit status 2 if any)")
    a = acts.add_parser("gc", parents=[store], help="remove damaged runs, and partial or "
                        "failed runs older than --older-than; never finished ones")
    a.add_argument("--older-than", default="1d", help="age, e.g. 30m, 12h, 7d (default 1d)")
    a.add_argument("--yes", action="store_true", help="remove without asking")
    _store_option(sub)
    _new_command(sub)
    return p


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Like parse_args, but key=value overrides may also follow the options
    (`train c.json --quiet steps=4`): argparse stops filling a `nargs="*"` positional at the
    first option, and parse_intermixed_args does not support subcommands."""
    parser = build_parser()
    args, extra = parser.parse_known_args(hoist_include(sys.argv[1:] if argv is None else argv))
    for name in ("overrides", "target", "axes"):
        if extra and isinstance(getattr(args, name, None), list) and not any(
                e.startswith("-") for e in extra):
            getattr(args, name).extend(extra)
            extra = []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        load_plugins(args.include)
        args.fn(args)
    except ReasonlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `reasonlab runs --format csv | head`: the reader has had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return 141  # 128 + SIGPIPE, as a shell tool ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
