"""The claims ledger: per paper, every claim the lab knows of, the study that tests it (or why
none does yet), and the latest verdict in a store at each scale (`reasonlab claims [PAPER]`).

A family declares its paper in `<family>/claims.toml` (kit/claims.py): the paper, the claims
each study judges and the claims no study tests yet, with why. The tested claims are read from
the registered studies (which declare them from the same file), so the ledger cannot drift from
what `reasonlab run` judges. Plugin families (kit/families.py) are papers like reasonlab's own.

Beside the verdicts, each paper lists the rules that cannot decide at the units its studies
run: the calibration cases (kit/calibration.py) that declare `decides_at`, the units per arm at
which the rule reaches TARGET_POWER at the paper's effect (e.g. an exact order test of two arms
from 4 seeds, a unanimous share from 6), with the units each scale runs. An inconclusive
verdict of such a rule is the design's, not bad luck: `--until-decided` or more seeds decide it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from reasonlab.errors import ConfigError
from reasonlab.studies.kit.claims import CLAIMS_FILE, claim_row, family_file
from reasonlab.studies.kit.core import SCALES, Claim
from reasonlab.studies.kit.families import BUILTIN, families, family_of, package, readme_path

__all__ = ["Entry", "Paper", "Untested", "family_of", "ledger", "papers"]

UNTESTED = "untested"
NOT_RUN = "not run"
NO_SCALE = "no such scale"
"""The count of claims whose study does not define the scale (e.g. needs pretrained weights)."""
STATUSES = ("reproduced", "not reproduced", "inconclusive")


@dataclass(frozen=True)
class Untested:
    """A claim of the paper that no study tests yet, and why (what is missing)."""

    claim: Claim
    why: str


@dataclass(frozen=True)
class Decides:
    """A rule that decides from more units than its study may run: its calibration case's
    declared `decides_at` and the units per arm the case runs at each scale."""

    rule: str
    """module.qualname of the rule, below reasonlab.studies."""
    decides_at: int
    units: tuple[tuple[str, int], ...]
    """(scale, units per arm) the case is drawn at: its study's default seeds per scale."""
    study: str | None = None

    def text(self) -> str:
        runs = ", ".join(f"{n} at {s}" for s, n in self.units)
        where = f"{self.study}: " if self.study else ""
        return f"{where}{self.rule} decides from {self.decides_at} units per arm; runs {runs}"


def decides(family: str) -> tuple[Decides, ...]:
    """The family's calibration cases that declare `decides_at` (kit/calibration.py), one
    line per rule, study and units (the cases of one rule at several noises are one line)."""
    from reasonlab.studies.kit.calibration import families_cases

    out: dict[tuple[str, str | None, int, tuple[tuple[str, int], ...]], Decides] = {}
    for _, cases in families_cases(family):
        for c in cases:
            if not hasattr(c, "decides_at") or c.decides_at is None:  # an Exempt decides nothing
                continue
            units = tuple(c.units().items())
            d = Decides(c.name.removeprefix(f"{BUILTIN}."), c.decides_at, units, c.study)
            out.setdefault((d.rule, d.study, d.decides_at, units), d)
    return tuple(out.values())


@dataclass(frozen=True)
class Paper:
    key: str
    """The family's folder under studies/ (`reasonlab claims KEY`)."""
    citation: str
    title: str
    seed: str
    """The document the family reproduces (in the project's shared papers), and which part."""
    untested: tuple[Untested, ...] = ()
    decides: tuple[Decides, ...] = ()
    """The rules that need more units than a study runs to decide (`decides`)."""


@dataclass
class Entry:
    """One line of the ledger: a claim, its study (None: untested) and its verdict per scale."""

    key: str
    text: str
    source: str
    study: str | None
    verdicts: dict[str, str] = field(default_factory=dict)
    why: str = ""
    paper_numbers: str = ""
    summaries: dict[str, str] = field(default_factory=dict)
    """Per scale, the verdict's effect with its interval and units, and why an inconclusive
    one is inconclusive (Verdict.summary, as the report stored it)."""

    scales: tuple[str, ...] = SCALES
    """The scales the study defines: at another one the claim reads "no <scale> scale", not
    "not run" (a study that needs pretrained backbones has no cpu scale)."""

    def kind(self, scale: str) -> str:
        """What `counts` counts it as: its verdict, NOT_RUN, NO_SCALE or UNTESTED."""
        if self.study is None:
            return UNTESTED
        if scale in self.verdicts:
            return self.verdicts[scale]
        return NOT_RUN if scale in self.scales else NO_SCALE

    def status(self, scale: str) -> str:
        """The kind as the ledger prints it."""
        kind = self.kind(scale)
        return f"no {scale} scale" if kind == NO_SCALE else kind


class ReportLike(Protocol):
    """What the ledger reads of a report found in a store (site.ReportInfo)."""

    study: str
    scale: str
    written: float
    verdicts: list[dict[str, Any]]


def paper_of(family: str) -> Paper:
    """The family's paper and its untested claims, as its claims file lists them."""
    where = f"{package(family)}/{CLAIMS_FILE}"
    data = family_file(package(family))
    if "paper" not in data:
        raise ConfigError(f"{where}: no [paper] table (citation, title, seed)")
    p = data["paper"]
    rows = data.get("untested", [])
    for u in rows:
        if "why" not in u:  # an untested claim without its reason is a gap the ledger hides
            raise ConfigError(f"{where}: untested claim {u.get('key', '?')!r} has no why")
    return Paper(family, p["citation"], p["title"], p["seed"],
                 tuple(Untested(claim_row(u, where, extra=("why",)), u["why"]) for u in rows))


