"""A claims ledger (SPEC §10): each paper's headline claims decided on a run's saved tables (a missing one: inconclusive).

"Every cell" claims use an intersection-union test: supported when each cell's test holds at alpha (every part must hold),
contradicted when one cell's opposite test holds after Bonferroni over the cells (any one of many may fail by chance)."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import pandas as pd
from scipy.stats import norm

SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"
LEDGER_COLUMNS = ["id", "paper", "claim", "paper_evidence", "paper_verdict", "run_evidence", "test", "verdict"]

Tables = Mapping[str, pd.DataFrame]


@dataclass(frozen=True)
class Decision:
    """A claim's verdict on one run, with the statistic that decided it (one line)."""

    verdict: str
    statistic: str

    def __post_init__(self) -> None:
        if self.verdict not in (SUPPORTED, CONTRADICTED, INCONCLUSIVE):
            raise ValueError(f"unknown claim verdict {self.verdict!r}")


@dataclass(frozen=True)
class Claim:
    """One headline claim of a paper and the test that decides it on a run's tables."""

    id: str
    paper: str
    statement: str
    evidence: str
    tables: tuple[str, ...]
    test: str
    direction: str
    decide_tables: Callable[[Tables], Decision]
    paper_tables: Callable[[], Tables] | None = None
    """The paper's own numbers as the tables the claim reads, when it reports them with counts."""

    def decide(self, tables: Tables) -> Decision:
        missing = [t for t in self.tables if t not in tables or tables[t] is None or tables[t].empty]
        if missing:
            return Decision(INCONCLUSIVE, f"this run saved no {', '.join(missing)} table")
        return self.decide_tables(tables)

    def paper_decision(self) -> Decision | None:
        """The same test on the paper's own counts (None when the paper gives none)."""
        return None if self.paper_tables is None else self.decide(self.paper_tables())


def ledger(claims: Iterable[Claim], tables: Tables) -> pd.DataFrame:
    """One row per claim: the paper's statement and evidence (and the same test on the paper's own
    counts), this run's evidence, the test, the verdict."""
    rows = []
    for claim in claims:
        decision, own = claim.decide(tables), claim.paper_decision()
        rows.append({"id": claim.id, "paper": claim.paper, "claim": claim.statement, "paper_evidence": claim.evidence,
                     "paper_verdict": "no counts to test" if own is None else own.verdict,
                     "run_evidence": decision.statistic, "test": claim.test, "verdict": decision.verdict})
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS)


def ledger_lines(table: pd.DataFrame, width: int = 120) -> list[str]:
    """The ledger as plain text, every line at most ``width`` characters."""
    lines: list[str] = []
    for row in table.itertuples(index=False):
        lines += textwrap.wrap(f"[{row.id}] {row.paper} · {row.claim}  =>  {str(row.verdict).upper()}", width,
                               subsequent_indent="      ")
        paper = f"{row.paper_evidence} [the test on the paper's counts: {row.paper_verdict}]"
        for label, text in (("paper", paper), ("run", row.run_evidence), ("test", row.test)):
            lines += textwrap.wrap(f"{label}: {text}", width, initial_indent="      ", subsequent_indent="        ")
    return lines


def merge_tables(per_notebook: Mapping[str, Tables]) -> dict[str, pd.DataFrame]:
    """One table per name over a run's notebooks (in the mapping's order): rows concatenated, a row
    whose key (its non-numeric columns) an earlier notebook already gave left out, so a cell two
    notebooks cover (02 and 04 on Hangman) is counted once."""
    merged: dict[str, list[pd.DataFrame]] = {}
    for tables in per_notebook.values():
        for name, table in tables.items():
            merged.setdefault(name, []).append(table)
    out = {}
    for name, parts in merged.items():
        table = pd.concat([p for p in parts if not p.empty] or parts, ignore_index=True)
        keys = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
        out[name] = table.drop_duplicates(subset=keys or None, keep="first").reset_index(drop=True)
    return out


def all_of(parts: Sequence[tuple[str, bool, bool]], what: str, alpha: float = 0.05) -> Decision:
    """An "in every cell" claim from per-cell (label, supports, opposes) results: supported when every
    cell supports, contradicted when a cell opposes (the caller tests opposition at alpha / cells),
    else inconclusive; the statistic counts them and names the opposing cells."""
    if not parts:
        return Decision(INCONCLUSIVE, f"no {what} in this run")
    against = [label for label, _, opposes in parts if opposes]
    held = sum(1 for _, supports, _ in parts if supports)
    summary = f"{held} of {len(parts)} {what} support it"
    if against:
        return Decision(CONTRADICTED, f"{summary}; against it: {', '.join(against)}")
    return Decision(SUPPORTED if held == len(parts) else INCONCLUSIVE, summary)


def trend_z(successes: Sequence[int], trials: Sequence[int], scores: Sequence[float]) -> float:
    """Cochran-Armitage trend statistic z of success over ordered scores (positive: rises with the
    score); nan when there is no spread to test."""
    n_total, k_total = sum(trials), sum(successes)
    if n_total == 0:
        return float("nan")
    p = k_total / n_total
    mean = sum(n * x for n, x in zip(trials, scores)) / n_total
    t = sum((k - n * p) * (x - mean) for k, n, x in zip(successes, trials, scores))
    var = p * (1 - p) * sum(n * (x - mean) ** 2 for n, x in zip(trials, scores))
    return t / math.sqrt(var) if var > 0 else float("nan")


def one_sided_p(z: float) -> float:
    """Upper-tail normal p-value of z (nan stays nan)."""
    return float(norm.sf(z)) if z == z else float("nan")
