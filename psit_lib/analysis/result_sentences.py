"""Result sentences ("readings"): the sentences under a table, generated from the table itself.

A hand-written sentence about a result goes stale the moment a parameter, the profile or the
endpoint changes, and then contradicts the table above it; these are computed from its frame.

Three rules keep a reading from saying more than its table:

* **Direction.** "Better" and "worse" follow the direction the table's metric declares
  (``higher_is_better``, passed as ``direction``); with ``direction=None`` rows are only higher or lower.
* **Separation is a test of the gap.** Two rows are "separated" only when the 95% interval of
  their *difference* excludes zero: Newcombe's hybrid-score interval for two proportions
  (:func:`psit_lib.analysis.sweeps.proportion_gap`), the percentile bootstrap of the gap for
  means (:func:`psit_lib.analysis.sweeps.mean_gap`). Whether the two rows' own Wilson intervals
  overlap decides nothing (they can overlap while the gap is clear of zero).
* **Ties and small runs are said.** Equal values are a tie; rows the test cannot separate are
  "cannot be told apart" and are never put in an order; "the worst is X" needs X uniquely worst
  and separated from the next row; an empty or one-row table says so in a sentence.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, Literal, Sequence

import pandas as pd

from psit_lib.analysis.labels import format_number
from psit_lib.analysis.stats import as_columns
from psit_lib.analysis.sweeps import proportion_gap

Direction = Literal["higher", "lower"]
GapTest = Callable[[pd.Series, pd.Series], tuple[float, float, float, "bool | None"]]
"""(gap, low, high, separated) of the higher-valued row minus the lower one; separated None: untestable."""

#: The count and trial columns a rate table may carry, in the order they are looked for, and
#: what one trial is called in a sentence.
COUNT_COLUMNS = (("successes", "n_scored", "scored episodes"), ("failures", "opportunities", "opportunities"))


def gap_separates(low: float, high: float) -> bool | None:
    """Whether a gap's interval excludes zero; None when there is no interval (NaN)."""
    if low is None or high is None or _nan(low) or _nan(high):
        return None
    return bool(low > 0 or high < 0)


def _nan(value: Any) -> bool:
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def _name(row: pd.Series, name_cols: Sequence[str]) -> str:
    return " · ".join(str(row[c]) for c in name_cols)


def _names(rows: pd.DataFrame, name_cols: Sequence[str]) -> str:
    return ", ".join(_name(r, name_cols) for _, r in rows.iterrows())


def _interval(row: pd.Series, low_col: str, high_col: str) -> str:
    if low_col not in row.index or high_col not in row.index:
        return ""
    return f" [{format_number(float(row[low_col]))}, {format_number(float(row[high_col]))}]"


def _count_columns(rates: pd.DataFrame, count_col: str | None, n_col: str | None) -> tuple[str | None, str | None, str]:
    if count_col is not None and n_col is not None:
        return count_col, n_col, "trials"
    for count, n, unit in COUNT_COLUMNS:
        if count in rates.columns and n in rates.columns:
            return count, n, unit
    return None, None, "scored rows"


def _tester(count_col: str | None, n_col: str | None, rate_col: str) -> GapTest:
    """Newcombe's interval of the gap between two rows of a rate table (from their counts) as (gap, low, high,
    separated), oriented higher minus lower so it reads as a positive gap; separated is None without counts."""

    def test(a: pd.Series, b: pd.Series) -> tuple[float, float, float, bool | None]:
        if float(a[rate_col]) < float(b[rate_col]):
            a, b = b, a
        if count_col is None or n_col is None:
            return float(a[rate_col]) - float(b[rate_col]), float("nan"), float("nan"), None
        gap, low, high = proportion_gap(int(a[count_col]), int(a[n_col]), int(b[count_col]), int(b[n_col]))
        return gap, low, high, gap_separates(low, high)

    return test


def _group_test(test: GapTest, row: pd.Series, group: pd.DataFrame) -> tuple[float, float, float, bool | None]:
    """The gap between ``row`` and a group of rows tied at one value: each member is tested, the
    group is separated only when every member is, and the least separated member's interval is
    the one reported (members tied in rate may differ in n)."""
    results = [test(row, member) for _, member in group.iterrows()]
    if any(r[3] is None for r in results):
        return results[0][0], float("nan"), float("nan"), None
    weakest = min(results, key=lambda r: r[1])
    return weakest[0], weakest[1], weakest[2], all(bool(r[3]) for r in results)


def _group_label(group: pd.DataFrame, cols: Sequence[str], value: str) -> str:
    """One row's name, or every name of a tie with the value they share (never one of them alone)."""
    if len(group) == 1:
        return _name(group.iloc[0], cols)
    return f"{_names(group, cols)} (tied at {value})"


def _gap_text(gap: float, low: float, high: float, separated: bool | None, interval: str = "Newcombe",
              untested: str = "this table has no counts") -> str:
    """"the gap, 0.1, has Newcombe 95% interval [-0.29, 0.45], which includes zero"."""
    if separated is None:
        return f"the gap, {format_number(gap)}, cannot be tested ({untested}), so this reading does not separate them"
    where = "excludes" if separated else "includes"
    return (f"the gap, {format_number(gap)}, has {interval} 95% interval [{format_number(low)}, "
            f"{format_number(high)}], which {where} zero")


