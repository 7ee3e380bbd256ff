"""The claims ledger of a whole run: every study's claims decided on the tables the run's notebooks saved, merged by
name (:func:`psit_lib.analysis.claims.merge_tables`); the index shows it and ``psit compare RUN --paper`` prints it."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Iterable

import pandas as pd

from psit_lib.analysis.claims import INCONCLUSIVE, SUPPORTED, Claim, ledger, merge_tables
from psit_lib.runs.folder import RunFolder, notebooks_with_metadata


def all_claims() -> list[Claim]:
    """Every study's claims, the private-state study first."""
    from psit_lib.studies.acc.claims import claims as acc_claims
    from psit_lib.studies.basis.claims import claims as basis_claims
    from psit_lib.studies.psit.claims import claims as psit_claims

    return [*psit_claims(), *acc_claims(), *basis_claims()]


def claim_tables() -> set[str]:
    """Every table a claim reads."""
    return {name for claim in all_claims() for name in claim.tables}


def run_tables(run_dir: Path, names: Iterable[str] | None = None) -> dict[str, dict[str, pd.DataFrame]]:
    """Each notebook's saved tables of ``names`` (default: those the claims read), notebooks in name order."""
    wanted = sorted(claim_tables() if names is None else set(names))
    folders = [RunFolder(run_dir / nb) for nb in sorted(notebooks_with_metadata(run_dir))]
    return {f.dir.name: {name: pd.read_csv(f.tables_dir / f"{name}.csv") for name in wanted
                         if (f.tables_dir / f"{name}.csv").is_file()} for f in folders}


_CLASS = {SUPPORTED: "ok", INCONCLUSIVE: "open"}


def ledger_section(run_dir: Path) -> str:
    """The index's first section: one row per claim with the paper's evidence, this run's, the test
    and the verdict."""
    table = ledger(all_claims(), merge_tables(run_tables(run_dir)))
    rows = "".join(
        f"<tr><td>{html.escape(r.id)}</td><td>{html.escape(r.claim)}</td><td>{html.escape(r.paper_evidence)}"
        f"<div class='paper-test'>the test on the paper's counts: {html.escape(r.paper_verdict)}</div></td>"
        f"<td>{html.escape(r.run_evidence)}</td><td>{html.escape(r.test)}</td>"
        f"<td><span class='status {_CLASS.get(r.verdict, 'bad')}'>{html.escape(r.verdict)}</span></td></tr>"
        for r in table.itertuples(index=False))
    return ("<h2 id='claims'>Claims ledger</h2><p>Each paper's headline claims (SPEC §10 in the protocol), "
            "decided on this run's saved tables: <i>supported</i>, <i>contradicted</i> or <i>inconclusive</i> by "
            "the test named in the row; the same test on the paper's own counts beside its evidence. A claim a "
            "run cannot decide (too few episodes, one model size, a table it did not save) is inconclusive, "
            "never supported.</p><div class='scroll'><table><thead><tr><th>Claim</th><th>Statement</th><th>Paper's evidence</th>"
            "<th>This run</th><th>Test</th><th>Verdict</th></tr></thead><tbody>" + rows + "</tbody></table></div>"
            "<h2>Notebooks</h2>")
