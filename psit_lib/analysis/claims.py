"""A claims ledger (SPEC §9-§10): each paper's headline claims, quoted, decided on a run's saved tables.

A study declares its claims as data (``psit_lib/studies/<study>/claims.toml``: the claim in our words, the paper's own
words and where they stand, the tables it reads, the test in words) and the rules that decide them in Python
(:class:`Rule`); :func:`load_claims` joins the two. A claim is decided only on the rows of the paper's models
(:mod:`psit_lib.analysis.paper_models`): a run of the simulated model, or of a model that is not the paper's,
*illustrates the protocol* (the statistic is shown, no verdict); rows a study marks not comparable (a smaller token
budget than the paper's) are left out, and a claim left with none is *not comparable*. The same test on the paper's
own counts stands beside (or the reason the paper gives none).

"Every cell" claims use an intersection-union test: supported when each cell's test holds at alpha (every part must
hold), contradicted when one cell's opposite test holds after Bonferroni over the cells (any one of many may fail by
chance)."""

from __future__ import annotations

import math
import textwrap
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from scipy.stats import norm

from psit_lib.analysis.paper_models import PaperModels, is_simulated_model, paper_models
from psit_lib.analysis.verdicts import DEFAULT_MARGIN, ILLUSTRATES, NOT_COMPARABLE, margin_note

SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, ILLUSTRATES, NOT_COMPARABLE)
LEDGER_COLUMNS = ["id", "paper", "claim", "quote", "paper_evidence", "paper_verdict", "paper_statistic",
                  "run_evidence", "test", "verdict"]
NO_COUNTS = "no counts to test"

Tables = Mapping[str, pd.DataFrame]


@dataclass(frozen=True)
class Decision:
    """A claim's verdict on one run, with the statistic that decided it (one line)."""

    verdict: str
    statistic: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown claim verdict {self.verdict!r}")


@dataclass(frozen=True)
class RunContext:
    """What a ledger knows about a run besides its tables: whether the simulator answered, and the models that ran
    (read for tables without a ``model`` column). :data:`PAPER_COUNTS` is the paper itself."""

    simulated: bool = False
    models: tuple[str, ...] = ()
    paper: bool = False


PAPER_COUNTS = RunContext(paper=True)
FROM_TABLES = RunContext()
"""A run known only by its tables: not the simulator, its models the tables' ``model`` columns."""

Withhold = Callable[[pd.DataFrame], "pd.Series"]
"""Per row of a table, why the row is not comparable with the paper ("" when it is)."""


@dataclass(frozen=True)
class Rule:
    """The Python half of a claim: its test on a run's tables, the paper's evidence (a generated sentence), the
    paper's own numbers as the tables the test reads (when it reports counts), and which rows are not comparable."""

    decide: Callable[[Tables], Decision]
    evidence: Callable[[], str]
    paper_tables: Callable[[], Tables] | None = None
    withhold: Withhold | None = None