def rate_reading(rates: pd.DataFrame, name_cols: str | Sequence[str], *, measure: str = "rate",
                 rate_col: str = "rate", low_col: str = "wilson_low", high_col: str = "wilson_high",
                 count_col: str | None = None, n_col: str | None = None, unit: str | None = None,
                 direction: Direction | None = "higher", test: GapTest | None = None,
                 interval: str = "Newcombe", untested: str = "this table has no counts") -> str:
    """Markdown: the best and worst rows of one group's rate table (e.g. one task and model) with their 95% intervals,
    and whether each gap separates them: Newcombe's interval from the count columns (``successes``/``n_scored``,
    ``failures``/``opportunities`` or ``count_col``/``n_col``), or a table of means' own ``test`` (named by
    ``interval``; ``untested`` says why it cannot test a gap); rows with no rate are named and left out."""
    cols = as_columns(name_cols)
    count_col, n_col, default_unit = _count_columns(rates, count_col, n_col)
    unit = unit or default_unit
    if rates.empty:
        return f"No {unit} in this run, so there is no {measure} to read."
    table = rates.dropna(subset=[rate_col])
    if table.empty:
        return f"None of {_names(rates, cols)} had any {unit} to score, so there is no {measure} to read."
    empty_note = ""
    if len(table) < len(rates):
        missing = rates.loc[rates.index.difference(table.index)]
        empty_note = f" ({_names(missing, cols)} had no {unit} to score)"
    if len(table) == 1:
        row = table.iloc[0]
        return (f"Only {_name(row, cols)} was scored: {measure} {format_number(float(row[rate_col]))}"
                f"{_interval(row, low_col, high_col)}; there is nothing to compare it with{empty_note}.")

    best_first = table.sort_values(rate_col, ascending=direction == "lower", kind="stable")
    values = best_first[rate_col].astype(float)
    best_pos, worst_pos = ("lowest", "highest") if direction == "lower" else ("highest", "lowest")
    if values.nunique() == 1:
        return (f"{_names(best_first, cols)} tie at {measure} {format_number(float(values.iloc[0]))}: "
                f"nothing to rank{empty_note}.")
    test = test or _tester(count_col, n_col, rate_col)
    gap_text = partial(_gap_text, interval=interval, untested=untested)
    value = lambda row: format_number(float(row[rate_col]))  # noqa: E731
    top, second, bottom = best_first.iloc[0], best_first.iloc[1], best_first.iloc[-1]
    tested: set[frozenset] = set()
    tied_top = best_first[values == values.iloc[0]]
    if len(tied_top) > 1:
        lead = f"{_names(tied_top, cols)} tie for the {best_pos} {measure} ({value(top)})"
    else:
        second_group = best_first[values == values.iloc[1]]
        gap, low, high, separated = _group_test(test, top, second_group)
        tested.add(frozenset((float(top[rate_col]), float(second[rate_col]))))
        runner_up = _group_label(second_group, cols, str(value(second)))
        if separated:
            word = "better than" if direction else ("above" if best_pos == "highest" else "below")
            lead = (f"{_name(top, cols)} has the {best_pos} {measure}, {value(top)}{_interval(top, low_col, high_col)}, "
                    f"{word} {runner_up} by {format_number(gap)}; the {interval} 95% interval of the "
                    f"gap, [{format_number(low)}, {format_number(high)}], excludes zero")
        else:
            runner_up = runner_up if len(second_group) > 1 else f"{runner_up}'s {value(second)}"
            lead = (f"The {best_pos} {measure}, {_name(top, cols)}'s {value(top)}{_interval(top, low_col, high_col)}, "
                    f"cannot be told apart from {runner_up}: "
                    + gap_text(gap, low, high, separated))
    parts = [lead]
    if len(best_first) > 2:
        tied_bottom = best_first[values == values.iloc[-1]]
        if len(tied_bottom) > 1:
            parts.append(f"{_names(tied_bottom, cols)} tie for the {worst_pos} {measure} ({value(bottom)})")
        else:
            penult = best_first.iloc[-2]
            penult_group = best_first[values == values.iloc[-2]]
            gap, low, high, separated = _group_test(test, bottom, penult_group)
            tested.add(frozenset((float(bottom[rate_col]), float(penult[rate_col]))))
            above = _group_label(penult_group, cols, str(value(penult)))
            if separated:
                worst = f"the worst is {_name(bottom, cols)}, {worst_pos} " if direction else \
                    f"the {worst_pos} is {_name(bottom, cols)}, "
                parts.append(f"{worst}{measure} {value(bottom)}{_interval(bottom, low_col, high_col)}, separated "
                             f"from {above} (the gap, {format_number(gap)}, has {interval} 95% interval "
                             f"[{format_number(low)}, {format_number(high)}])")
            else:
                above = above if len(penult_group) > 1 else f"{above}'s {value(penult)}"
                parts.append(f"the {worst_pos} {measure}, {_name(bottom, cols)}'s {value(bottom)}, cannot be told "
                             f"apart from {above} ({gap_text(gap, low, high, separated)})")
        gap, low, high, separated = test(top, bottom)
        if frozenset((float(top[rate_col]), float(bottom[rate_col]))) in tested:
            pass  # the same two values were just tested
        elif separated:
            parts.append(f"the {best_pos} and {worst_pos} rows are separated (the gap, {format_number(gap)}, has "
                         f"{interval} 95% interval [{format_number(low)}, {format_number(high)}])")
        elif separated is False:
            parts.append(f"even the {best_pos} and {worst_pos} rows cannot be told apart "
                         f"({gap_text(gap, low, high, separated)}), so the run is too small to rank them")
        else:
            parts.append(f"{untested} to test any gap, so nothing is ranked")
        if separated is False and "too small to rank" not in parts[-1]:
            parts.append("the run is too small to rank them")  # best vs worst: the pair tested above
    return "; ".join(parts) + f"{empty_note}."


