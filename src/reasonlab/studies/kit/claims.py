"""Claims as data. Each family ships one `claims.toml` listing every claim the lab knows of for
its paper: the paper itself (`[paper]`), then per study (`[[studies.<registered name>]]`) the
claims it judges in the order its verdicts come, then the claims no study tests yet
(`[[untested]]`, each with `why`). Each claim holds key, text, source and, where the paper gives
them, paper_numbers.

A study's claims are read from the file by its registered name when it registers
(`STUDIES.register("lego-probes")` reads `[[studies.lego-probes]]` of the claims.toml beside its
module: `study_claims`), so the wording of a claim lives in one place, the ledger (`reasonlab
claims`) and the studies read the same rows, and a paper's claims can be read, and edited,
without reading code. A class body may still say it, `claims = family_claims(__package__)[
"lego-probes"]`, or derive its claims from those rows (the anchor studies judge each on two
readings).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from types import MappingProxyType
from typing import Any

from reasonlab.errors import ConfigError
from reasonlab.studies.kit.core import Claim

CLAIMS_FILE = "claims.toml"
REQUIRED = ("key", "text", "source")
OPTIONAL = ("paper_numbers",)


@cache
def family_file(package: str) -> Mapping[str, Any]:
    """The parsed claims file of a family package (e.g. `reasonlab.studies.lego`), read once:
    every study of the family asks for it at import."""
    try:
        text = (files(package) / CLAIMS_FILE).read_text(encoding="utf-8")
        return MappingProxyType(tomllib.loads(text))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{package}: cannot read {CLAIMS_FILE}: {e}") from e


def claim_row(row: Mapping[str, str], where: str, extra: tuple[str, ...] = ()) -> Claim:
    """One claim of a claims file; a missing or misspelt field fails here, at import, not as a
    claim silently without its source or numbers."""
    missing = [f for f in REQUIRED if f not in row]
    unknown = sorted(set(row) - {*REQUIRED, *OPTIONAL, *extra})
    if missing or unknown:
        raise ConfigError(f"{where}: claim {row.get('key', '?')!r} lacks {missing or 'nothing'}, "
                          f"has unknown fields {unknown or 'none'}")
    return Claim(row["key"], row["text"], row["source"], row.get("paper_numbers", ""))


@cache
def family_claims(package: str) -> Mapping[str, tuple[Claim, ...]]:
    """Registered study name -> the claims it declares, in the order of the family's file."""
    studies = family_file(package).get("studies", {})
    return MappingProxyType({
        name: tuple(claim_row(r, f"{package}/{CLAIMS_FILE} [{name}]") for r in rows)
        for name, rows in studies.items()})


def study_claims(module: str, name: str) -> tuple[Claim, ...]:
    """The claims of the study `name` defined in `module`: the `[[studies.<name>]]` rows of
    the claims.toml of its family, the package the module is in."""
    package = module.rpartition(".")[0]
    if not package:
        raise ConfigError(f"study {name} is defined in {module}, a module outside any package: "
                          f"put it in its family's package, beside the {CLAIMS_FILE} that lists "
                          "its claims (docs/adding-a-family.md)")
    claims = family_claims(package).get(name)
    if claims is None:
        raise ConfigError(f"study {name}: {package}/{CLAIMS_FILE} has no [[studies.{name}]] "
                          "rows; list the claims it judges there (or declare `claims` in its "
                          "class)")
    return claims
