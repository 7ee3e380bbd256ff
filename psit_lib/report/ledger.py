"""The claims ledger of a whole run: every registered study's claims (:func:`psit_lib.studies.registry.claims`)
decided on the tables the run's notebooks saved, merged by name (:func:`psit_lib.analysis.claims.merge_tables`),
knowing from the folders' metadata whether the simulator answered and which models ran; the index shows it and
``psit compare RUN --paper`` prints it."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Iterable

import pandas as pd

from psit_lib.analysis.claims import CONTRADICTED, INCONCLUSIVE, SUPPORTED, Claim, RunContext, ledger, merge_tables
from psit_lib.analysis.verdicts import ILLUSTRATES, NOT_COMPARABLE
from psit_lib.runs.folder import RunFolder, notebooks_with_metadata
from psit_lib.studies.registry import claims as registered_claims


def all_claims() -> list[Claim]:
    """Every registered study's claims, in the order of the studies' first notebooks."""
    return registered_claims()


def claim_tables() -> set[str]:
    """Every table a claim reads (judge scores shown beside ACC's score claim included)."""
    return {name for claim in all_claims() for name in claim.tables} | {"judge_scores"}


def run_tables(run_dir: Path, names: Iterable[str] | None = None) -> dict[str, dict[str, pd.DataFrame]]:
    """Each notebook's saved tables of ``names`` (default: those the claims read), notebooks in name order."""
    wanted = sorted(claim_tables() if names is None else set(names))
    folders = [RunFolder(run_dir / nb) for nb in sorted(notebooks_with_metadata(run_dir))]
    return {f.dir.name: {name: pd.read_csv(f.tables_dir / f"{name}.csv") for name in wanted
                         if (f.tables_dir / f"{name}.csv").is_file()} for f in folders}


def run_context(run_dir: Path) -> RunContext:
    """Whether any notebook of the run was answered by the simulator, and every model its notebooks ran (main
    models, as their folders' parameters record them)."""
    folders = [RunFolder(run_dir / nb) for nb in sorted(notebooks_with_metadata(run_dir))]
    simulated, models = False, []
    for folder in folders:
        meta = folder.metadata()
        simulated = simulated or bool(meta.simulated) or (meta.backend or "") == "sim"
        models += list(folder.params().run_models) or ([meta.model] if meta.model else [])
    return RunContext(simulated=simulated, models=tuple(dict.fromkeys(models)))


def run_ledger(run_dir: Path) -> pd.DataFrame:
    """The run's ledger: one row per claim."""
    return ledger(all_claims(), merge_tables(run_tables(run_dir)), run_context(run_dir))


_CLASS = {SUPPORTED: "ok", CONTRADICTED: "bad", INCONCLUSIVE: "open", ILLUSTRATES: "illustrates",
          NOT_COMPARABLE: "not-comparable"}
_STYLE = ("<style>.status.illustrates{background:#e9ebf0;color:#4a4f5c;font-style:italic}"
          ".status.not-comparable{background:#fff1d0;color:#6b4e00}.ledger .quote{font-style:italic;color:#333}"
          ".ledger .where{font-size:0.85em;color:#555}</style>")


def ledger_section(run_dir: Path) -> str:
    """The index's first section: one row per claim with the paper's words and evidence, the same test on the
    paper's counts, this run's evidence, the test and the verdict."""
    context = run_context(run_dir)
    table = ledger(all_claims(), merge_tables(run_tables(run_dir)), context)
    rows = "".join(
        f"<tr><td>{html.escape(r.id)}</td><td>{html.escape(r.claim)}<div class='quote'>{html.escape(r.quote)}</div>"
        f"</td><td>{html.escape(r.paper_evidence)}<div class='paper-test'>the test on the paper's counts: "
        f"<b>{html.escape(r.paper_verdict)}</b>{(' — ' + html.escape(r.paper_statistic)) if r.paper_statistic else ''}"
        f"</div></td><td>{html.escape(r.run_evidence)}</td><td>{html.escape(r.test)}</td>"
        f"<td><span class='status {_CLASS.get(r.verdict, 'bad')}'>{html.escape(r.verdict)}</span></td></tr>"
        for r in table.itertuples(index=False))
    simulated = ("<p><b>This run is the simulated model:</b> every claim <i>illustrates the protocol</i> (grey): "
                 "its statistic is shown, and no claim is set against the paper.</p>" if context.simulated else "")
    return (_STYLE + "<h2 id='claims'>Claims ledger</h2><p>Each paper's headline claims (SPEC §9-§10 in the protocol), "
            "in our words with the paper's own beside them, decided on this run's saved tables: <i>supported</i>, "
            "<i>contradicted</i> or <i>inconclusive</i> by the test named in the row, only on the paper's models; "
            "a run of the simulated model or of another model <i>illustrates the protocol</i> (no verdict), and a cell "
            "run under a smaller token budget than the paper's is <i>not comparable</i>. The same test on the paper's "
            "own counts stands beside its evidence, or the reason it cannot be run. A claim a run cannot decide "
            "(too few episodes, one model size, a table it did not save) is inconclusive, never supported.</p>"
            + simulated + "<div class='scroll ledger'><table><thead><tr><th>Claim</th><th>Statement (the paper's "
            "words)</th><th>Paper's evidence</th><th>This run</th><th>Test</th><th>Verdict</th></tr></thead><tbody>"
            + rows + "</tbody></table></div><h2>Notebooks</h2>")
