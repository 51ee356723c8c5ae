"""Talking to the user at a terminal, shared by the commands (cli, runs gc, sweeps, studies):
kept out of cli.py so that the modules the CLI calls never import it back."""

from __future__ import annotations

import sys
from typing import Any

from reasonlab.errors import ConfigError


def ask_stderr(prompt: str) -> str:
    """input(), with the prompt on stderr: stdout stays the command's output alone (a script
    piping it never reads a question, nor a question before an `error:` line)."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        sys.stderr.write("\n")
        raise EOFError
    return line.rstrip("\n")


def confirm(question: str, refused: str, ask: Any = ask_stderr, details: str = "") -> bool:
    """Ask a yes/no question on the terminal (after `details`, e.g. what would be removed);
    with no terminal (a script, CI) raise `refused` as a one-line error rather than guess."""
    if ask is ask_stderr and (sys.stdin is None or not sys.stdin.isatty()):
        raise ConfigError(refused)
    try:
        answer = ask(f"{details}\n{question} [y/N] " if details else f"{question} [y/N] ")
    except EOFError:
        raise ConfigError(refused) from None
    return answer.strip().lower() in ("y", "yes")


def check_workers(workers: int | None) -> None:
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers} must be at least 1 (runs trained side "
                          "by side; leave it out for one per CPU core)")


MAX_SEEDS = 1000
"""Most seeds a study or sweep takes (checked before a single config is built: a typo such as
--seeds 1000000000 would otherwise build specs for minutes before any other bound)."""


def check_seeds(seeds: int | None) -> None:
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        raise ConfigError(f"--seeds {seeds} must be between 1 and {MAX_SEEDS}")
