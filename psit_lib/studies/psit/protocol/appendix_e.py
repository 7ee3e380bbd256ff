"""The study's Appendix E as the study drew it, from this run's fork tests (notebook 07).

Appendix E lists the ten secrets most often revealed per game and model over the reveals of the
study's main runs (every agent once, at the run temperature). Here: the reveals of 02, 03 and 04
on their main models at their own temperature, an agent two of them ran counted once; the
sweeps' swept models are left out. Ties are ties: a tie the ten-secret cut would split is one
row. Reads stored records only (the fork tests' folders are handed in), so ``psit rescore``
reproduces it; an unreadable reveal stays a row with ``secret`` None, never dropped.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from psit_lib.analysis.labels import format_number
from psit_lib.runs.folder import RunFolder
from psit_lib.runs.records import EpisodeRecord, flat_record, read_records
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode
from psit_lib.studies.psit.secrets import lead_is_separated, lead_test

#: Columns of the reveals table (one row per episode).
COLUMNS = ("task", "model", "agent", "temperature", "secret", "status", "episode_id", "source_notebook")


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return number if math.isfinite(number) else float("nan")


RevealRecord = EpisodeRecord[ForkEpisode] | EpisodeRecord[SecretChoiceEpisode]


def _revealed(record: RevealRecord) -> str | None:
    """The secret read from the episode's reveal (None when it failed or had no readable reveal)."""
    reveal = record.result.reveal if record.result is not None else None
    return reveal.parsed if reveal is not None else None


def status_of(record: RevealRecord) -> str:
    """``ok`` (a secret was revealed and read), ``unparseable`` (no readable reveal) or ``error``."""
    if record.result is None:
        return "error"
    parsed = _revealed(record)
    return "ok" if isinstance(parsed, str) and parsed.strip() else "unparseable"


def rows_from_records(records: Iterable[RevealRecord], *, source_notebook: str,
                      default_temperature: float = float("nan"),
                      default_model: str | None = None) -> list[dict[str, Any]]:
    """One row per episode: the spec's cell, the revealed secret (None if missing), its status; the
    temperature is the spec's when the experiment varied it, else the notebook's one temperature."""
    rows = []
    for rec in records:
        status = status_of(rec)
        temperature = _number(rec.spec.get("temperature"))
        rows.append({
            "task": rec.spec["task"],
            "model": rec.spec.get("model", default_model),
            "agent": rec.spec["agent"],
            "temperature": default_temperature if math.isnan(temperature) else temperature,
            "secret": _revealed(rec) if status == "ok" else None,
            "status": status,
            "episode_id": rec.episode_id,
            "source_notebook": source_notebook,
        })
    return rows


def folder_reveals(folder: RunFolder) -> list[dict[str, Any]]:
    """The rows of one fork-test notebook folder; none when it holds no record asking for the
    secret. The temperature is the run's own, the model the spec's (else the run's one model)."""
    raw = list(folder.records().values()) if folder.has_records() else []
    if not any(isinstance(flat_record(r).get("reveal"), dict) for r in raw):  # no record asks for the secret
        return []
    params, metadata = folder.params(), folder.metadata()
    models = params.run_models
    return rows_from_records(read_records(raw, ForkEpisode, source=folder.records_source),
                             source_notebook=str(metadata.notebook or folder.dir.name),
                             default_temperature=_number(params.temperature),
                             default_model=models[0] if len(models) == 1 else metadata.model)


#: The fork-test notebooks whose main runs Appendix E counts, in order of precedence for an agent
#: that two of them ran (Hangman, diagnosis, then the memory-strategy grid over both).
FORK_NOTEBOOKS = ("02_hangman_fork_tests", "03_diagnosis_ddxplus", "04_memory_strategy_ablations")
#: Secrets per list, as Appendix E.
K = 10

TOP_COLUMNS = ["task", "model", "rank", "secret", "count", "share", "tied", "n", "n_missing", "temperature"]


