"""``psit compare RUN_A RUN_B``: what two runs set differently (their folders' parameters and metadata),
and their saved result tables side by side."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.analysis.verdicts import chance_differs
from psit_lib.cli import terminal
from psit_lib.cli.errors import CliError
from psit_lib.cli.progress import fit
from psit_lib.runs.folder import RunFolder, notebooks_with_metadata
from psit_lib.runs.load import resolve_run
from psit_lib.runs.paths import results_root
from psit_lib.report.compare_page import config_differences


RATE_COLUMNS = ("successes", "n_scored")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "—" if value != value else f"{value:.3g}"
    return str(value)


def rate_comparison(ta: pd.DataFrame, tb: pd.DataFrame, name: str, width: int = 100) -> list[str]:
    """A rate table of two runs row by row: each run's successes/n and rate, the difference
    (B − A) and a two-sided Fisher exact test of it; ``*`` where p < 0.05 (per row, uncorrected:
    a screen for where to look, not a finding)."""
    from scipy.stats import fisher_exact

    keys = [c for c in ta.columns if c in tb.columns and not pd.api.types.is_numeric_dtype(ta[c])
            and c not in ("source",)]
    rows_a = {tuple(r[k] for k in keys): r for _, r in ta.iterrows() if r.get("n_scored") == r.get("n_scored")}
    rows_b = {tuple(r[k] for k in keys): r for _, r in tb.iterrows() if r.get("n_scored") == r.get("n_scored")}
    lines = [f"  {name}: rates (B − A; * two-sided Fisher p < 0.05, uncorrected)"]
    n = max(16, min(48, width - 64))  # the label column: what the counts, rates, Δ and p leave
    # rows in both runs first, then those only in B, then those only in A
    for key in [*(k for k in rows_a if k in rows_b), *(k for k in rows_b if k not in rows_a),
                *(k for k in rows_a if k not in rows_b)]:
        label, ra, rb = " · ".join(str(v) for v in key), rows_a.get(key), rows_b.get(key)
        if len(label) > n:  # a label wider than its column stands on its own line, above its numbers
            lines.append(f"    {label}")
            label = ""
        if ra is None or rb is None:
            lines.append(f"    {label:{n}} only in {'B' if ra is None else 'A'}")
            continue
        ka, na, kb, nb = (int(ra["successes"]), int(ra["n_scored"]), int(rb["successes"]), int(rb["n_scored"]))
        if not na or not nb:
            lines.append(f"    {label:{n}} A {ka}/{na}  B {kb}/{nb}  (nothing scored in one run)")
            continue
        p = float(fisher_exact([[ka, na - ka], [kb, nb - kb]])[1])
        lines.append(f"    {label:{n}} A {ka:>4}/{na:<4} {ka / na:5.2f}  B {kb:>4}/{nb:<4} {kb / nb:5.2f}  "
                     f"Δ {kb / nb - ka / na:+.2f}  p {p:.2g}{' *' if p < 0.05 else ''}")
    return lines


def table_comparison(a: Path, b: Path, name: str, width: int = 100) -> str:
    ta, tb = pd.read_csv(RunFolder(a).tables_dir / name), pd.read_csv(RunFolder(b).tables_dir / name)
    if ta.equals(tb):
        return f"  {name}: identical ({len(ta)} rows)"
    if all(c in ta.columns and c in tb.columns for c in RATE_COLUMNS):
        return "\n".join(rate_comparison(ta, tb, name, width))
    return "\n".join(_row_differences(ta, tb, name))


def _row_differences(ta: pd.DataFrame, tb: pd.DataFrame, name: str) -> list[str]:
    """The rows of a table that differ between two runs (the first 12), A's above B's, values to 3
    significant digits."""
    columns = [c for c in ta.columns if c in tb.columns]
    fa, fb = ta[columns].map(_fmt), tb[columns].map(_fmt)
    lines = [f"  {name}: differs ({len(ta)} | {len(tb)} rows); columns: " + ", ".join(columns)]
    shown = 0
    for i in range(max(len(fa), len(fb))):
        row_a = " ".join(fa.iloc[i]) if i < len(fa) else "(no row)"
        row_b = " ".join(fb.iloc[i]) if i < len(fb) else "(no row)"
        if row_a == row_b:
            continue
        if shown == 12:
            lines.append("    …")
            break
        lines += [f"    A {row_a}", f"    B {row_b}"]
        shown += 1
    return lines


def compare(run_a: str, run_b: str) -> str:
    a, b = resolve_run(run_a), resolve_run(run_b)
    in_a, in_b = notebooks_with_metadata(a), notebooks_with_metadata(b)
    if not in_a | in_b:
        raise CliError(f"{a.name} and {b.name} hold no notebook results")
    lines, width = [f"A = {a}", f"B = {b}"], terminal.width()
    for nb in sorted(in_a | in_b):
        if nb not in in_a or nb not in in_b:
            lines.append(f"\n== {nb}: only in {'A' if nb in in_a else 'B'}")
            continue
        lines.append(f"\n== {nb}")
        diffs = config_differences([a / nb, b / nb])
        lines.append("  configuration: identical" if diffs.empty else "  configuration differences (A | B):")
        lines += [f"    {k}: {va} | {vb}" for k, va, vb in diffs.itertuples(index=False)]
        tables = sorted(set(RunFolder(a / nb).table_names()) & set(RunFolder(b / nb).table_names()))
        if not tables:
            lines.append("  (no saved result tables in common)")
        lines += [table_comparison(a / nb, b / nb, t, width) for t in tables]
    return "\n".join(fit(line, width) for line in "\n".join(lines).split("\n"))  # every line fits the terminal


def _verdict_short(row: Any) -> str:
    if row.verdict == "consistent":
        return f"consistent (h ±{row.margin_h:g})"
    if row.verdict != "inconclusive":
        return str(row.verdict)
    need = row.episodes_to_decide
    return "inconclusive (no n decides)" if pd.isna(need) else f"inconclusive (n≈{int(need)} decides)"


def _verdict_rows(check: pd.DataFrame, keys: tuple[str, ...], width: int) -> list[str]:
    """One line per cell (run and paper counts, run − paper with its 95% interval, the verdict), then one line per
    reason a cell has no verdict."""
    longest = max((len(_verdict_short(r)) for r in check.itertuples(index=False)), default=7)
    n = max(16, min(44, width - 42 - longest))  # the label column: what the counts, interval and verdicts leave
    lines = [f"  {fit(' · '.join(keys), n):{n}} {'run':>9} {'paper':>5} {'run−paper [95%]':>21}  verdict"]
    for r in check.itertuples(index=False):
        label = " · ".join(str(getattr(r, k)) for k in keys)
        if len(label) > n:  # a label wider than its column stands on its own line, above its numbers
            lines.append(f"  {label}")
            label = ""
        lines.append(f"  {label:{n}} {r.run_successes:>4}/{r.run_n:<4} {r.paper_rate:>5.2f} "
                     f"{r.difference:+.2f} [{r.diff_low:+.2f}, {r.diff_high:+.2f}]  {_verdict_short(r)}")
    for note in dict.fromkeys(check["note"].fillna("")):
        if note:
            lines += textwrap.wrap(f"no verdict: {note}", width, initial_indent="  ", subsequent_indent="    ")
    decided = check[check["verdict"].isin(["consistent", "differs", "inconclusive"])]
    if len(decided):
        lines += textwrap.wrap(f"({len(decided)} cell(s) tested at 0.05: about {chance_differs(len(decided)):.2g} of "
                               "them would read differs by chance were every one equal to the paper's)", width,
                               initial_indent="  ", subsequent_indent="   ")
    return lines


def compare_with_paper(run: str, margin: float | None = None) -> str:
    """``psit compare RUN --paper``: the claims ledger, then every paper number with a count beside the run's,
    with the difference's interval and a verdict (analysis/verdicts); a simulated run's cells illustrate the protocol
    (no verdict); every line fits the terminal (:func:`psit_lib.cli.terminal.width`)."""
    from psit_lib.analysis.claims import ledger, ledger_lines, merge_tables
    from psit_lib.analysis.verdicts import DEFAULT_MARGIN
    from psit_lib.report.ledger import all_claims, claim_tables, run_context, run_tables
    from psit_lib.studies.basis.claims import passk_against_paper, success_against_paper
    from psit_lib.studies.psit.protocol.reproduction import reproduction_check, reproduction_reading

    margin = DEFAULT_MARGIN if margin is None else margin
    folder = resolve_run(run)
    if not notebooks_with_metadata(folder):
        raise CliError(f"{folder.name} holds no notebook results; run one first")
    per_notebook = run_tables(folder, claim_tables() | {"passk_comparison"})
    context = run_context(folder)
    width = terminal.width()
    lines = [f"run = {folder}", ""]
    if context.simulated:
        lines += textwrap.wrap("This run is the simulated model: every claim and cell below illustrates the protocol "
                               "(its statistic is shown; no verdict against the paper).", width) + [""]
    lines += ["== Claims ledger (docs/protocol.md §10)"]
    lines += ledger_lines(ledger(all_claims(), merge_tables(per_notebook), context), width)
    lines += ["", f"== Paper numbers with counts, run against paper (margin: Cohen's h ±{margin:g}; "
                  "docs/protocol.md §9)"]
    for nb, tables in per_notebook.items():
        if "table1_self_consistency" in tables:
            table1 = tables["table1_self_consistency"]
            check = reproduction_check(table1, margin, simulated=context.simulated)
            lines.append(f"\n-- {nb}: Table 1 self-consistency")
            lines += textwrap.wrap(reproduction_reading(check, sorted(set(table1["model"].astype(str)))), width,
                                   initial_indent="  ", subsequent_indent="  ")
            if len(check):
                lines += _verdict_rows(check, ("task", "agent", "paper_model"), width)
        if "success_pooled" in tables:
            check = success_against_paper(tables["success_pooled"], margin, simulated=context.simulated)
            lines.append(f"\n-- {nb}: BASIS Table 1 success (paper: 180 runs per cell)")
            lines += _verdict_rows(check, ("model", "scenario", "system"), width) if len(check) else ["  no measured cell"]
            if "passk_comparison" in tables:
                sets = passk_against_paper(tables["passk_comparison"], tables["success_pooled"], margin,
                                           simulated=context.simulated)
                lines.append(f"\n-- {nb}: BASIS Table 1 pass^k and pass@k (paper: 10 sets per k; run: its sets)")
                lines += _verdict_rows(sets, ("scenario", "system", "measure", "k"), width) if len(sets) else ["  no sets"]
    return "\n".join(fit(line, width) for line in lines)


def compare_page(names: list[str], out: str | None = None) -> Path:
    """``psit compare A [B ...] --html``: the runs (one run: its models) side by side on one offline
    page (:mod:`psit_lib.report.compare_page`), written to ``out`` or ``results/compare-A-B....html``."""
    from psit_lib.report.compare_page import compare_html

    folders = [resolve_run(name) for name in names]
    path = Path(out) if out else results_root() / ("compare-" + "-".join(f.name for f in folders) + ".html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(compare_html(folders), encoding="utf-8")
    return path
