"""``psit run --dry-run``: what a run would cost, on the simulator and on a real endpoint, without running anything.

Episodes come from each notebook's study plan; their cost from a *call model* measured on the simulator
(``data/call_model.json``, remeasured by ``benchmarks/measure_call_model.py``). Real models write longer
replies than the simulator, so completion tokens and endpoint times are lower bounds.
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psit_lib.cli import terminal
from psit_lib.cli.errors import CliError

CALL_MODEL = "call_model.json"
SWEEPS = "simulator sweeps"
"""The one row of a notebook's sweeps (simulator-only: never run, timed or priced on an endpoint)."""


def load_call_model(path: Path | None = None) -> dict[str, Any]:
    from psit_lib.data_files import data_dir

    path = path or data_dir(CALL_MODEL)
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read the call model {path} ({exc}); run benchmarks/measure_call_model.py") from None


def episode_key(params: dict[str, Any]) -> str:
    """What an episode's cost depends on besides its notebook: its task or scenario, its agent or system."""
    where = params.get("task") or params.get("scenario") or params.get("domain") or "*"
    who = params.get("agent") or params.get("system") or "*"
    return f"{where}/{who}"


def episode_units(params: dict[str, Any]) -> int:
    """How many measured units an episode is: its turns where it has turns, else one."""
    return int(params.get("n_turns") or 1)


@dataclass
class Estimate:
    notebook: str
    episodes: int = 0
    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    note: str = ""
    longest: tuple[int, str] = (0, "")
    """The longest prompt of the planned episodes as measured on the simulator: (tokens, role)."""
    by_model: dict[str, "Estimate"] = field(default_factory=dict)
    """The same counts per model the episodes name (simulator sweeps as one row)."""

    def add(self, calls: float, prompt_tokens: float, completion_tokens: float) -> None:
        self.calls += calls
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens

    def seconds(self, prompt_rate: float, completion_rate: float) -> float:
        """At a real endpoint processing ``prompt_rate`` and generating ``completion_rate`` tokens/s in all."""
        return self.prompt_tokens / prompt_rate + self.completion_tokens / completion_rate

    def usd(self, prompt_price: float, completion_price: float) -> float:
        """At these USD per million prompt and completion tokens."""
        return (self.prompt_tokens * prompt_price + self.completion_tokens * completion_price) / 1e6


def estimate_notebook(notebook: str, values: dict[str, Any], models: list[str], simulated: bool,
                      call_model: dict[str, Any]) -> Estimate:
    """The planned episodes of one notebook (main plan, and sweeps on the simulator) and their cost."""
    from psit_lib.studies.registry import params_model, study_of

    study = study_of(notebook)
    model = params_model(notebook)
    found = Estimate(notebook)
    if study is None or model is None:
        found.note = "no study declares this notebook's episodes"
        return found
    part = study.notebook(notebook)
    if part.plan is None:
        found.note = "no episode plan (its calls are not estimated)"
        return found
    params = model(**values)
    run_models = list(getattr(params, "models", None) or models)
    # every part of the run (main, each swept value on the simulator, the notebook's others)
    sweep_names = (lambda knob, swept: {value: f"sweep:{knob}={value}" for value in swept}) if simulated else None
    parts = study.parts(notebook, params, run_models, sweep_names)
    specs = [(p.name, spec) for p in parts for spec in p.specs]
    notes: list[str] = []
    missing = 0
    default_model = (run_models or ["?"])[0]
    longest = call_model.get("longest_prompt", {}).get(notebook) or {}
    measured = call_model.get("per_unit", {}).get(notebook) or {}  # by episode_key, else its task's, else "*"
    # model-graded scorers call a model again for each episode they score (05's judge and its variants)
    graded = [s for s in part.scorers if s.model_graded]
    scoring = call_model.get("scoring", {}).get(notebook) or {}
    unmeasured = sorted(s.name for s in graded if s.name not in scoring)
    for part_name, spec in specs:
        name = str(spec.params.get("model") or default_model)
        per_model = found.by_model.setdefault(SWEEPS if name.startswith("sweep:") else name,
                                              Estimate(notebook))
        per_model.episodes += 1
        key = episode_key(spec.params)
        per_model.longest = max([per_model.longest, *((t, r) for r, t in (longest.get(key) or {}).items())])
        row = measured.get(key) or measured.get(key.split("/")[0] + "/*") or measured.get("*")
        if row is None:
            missing += 1
            continue
        units = episode_units(spec.params)
        rows = [row, *(scoring[s.name] for s in graded if s.name in scoring
                       and (s.applies is None or s.applies(params, part_name)))]
        for counted in rows:
            counts = (counted["calls"] * units, counted["prompt_tokens"] * units, counted["completion_tokens"] * units)
            found.add(*counts)
            per_model.add(*counts)
    found.episodes = len(specs)
    if missing:
        notes.append(f"{missing} episode(s) of a kind the call model has not measured are not counted")
    if graded:
        counted = [s.name for s in graded if s.name not in unmeasured]
        notes += [f"with the calls of {len(counted)} model-graded scorer(s)"] if counted else []
        notes += [f"the calls of scorer(s) {', '.join(unmeasured)} are not measured, not counted"] if unmeasured else []
    found.note = "; ".join(notes)
    return found