@dataclass(frozen=True)
class Claim:
    """One headline claim of a paper and the test that decides it on a run's tables."""

    id: str
    paper: str
    statement: str
    quote: str
    where: str
    tables: tuple[str, ...]
    test: str
    direction: str
    rule: Rule
    models: PaperModels
    no_counts: str = ""
    """Why the paper's own counts cannot be tested (when ``rule.paper_tables`` is None)."""
    optional: tuple[str, ...] = field(default=())
    """Tables the claim reads when the run saved them (shown, not required)."""

    @property
    def evidence(self) -> str:
        return self.rule.evidence()

    def decide(self, tables: Tables, run: RunContext = FROM_TABLES) -> Decision:
        missing = [t for t in self.tables if t not in tables or tables[t] is None or tables[t].empty]
        if missing:
            return Decision(INCONCLUSIVE, f"this run saved no {', '.join(missing)} table")
        if run.paper:
            return self.rule.decide(tables)
        mine, left_out, why = self._paper_rows(tables, run)
        if mine is None:
            shown = self.rule.decide(tables)
            return Decision(ILLUSTRATES, f"{shown.statistic} [no verdict: {why}]")
        comparable, capped, reason = self._comparable(mine)
        if comparable is None:
            shown = self.rule.decide(mine)
            return Decision(NOT_COMPARABLE, f"{shown.statistic} [no verdict: {reason}]")
        decision = self.rule.decide(comparable)
        notes = [f"{left_out} row(s) of other models left out ({why})" if left_out else "",
                 f"{capped} row(s) not comparable left out ({reason})" if capped else ""]
        extra = "; ".join(n for n in notes if n)
        return Decision(decision.verdict, decision.statistic + (f" [{extra}]" if extra else ""))

    def _paper_rows(self, tables: Tables, run: RunContext) -> tuple[dict[str, pd.DataFrame] | None, int, str]:
        """The rows of the paper's models (None when there are none), how many rows were left out, and why."""
        if run.simulated:
            return None, 0, self.models.why_not(", ".join(run.models) or "psit-sim", simulated=True)
        out: dict[str, pd.DataFrame] = {}
        left_out, why = 0, ""
        for name, table in tables.items():
            if table is None or table.empty:
                out[name] = table
                continue
            names = (table["model"].astype(str) if "model" in table.columns
                     else pd.Series([", ".join(run.models)] * len(table), index=table.index))
            reference = (table["source"].astype(str).str.startswith("reference") if "source" in table.columns
                         else pd.Series(False, index=table.index))  # the paper's own rows a table shows beside
            ours = pd.Series([all(self.models.model_of(m.strip()) is not None for m in n.split(",") if m.strip())
                              and bool(n.strip()) for n in names], index=table.index) & ~reference
            other = ~ours & ~reference
            if other.any():
                first = names[other].iloc[0]
                why = why or self.models.why_not(first.split(",")[0].strip(), is_simulated_model(first))
                left_out += int(other.sum()) if name in self.tables else 0
            out[name] = table[ours | reference]
            if name in self.tables and not ours.any():
                return None, left_out, why or self.models.why_not(", ".join(run.models) or "this run's model")
        return out, left_out, why

    def _comparable(self, tables: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame] | None, int, str]:
        if self.rule.withhold is None:
            return tables, 0, ""
        out, capped, reason = {}, 0, ""
        for name, table in tables.items():
            if name not in self.tables or table is None or table.empty:
                out[name] = table
                continue
            why = self.rule.withhold(table)
            bad = why.astype(str) != ""
            if bad.any():
                capped += int(bad.sum())
                reason = reason or str(why[bad].iloc[0])
            out[name] = table[~bad]
        if any(out[t].empty for t in self.tables):
            return None, capped, reason
        return out, capped, reason

    def paper_decision(self) -> Decision | None:
        """The same test on the paper's own counts (None when the paper gives none: :attr:`no_counts` says why)."""
        return None if self.rule.paper_tables is None else self.decide(self.rule.paper_tables(), PAPER_COUNTS)


def load_claims(path: Path, rules: Mapping[str, Rule], values: Mapping[str, object] | None = None) -> list[Claim]:
    """The claims of a study's TOML file (``paper``, ``models``, then ``[[claim]]`` tables) with their rules;
    ``values`` fill ``{name}`` fields of the test's wording. A claim without a rule, or a rule without a claim, is an
    error (the file and the code must agree)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = data.get("claim", [])
    ids = [str(e["id"]) for e in entries]
    if set(ids) != set(rules):
        raise ValueError(f"{path.name}: claims {sorted(set(ids) ^ set(rules))} have no rule or no entry")
    models = paper_models(str(data["models"]))
    return [Claim(id=str(e["id"]), paper=str(data["paper"]), statement=" ".join(str(e["statement"]).split()),
                  quote=" ".join(str(e.get("quote", "")).split()), where=" ".join(str(e.get("where", "")).split()),
                  tables=tuple(e["tables"]), test=" ".join(str(e["test"]).format(**(values or {})).split()),
                  direction=str(e["direction"]), rule=rules[str(e["id"])], models=models,
                  no_counts=" ".join(str(e.get("no_counts", "")).split()))
            for e in entries]


def ledger(claims: Iterable[Claim], tables: Tables, run: RunContext = FROM_TABLES) -> pd.DataFrame:
    """One row per claim: the claim and the paper's words, the paper's evidence and the same test on its own counts,
    this run's evidence, the test, the verdict."""
    rows = []
    for claim in claims:
        decision, own = claim.decide(tables, run), claim.paper_decision()
        quote = f"“{claim.quote}” ({claim.where})" if claim.quote else claim.where
        rows.append({"id": claim.id, "paper": claim.paper, "claim": claim.statement, "quote": quote,
                     "paper_evidence": claim.evidence,
                     "paper_verdict": NO_COUNTS if own is None else own.verdict,
                     "paper_statistic": claim.no_counts if own is None else own.statistic,
                     "run_evidence": decision.statistic, "test": claim.test, "verdict": decision.verdict})
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS)