def grouped_rate_readings(rates: pd.DataFrame, group_cols: Sequence[str], name_cols: str | Sequence[str],
                          **kwargs) -> str:
    """:func:`rate_reading` for each group (e.g. per task and model), as a Markdown list."""
    lines = []
    if not rates.empty and all(c in rates.columns for c in group_cols):
        for key, part in rates.groupby(list(group_cols), sort=False):
            key = key if isinstance(key, tuple) else (key,)
            lines.append(f"- **{' · '.join(map(str, key))}**: {rate_reading(part, name_cols, **kwargs)}")
    if lines:
        return "\n".join(lines)
    measure = kwargs.get("measure", "rate")
    return f"No scored rows in this run, so there is no {measure} to read."


def one_sentence(points: str) -> str:
    """A generated Markdown list (one point per group) as one sentence for the report's index:
    the points joined by semicolons, list marks, bold and their closing full stops dropped."""
    lines = [" ".join(line.strip().removeprefix("- ").replace("**", "").split()).rstrip(".")
             for line in points.splitlines() if line.strip()]
    return "; ".join(line for line in lines if line) + "."


def _few(rows: pd.DataFrame, cols: Sequence[str]) -> str:
    """Up to two names, the rest counted ("a, b and 2 more tied"): a headline stays one short sentence."""
    names = [_name(r, cols) for _, r in rows.iterrows()]
    if len(names) == 1:
        return names[0]
    return (" and ".join(names) if len(names) == 2 else f"{', '.join(names[:2])} and {len(names) - 2} more") + " tied"


def rate_headline(rates: pd.DataFrame, group_cols: Sequence[str], name_cols: str | Sequence[str], *,
                  measure: str = "rate", rate_col: str = "rate", count_col: str | None = None,
                  n_col: str | None = None, direction: Direction | None = "higher", test: GapTest | None = None,
                  interval: str = "Newcombe", untested: str = "no counts") -> str:
    """One sentence for the report's index over a rate table: per group, the best and the worst
    rows and whether the interval of their gap excludes zero (the page has the full
    :func:`grouped_rate_readings`; ``test``, ``interval`` and ``untested`` as there)."""
    cols = as_columns(name_cols)
    count_col, n_col, _ = _count_columns(rates, count_col, n_col)
    test = test or _tester(count_col, n_col, rate_col)
    best_pos, worst_pos = ("lowest", "highest") if direction == "lower" else ("highest", "lowest")
    groups = rates.groupby(list(group_cols), sort=False) if len(rates) and group_cols else [((), rates)]
    parts = []
    for key, part in groups:
        where = " · ".join(map(str, key if isinstance(key, tuple) else (key,)))
        table = part.dropna(subset=[rate_col]).sort_values(rate_col, ascending=direction == "lower", kind="stable")
        values = table[rate_col].astype(float)
        if values.nunique() < 2:
            verb = " tie at" if len(table) > 1 else " at"
            said = (f"{_names(table, cols)}{verb} {measure} {format_number(float(values.iloc[0]))}" if len(table)
                    else f"no {measure} scored")
            parts.append(f"{where}: {said}" if where else said)
            continue
        top, bottom = table[values == values.iloc[0]], table[values == values.iloc[-1]]
        tests = [test(a, b) for _, a in top.iterrows() for _, b in bottom.iterrows()]
        gap, low, high, separated = min(tests, key=lambda r: (r[3] is not None, r[1]))
        verdict = (f"untested ({untested})" if separated is None else
                   f"{'separated' if separated else 'not separated'} ({interval} 95% interval of the gap "
                   f"[{format_number(low)}, {format_number(high)}])")
        said = (f"{_few(top, cols)} {best_pos} ({format_number(float(values.iloc[0]))}), {_few(bottom, cols)} "
                f"{worst_pos} ({format_number(float(values.iloc[-1]))}), {verdict}")
        parts.append(f"{where}: {said}" if where else said)
    return "; ".join(parts) + "." if parts else f"No {measure} in this run."