def _paper_cells(notebook: str, values: dict[str, Any]) -> tuple[list[float], int, int] | None:
    """(the paper's rates of the cells a notebook's run would set beside the paper, the paper's n per
    cell, the run's planned n per cell), or None for a notebook with no paper number to decide."""
    if "n_episodes" in values and "agents" in values:
        from psit_lib.studies.psit.protocol.reproduction import PAPER_N
        from psit_lib.studies.psit.reference import self_consistency_reference

        tasks = values.get("tasks") or [t for t in ("hangman", "diagnosis") if t in notebook]
        rates = [float(r) for t in tasks for r in self_consistency_reference(t, list(values["agents"]))["rate"]]
        return rates, PAPER_N, int(values["n_episodes"])
    if "reference_sets" in values:
        from psit_lib.studies.basis.claims import PAPER_N as BASIS_N
        from psit_lib.studies.basis.reference import reference_success

        return list(reference_success().values()), BASIS_N, int(values["reference_sets"]) * (1 + 2 + 5 + 10)
    return None


def margin_sizing_lines(sizing: dict[str, tuple[list[float], int, int]], margin: float) -> list[str]:
    """Per notebook with paper numbers: the episodes per cell at which a cell at the paper's rate reads
    *consistent within ±margin* (largest and median; cells no run size confirms), and whether the plan decides any."""
    from psit_lib.analysis.verdicts import episodes_for_margin

    if not sizing:
        return []
    lines = [f"Sizing for the verdicts against the papers at margin: Cohen's h ±{margin:g} (--margin; docs/protocol.md, "
             "Verdicts): episodes per cell for a cell at the paper's rate to read 'consistent'."]
    for notebook, (rates, paper_n, planned) in sizing.items():
        needs = [episodes_for_margin(r, margin, paper_n) for r in rates]
        reachable = sorted(n for n in needs if n is not None)
        if not rates:
            lines.append(f"  {notebook:36} no cell of the paper in this plan")
            continue
        enough = sum(1 for n in reachable if n <= planned)
        head = (f"  {notebook:36} {len(rates)} paper cells (paper n = {paper_n}); planned {planned} per cell "
                f"decides {enough}")
        if reachable:
            head += f"; needs up to {reachable[-1]} (median {reachable[len(reachable) // 2]})"
        if len(reachable) < len(rates):
            head += f"; {len(rates) - len(reachable)} cell(s) no run size confirms at this margin"
        lines.append(head + (": too small to decide anything" if enough == 0 else ""))
    return lines


def humanise(n: float) -> str:
    """``4,812`` or ``146.2 M``: a count taken in at a glance, never a run of seven digits."""
    return f"{n / 1e6:,.1f} M" if abs(n) >= 1e6 else f"{n:,.0f}"


def parse_price(text: str | None) -> tuple[float, float] | None:
    """``--price IN,OUT``: USD per million prompt and completion tokens (None: not given)."""
    if text is None:
        return None
    try:
        prompt, completion = (float(part) for part in text.split(","))
        if not (0 <= prompt < math.inf and 0 <= completion < math.inf):
            raise ValueError
    except ValueError:
        raise CliError(f"--price {text!r} is not IN,OUT: give USD per million prompt and completion tokens, "
                       "e.g. --price 0.15,0.60") from None
    return prompt, completion