def main_fork_reveals(folders: Mapping[str, str | Path], notebooks: Sequence[str] = FORK_NOTEBOOKS) -> pd.DataFrame:
    """Reveals of every agent of the fork-test notebook ``folders`` (notebook -> its folder, handed
    in by the study: 07's run-mates) on their main models, at their run temperature: an episode
    counts when its model is one the notebook ran as its main model (``_models`` of its stored
    parameters); a (task, model, agent) that several notebooks ran counts from the first of
    ``notebooks`` only. Empty (columns of the reader) when no folder holds such reveals."""
    frames = []
    main: dict[str, tuple[set[str], float | None]] = {}
    for name, path in folders.items():
        folder = RunFolder(path)
        rows = folder_reveals(folder)
        if not rows:
            continue
        frames.append(pd.DataFrame(rows, columns=list(COLUMNS)))
        params = folder.params()
        main[str(folder.metadata().notebook or name)] = main[name] = (set(params.run_models), params.temperature)
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    df = pd.concat(frames, ignore_index=True).sort_values(["source_notebook", "episode_id"], kind="stable")
    keep = [_is_main(row.source_notebook, row.model, row.temperature, main) for row in df.itertuples(index=False)]
    return _once_per_agent(df[keep], notebooks).reset_index(drop=True)


def _is_main(notebook: str, model: str, temperature: float, main: dict[str, tuple[set[str], float | None]]) -> bool:
    models, run_temperature = main.get(notebook, (set(), None))
    same_t = run_temperature is None or (isinstance(temperature, float) and math.isclose(temperature, run_temperature))
    return model in models and same_t


def _once_per_agent(df: pd.DataFrame, notebooks: Sequence[str]) -> pd.DataFrame:
    """Each (task, model, agent) from the first notebook of ``notebooks`` that ran it."""
    if df.empty:
        return df
    order = df["source_notebook"].map({nb: i for i, nb in enumerate(notebooks)}).fillna(len(notebooks))
    first = order.groupby([df["task"], df["model"], df["agent"]]).transform("min")
    return df[order == first]


def ranked_with_ties(counts: Counter[str], k: int = K) -> list[tuple[int, str, int, int]]:
    """(rank, secret, count, tied) for the ``k`` most revealed secrets: secrets with the same count
    share a rank (the next rank skips past them) and are listed by their text; a tie the cut at
    ``k`` would split is one row, ``"(N secrets tied)"``, never cut alphabetically."""
    out: list[tuple[int, str, int, int]] = []
    rank = 1
    for count in sorted(set(counts.values()), reverse=True):
        if rank > k:
            break
        names = sorted(s for s, c in counts.items() if c == count)
        if rank - 1 + len(names) <= k:
            out += [(rank, name, count, len(names)) for name in names]
        else:
            out.append((rank, tie_label(len(names)), count, len(names)))
        rank += len(names)
    return out


def tie_label(n: int) -> str:
    """The row that stands for ``n`` secrets tied across the list's cut."""
    return f"({n} secrets tied)"


def top_secrets(df: pd.DataFrame, k: int = K) -> pd.DataFrame:
    """Appendix E's lists: per (task, model), the ``k`` most revealed secrets with their count, their
    share of the cell's readable reveals and how many secrets share that count (``tied``); ties
    share a rank and a tie across the cut is one row (:func:`ranked_with_ties`). ``n_missing``
    counts the cell's episodes without a readable reveal (never dropped silently)."""
    rows = []
    if df.empty:
        return pd.DataFrame(columns=TOP_COLUMNS)
    for (task, model), cell in df.groupby(["task", "model"], sort=True):
        secrets = cell["secret"].dropna().astype(str).tolist()
        temperatures = sorted({float(t) for t in cell["temperature"].dropna()})
        temperature = temperatures[0] if len(temperatures) == 1 else float("nan")
        ranked = ranked_with_ties(Counter(secrets), k)
        for rank, secret, count, tied in ranked:
            rows.append({"task": task, "model": model, "rank": rank, "secret": secret, "count": count,
                         "share": count / len(secrets), "tied": tied, "n": len(secrets),
                         "n_missing": len(cell) - len(secrets), "temperature": temperature})
        if not ranked:
            rows.append({"task": task, "model": model, "rank": None, "secret": None, "count": 0,
                         "share": float("nan"), "tied": 0, "n": 0, "n_missing": len(cell),
                         "temperature": temperature})
    return pd.DataFrame(rows, columns=TOP_COLUMNS).astype({"rank": "Int64", "tied": "Int64"})