def verdict_rule(paper_n: int, run: RunContext = FROM_TABLES, margin: float = DEFAULT_MARGIN,
                 unit: str = "episodes") -> str:
    """The verdicts' margin against a paper's count per cell, as a page says it (generated); on a simulated run,
    that no cell is compared."""
    if run.simulated:
        return ("This run is the simulated model: it illustrates the protocol, and no cell or claim is set against "
                "the paper (the rule below applies to a run of the paper's models).")
    return margin_note(paper_n, margin, unit=unit)


def ledger_lines(table: pd.DataFrame, width: int = 120) -> list[str]:
    """The ledger as plain text, every line at most ``width`` characters."""
    lines: list[str] = []
    for row in table.itertuples(index=False):
        lines += textwrap.wrap(f"[{row.id}] {str(row.verdict).upper()} · {row.paper}: {row.claim}", width,
                               subsequent_indent="      ")
        own = f"{row.paper_verdict}" + (f": {row.paper_statistic}" if row.paper_statistic else "")
        for label, text in (("paper", row.quote), ("evidence", row.paper_evidence),
                            ("on the paper's counts", own), ("run", row.run_evidence), ("test", row.test)):
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


def all_of(parts: Sequence[tuple[str, bool, bool]], what: str, shown: int = 3, name_open: bool = True) -> Decision:
    """An "in every cell" claim from per-cell (label, supports, opposes) results: supported when every
    cell supports, contradicted when a cell opposes (the caller tests opposition at alpha / cells),
    else inconclusive; the statistic counts them and names the opposing cells, or the undecided ones
    (``name_open``: False when the caller lists every cell after it)."""
    if not parts:
        return Decision(INCONCLUSIVE, f"no {what} in this run")
    against = [label for label, _, opposes in parts if opposes]
    held = sum(1 for _, supports, _ in parts if supports)
    summary = f"{held} of {len(parts)} {what} support it"
    if against:
        return Decision(CONTRADICTED, f"{summary}; against it: {', '.join(against)}" if name_open else summary)
    if held == len(parts):
        return Decision(SUPPORTED, summary)
    if not name_open:
        return Decision(INCONCLUSIVE, summary)
    open_ = [label for label, supports, _ in parts if not supports]
    more = f" and {len(open_) - shown} more" if len(open_) > shown else ""
    return Decision(INCONCLUSIVE, f"{summary}; undecided: {', '.join(open_[:shown])}{more}")


def any_of(parts: Sequence[tuple[str, bool, bool]], what: str) -> Decision:
    """A "not in every cell" claim (the negation of a consistent pattern) from per-cell (label, breaks the
    pattern, shows it) results: supported when a cell breaks the pattern, contradicted when every cell shows it,
    else inconclusive."""
    if not parts:
        return Decision(INCONCLUSIVE, f"no {what} in this run")
    breaks = [label for label, brk, _ in parts if brk]
    shows = sum(1 for _, _, s in parts if s)
    if breaks:
        return Decision(SUPPORTED, f"{len(breaks)} of {len(parts)} {what} break the pattern: {', '.join(breaks)}")
    if shows == len(parts):
        return Decision(CONTRADICTED, f"all {len(parts)} {what} show the pattern")
    return Decision(INCONCLUSIVE, f"{shows} of {len(parts)} {what} show the pattern, none is shown to break it")


def both(first: Decision, second: Decision, names: tuple[str, str]) -> Decision:
    """A claim of two halves: supported when both are, contradicted when either is, else inconclusive."""
    verdicts = {first.verdict, second.verdict}
    verdict = (CONTRADICTED if CONTRADICTED in verdicts else SUPPORTED if verdicts == {SUPPORTED} else INCONCLUSIVE)
    return Decision(verdict, f"{names[0]}: {HALF[first.verdict]} ({first.statistic}); "
                             f"{names[1]}: {HALF[second.verdict]} ({second.statistic})")


HALF = {SUPPORTED: "holds", CONTRADICTED: "fails", INCONCLUSIVE: "undecided"}
"""A half's outcome in a statistic (the verdict words are the claim's alone)."""


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
