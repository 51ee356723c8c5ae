"""Talking to the user at a terminal, shared by the commands (cli, runs gc, sweeps, studies):
kept out of cli.py so that the modules the CLI calls never import it back."""

from __future__ import annotations

from typing import Any

from reasonlab.errors import ConfigError


def confirm(question: str, refused: str, ask: Any = input) -> bool:
    """Ask a yes/no question on the terminal; with no terminal (a script, CI) raise `refused`
    as a one-line error rather than guess."""
    try:
        answer = ask(f"{question} [y/N] ")
    except EOFError:
        raise ConfigError(refused) from None
    return answer.strip().lower() in ("y", "yes")


def check_workers(workers: int | None) -> None:
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers} must be at least 1 (runs trained side "
                          "by side; leave it out for one per CPU core)")