def papers() -> dict[str, Paper]:
    """Every family's paper, by key, in family order (reasonlab's own, then plugins')."""
    return {f: paper_of(f) for f in families()}


def latest_verdicts(reports: Iterable[ReportLike]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(study, scale, claim key) -> the verdict record (status, summary, ...) of the newest
    report of that study and scale."""
    newest: dict[tuple[str, str], ReportLike] = {}
    for r in reports:
        if (r.study, r.scale) not in newest or r.written > newest[r.study, r.scale].written:
            newest[r.study, r.scale] = r
    return {(s, scale, v.get("claim", "?")): v
            for (s, scale), r in newest.items() for v in r.verdicts}


def ledger(reports: Iterable[ReportLike] = (), paper: str | None = None,
           only: Iterable[str] | None = None) -> list[tuple[Paper, list[Entry]]]:
    """Per paper (all, those keyed in `only`, or the one keyed `paper`): its tested claims in
    study order, then its untested ones, each with the latest verdict per scale found in
    `reports`."""
    from reasonlab.studies import STUDIES

    known = papers()
    if only is not None:
        known = {k: p for k, p in known.items() if k in set(only)}
    if paper is not None and paper not in known:
        raise ConfigError(f"no paper {paper!r}; papers: {', '.join(known)}")
    found = latest_verdicts(reports)
    out = []
    for key, p in known.items():
        if paper not in (None, key):
            continue
        entries = [Entry(c.key, c.text, c.source, name,
                         {s: found[name, s, c.key].get("status", "?") for s in SCALES
                          if (name, s, c.key) in found},
                         paper_numbers=c.paper_numbers,
                         summaries={s: found[name, s, c.key].get("summary", "") for s in SCALES
                                    if (name, s, c.key) in found},
                         scales=tuple(cls.scales))
                   for name, cls in STUDIES.items() if family_of(cls) == key
                   for c in cls.claims]
        entries += [Entry(u.claim.key, u.claim.text, u.claim.source, None, why=u.why,
                          paper_numbers=u.claim.paper_numbers) for u in p.untested]
        out.append((replace(p, decides=decides(key)), entries))
    return out


def counts(entries: list[Entry], scale: str) -> dict[str, int]:
    """claims, each verdict, not run (tested, no report at this scale), no such scale (its
    study does not define it) and untested."""
    out = {"claims": len(entries)} | {s: 0 for s in (*STATUSES, NOT_RUN, NO_SCALE, UNTESTED)}
    for e in entries:
        kind = e.kind(scale)
        out[kind if kind in out else NOT_RUN] += 1
    return out


def ledger_text(book: list[tuple[Paper, list[Entry]]]) -> str:
    lines = []
    for p, entries in book:
        c = counts(entries, "cpu")
        lines += [f"{p.citation}: {p.title}",
                  f"  family {p.key}: {readme_path(p.key)}",
                  f"  {c['claims']} claims, {c[UNTESTED]} untested; at cpu scale "
                  f"{c['reproduced']} reproduced, {c['not reproduced']} not reproduced, "
                  f"{c['inconclusive']} inconclusive, {c[NOT_RUN]} not run"
                  + (f", {c[NO_SCALE]} in studies without it" if c[NO_SCALE] else "")]
        for e in entries:
            where = e.study or UNTESTED
            lines.append(f"  - {where} / {e.key}: {e.text}")
            lines.append(f"      source: {e.source}"
                         + (f"; the paper's numbers: {e.paper_numbers}" if e.paper_numbers
                            else ""))
            if e.study is None:
                lines.append(f"      untested: {e.why}")
            else:
                lines.append("      " + "   ".join(f"{s}: {e.status(s)}" for s in SCALES))
                lines += [f"      {s}: {e.summaries[s]}" for s in SCALES if e.summaries.get(s)]
        if p.decides:
            from reasonlab.studies.kit.stats import TARGET_POWER

            lines.append("  rules that decide only from more units (calibration decides_at: "
                         f"power {TARGET_POWER:g} at the paper's effect from these, where a "
                         "study runs fewer):")
            lines += [f"  - {d.text()}" for d in p.decides]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def summary_markdown(book: list[tuple[Paper, list[Entry]]], scale: str = "cpu") -> str:
    """The README's per-paper table: claims, each verdict at `scale`, not run, no such scale
    (a study that needs pretrained weights has no cpu scale), untested."""
    rows = ["| paper | family | claims | reproduced | not reproduced | inconclusive | not run "
            f"| no {scale} scale | untested |", "|---|---|---|---|---|---|---|---|---|"]
    for p, entries in book:
        c = counts(entries, scale)
        rows.append(f"| {p.citation}, *{p.title}* | [{p.key}]({readme_path(p.key)}) | "
                    f"{c['claims']} | {c['reproduced']} | {c['not reproduced']} "
                    f"| {c['inconclusive']} | {c[NOT_RUN]} | {c[NO_SCALE]} | {c[UNTESTED]} |")
    return "\n".join(rows) + "\n"