def check_rates(prompt_rate: float, completion_rate: float) -> None:
    if not (0 < prompt_rate < math.inf and 0 < completion_rate < math.inf):
        raise CliError(f"--prompt-rate {prompt_rate:g} and --completion-rate {completion_rate:g} must be positive "
                       "tokens per second, e.g. --prompt-rate 1000 --completion-rate 100")


def summed(label: str, parts: list[Estimate]) -> Estimate:
    return Estimate(label, sum(m.episodes for m in parts), sum(m.calls for m in parts),
                    sum(m.prompt_tokens for m in parts), sum(m.completion_tokens for m in parts))


def endpoint_part(row: Estimate) -> Estimate:
    """The episodes a real endpoint would run: all but the simulator's sweeps."""
    return summed(row.notebook, [m for name, m in row.by_model.items() if name != SWEEPS])


def context_warnings(rows: list[Estimate], settings: Any) -> list[str]:
    """One line per notebook and model whose longest planned prompt (measured on the simulator) exceeds
    the context the model's endpoint reports (llama.cpp ``/props``, vLLM, Ollama), and one per model
    whose endpoint reports none (the check is skipped, and says so); none on the simulator."""
    from psit_lib.llm.server_limits import probe

    if settings.simulated:
        return []
    key = settings.api_key.get_secret_value() if settings.api_key else None
    contexts: dict[str, int | None] = {}
    lines = []
    for row in rows:
        for model, part in row.by_model.items():
            tokens, role = part.longest
            if not tokens or model == SWEEPS:
                continue
            if model not in contexts:
                urls = settings.urls_for(model)
                contexts[model] = probe(urls[0], model, key, measure=False).context if urls else None
                if contexts[model] is None:
                    lines.append(f"skipped: the context check of {model}: "
                                 + (f"{urls[0]} reports no context length (llama.cpp, vLLM and Ollama do)" if urls
                                    else "no endpoint serves it (PSIT_BASE_URLS, PSIT_MODEL_ENDPOINTS)"))
            context = contexts[model]
            if context and tokens > context:
                lines.append(f"warning: {row.notebook}'s longest prompt ({role}, {tokens:,} tokens on the simulator) "
                             f"exceeds the {context:,}-token context {model}'s endpoint reports")
    return lines


def resumes(run_id: str, notebooks: list[Path], fresh: bool = False) -> str:
    """Whether a run id is a new run or resumes folders (their set-up checked already)."""
    from psit_lib.runs.folder import RunFolder
    from psit_lib.runs.paths import results_root

    found = {nb.stem: len(RunFolder(results_root() / run_id / nb.stem).finished_ids()) for nb in notebooks}
    done = {stem: n for stem, n in found.items() if n}
    if not done:
        return "a new run"
    if fresh:
        return "--fresh replaces the episodes of " + ", ".join(f"{stem} ({n})" for stem, n in done.items())
    return "it resumes " + ", ".join(f"{stem} ({n} finished episodes kept)" for stem, n in done.items())