def plot_top_secrets(table: pd.DataFrame, *, label: str) -> Figure:
    """Appendix E as a figure: one panel per (task, model), the top secrets as horizontal bars of
    their count, with n (readable reveals) and the temperature in each panel's title. Tasks are
    columns, models rows: two panels side by side fit a 1400 px page."""
    from psit_lib.analysis.labels import label_figure
    from psit_lib.analysis.plots import mark_no_data, new_figure

    cells = [] if table.empty else list(table.groupby(["task", "model"], sort=True))
    tasks = sorted({t for (t, _), _ in cells}) or ["(no fork-test reveals)"]
    models = sorted({m for (_, m), _ in cells}) or [""]
    k = int(table["rank"].max()) if len(table) and table["rank"].notna().any() else K
    fig = new_figure(5.2 * len(tasks), 0.32 * k * len(models) + 1.1 * len(models) + 0.6)
    axes = fig.subplots(len(models), len(tasks), squeeze=False)
    by_cell = {key: part for key, part in cells}
    colour = "#0072B2"
    for i, model in enumerate(models):
        for j, task in enumerate(tasks):
            ax = axes[i][j]
            part = by_cell.get((task, model))
            if part is None or part["secret"].isna().all():
                mark_no_data(ax, f"{task} · {model}" if model else task, "no readable reveal")
                continue
            part = part.dropna(subset=["secret"])
            labels = [textwrap.shorten(str(s), 28, placeholder="…") for s in part["secret"]]
            ax.barh(range(len(part)), part["count"], color=colour)
            ax.set_yticks(range(len(part)), labels, fontsize=8)
            ax.invert_yaxis()
            for y, (count, share) in enumerate(zip(part["count"], part["share"])):
                ax.text(count, y, f" {count} ({share:.0%})", va="center", fontsize=7)
            ax.set_xlim(0, part["count"].max() * 1.35)
            ax.set_xlabel("reveals (count)", fontsize=8)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.tick_params(axis="x", labelsize=8)
            first = part.iloc[0]
            t = first["temperature"]
            t_text = f", T={t:g}" if isinstance(t, float) and not math.isnan(t) else ""
            ax.set_title(f"{task} · {model}\nn={int(first['n'])} reveals{t_text}", fontsize=9)
    fig.suptitle("Top-10 revealed secrets per game and model (every agent of the main runs of 02-04, by Appendix E's rule; ties share a rank)", fontsize=10)
    return label_figure(fig, label)


def top_reading(table: pd.DataFrame) -> str:
    """Generated sentences on :func:`top_secrets`: per game and model, the most revealed secret
    with its count and share. A single secret is "the most revealed" only when its lead over the next
    count is separated (:func:`~psit_lib.studies.psit.secrets.lead_is_separated`, an exact one-sided
    binomial test at alpha 0.05); a lead the test cannot separate, secrets tied at the top (named
    together, never one of them as "the" attractor) and a top count of one (every revealed secret was
    revealed once at most) are no single attractor."""
    if table.empty:
        return ("No fork-test reveals in this run folder, so there is no Appendix E list: run notebooks 02, "
                "03 and 04 in the same `psit run` (or set `read_from`).")
    lines = []
    for (task, model), cell in table.groupby(["task", "model"], sort=True):
        head = f"- **{task} · {model}**: "
        cell = cell.dropna(subset=["secret"])
        if cell.empty:
            lines.append(head + "no readable reveal, so no secret to list.")
            continue
        n, top = int(cell["n"].iloc[0]), int(cell["count"].max())
        first = cell[cell["count"] == top]
        tied = int(first["tied"].iat[0])
        share = f"{top} of {n} reveals ({top / n:.0%})"
        if top == 1:
            lines.append(head + f"no secret was revealed more than once in {n} reveals: no attractor.")
        elif tied == 1:
            rest = cell[cell["count"] < top]
            runner_up = int(rest["count"].iat[0]) if len(rest) else 0
            following = ""
            if len(rest):
                nxt = rest.iloc[0]
                label = (f"{int(nxt['tied'])} secrets tied" if int(nxt["tied"]) > 1 else repr(str(nxt["secret"])))
                following = f"; next: {label} ({runner_up})"
            name, p = repr(str(first["secret"].iat[0])), lead_test(top, runner_up)
            test = f"one-sided binomial test of {top} against {runner_up}, p = {format_number(p)}"
            if lead_is_separated(top, runner_up):
                lines.append(head + f"the most revealed secret is {name}, {share}{following} (its lead is "
                                    f"separated: {test}).")
            else:
                lines.append(head + f"{name} leads with {share}{following}, a lead this run cannot separate from "
                                    f"the next ({test}): no single attractor.")
        elif len(first) < tied:  # the tie is wider than the list: shown as one row
            lines.append(head + f"{tied} secrets are tied at the top with {share} each: no single attractor.")
        else:
            named = ", ".join(repr(str(s)) for s in first["secret"])
            lines.append(head + f"{tied} secrets are tied at the top with {share} each ({named}): "
                                "no single attractor.")
    return "\n".join(lines)