def dry_run_table(notebooks: list[Path], params: dict[str, dict[str, Any]], *, prompt_rate: float,
                  completion_rate: float, price: tuple[float, float] | None = None,
                  call_model_path: Path | None = None, margin: float | None = None, run_id: str | None = None,
                  fresh: bool = False) -> str:
    from psit_lib.cli.notebooks import default_values
    from psit_lib.cli.progress import format_duration
    from psit_lib.llm.settings import LLMSettings

    check_rates(prompt_rate, completion_rate)
    settings = LLMSettings.from_env()
    call_model = load_call_model(call_model_path)
    values = {nb.stem: {**default_values(nb), **params[nb.stem]} for nb in notebooks}
    rows = [estimate_notebook(nb.stem, values[nb.stem], [settings.model], settings.simulated, call_model)
            for nb in notebooks]
    timing = call_model.get("simulator_seconds") or {}
    sim = settings.simulated

    def row_line(label: str, counts: Estimate, simulated: list[Estimate], endpoint: list[Estimate],
                 start_up: bool = True) -> str:
        """One row: the counts, the simulator's time of ``simulated``, the endpoint's time and cost of
        ``endpoint`` ('-' where nothing is known or nothing would run there); a model's share has no start-up."""
        line = (f"{label:36} {humanise(counts.episodes):>8} {humanise(counts.calls):>7} "
                f"{humanise(counts.prompt_tokens):>8} {humanise(counts.completion_tokens):>8}")
        if sim:
            known = [e.calls * timing[e.notebook]["per_call"] + start_up * timing[e.notebook]["start_up"]
                     for e in simulated if e.notebook in timing]
            line += f" {format_duration(sum(known)) if known else '-':>9}"
        line += f" {format_duration(sum(e.seconds(prompt_rate, completion_rate) for e in endpoint)) if endpoint else '-':>8}"
        if price:
            line += f" {'$' + format(sum(e.usd(*price) for e in endpoint), ',.2f') if endpoint else '-':>8}"
        return line

    lines = [f"psit run --dry-run: nothing runs. Episodes from each notebook's plan; calls and tokens from the call model "
             f"measured {call_model.get('measured', '?')} on the simulator at commit "
             f"{str(call_model.get('commit', '?'))[:10]} (profile {call_model.get('profile', 'default')}). Backend "
             f"{settings.backend}, model {settings.model} (where a notebook's `models` parameter names none)."
             + (f" The run would write {run_id}: {resumes(run_id, notebooks, fresh)}." if run_id else ""),
             f"{'notebook':36} {'episodes':>8} {'calls':>7} {'prompt':>8} {'compl.':>8}"
             + (f" {'simulator':>9}" if sim else "") + f" {'endpoint':>8}" + (f" {'cost':>8}" if price else "")]
    for r in rows:
        lines.append(row_line(r.notebook, r, [r], [endpoint_part(r)]) + (f"  ({r.note})" if r.note else ""))
        if len(r.by_model) > 1:  # one row per model the notebook's episodes name
            for name, m in r.by_model.items():
                own = settings.model_copy(update={"model": name}).request_settings()
                budget = f"  (max_tokens {own.max_tokens}, PSIT_MODEL_SETTINGS)" if own and own.max_tokens else ""
                lines.append(row_line(f"  {name[:34]}", m, [m], [] if name == SWEEPS else [m], False) + budget)
    lines.append(row_line("total", summed("total", rows), rows, [endpoint_part(r) for r in rows]))
    by_model: dict[str, list[Estimate]] = {}
    for r in rows:
        for name, m in r.by_model.items():
            if name != SWEEPS:
                by_model.setdefault(name, []).append(m)
    if len(by_model) > 1:  # each model's share of the total
        lines += [row_line(f"  {name[:34]}", summed(name, parts), parts, parts, False)
                  for name, parts in by_model.items()]
    if sim:
        lines.append("simulator: its own wall time, each notebook's start-up plus its seconds per call as measured "
                     "with the call model (the default series, one notebook at a time; a smaller run spends more per "
                     "call, so this is a lower bound for it; '-': not measured).")
    lines.append(f"endpoint: a real endpoint at {prompt_rate:,g} prompt and {completion_rate:,g} completion tokens/s in "
                 "all (--prompt-rate, --completion-rate), for the episodes it would run (sweeps are simulator-only); "
                 "completion tokens (compl.) are the simulator's, a lower bound for real models, and so are times.")
    lines.append(f"cost: USD at {price[0]:g} per million prompt and {price[1]:g} per million completion tokens "
                 "(--price), for the endpoint's episodes." if price else
                 "cost: --price IN,OUT (USD per million prompt and completion tokens) adds a cost per model and in all.")
    lines += context_warnings(rows, settings)
    from psit_lib.analysis.verdicts import DEFAULT_MARGIN
    from psit_lib.report.size import report_size_line

    sizing = {stem: cells for stem, v in values.items() if (cells := _paper_cells(stem, v)) is not None}
    lines += margin_sizing_lines(sizing, DEFAULT_MARGIN if margin is None else margin)
    lines.append(report_size_line(values, [settings.model], settings.simulated))  # the report's size (report/size.py)
    return "\n".join(out for line in lines for out in _fitted(line, terminal.width()))


def _fitted(line: str, width: int) -> list[str]:
    """One line of the estimate in the terminal: prose wrapped; a table row as it is, its note below
    it when the row would not fit; an indented row wrapped under its second column."""
    if line[:2].isdigit() and len(line) > width and "  (" in line:  # a notebook's row and its note
        row, note = line.split("  (", 1)
        return [row, *terminal.reflow(f"    ({note}", width)]
    if line[:1] == " " or line[:2].isdigit() or line.startswith(("notebook ", "total ")):
        return terminal.reflow(line, width)
    return textwrap.wrap(line, width, subsequent_indent="  ")  # prose, a warning: its words wrapped under it
