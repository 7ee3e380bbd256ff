"""Readings: the sentences under a table, generated from the table itself.

A hand-written sentence about a result ("private CoT leads by a wide margin") goes stale the
moment a parameter, the profile or the endpoint changes, and then contradicts the table above
it. Every statement about a result in a notebook comes from here instead: who leads, by how
much, and whether the intervals overlap, computed from the same frame the table shows.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from psit_lib.analysis.labels import format_number


def overlap(low_a: float, high_a: float, low_b: float, high_b: float) -> bool:
    """Whether two intervals share any point."""
    return not (high_a < low_b or high_b < low_a)


def _name(row: pd.Series, name_cols: Sequence[str]) -> str:
    return " · ".join(str(row[c]) for c in name_cols)


def rate_reading(rates: pd.DataFrame, name_cols: str | Sequence[str], *, measure: str = "rate",
                 rate_col: str = "rate", low_col: str = "wilson_low", high_col: str = "wilson_high") -> str:
    """Markdown: the highest and lowest rows of a rate table with their 95% intervals, and
    whether the leader's interval is clear of the runner-up's and of the lowest row's.

    ``rates`` is one group's table (e.g. one task and model, as made by ``rate_table``); rows
    with no scored episode are ignored.
    """
    cols = [name_cols] if isinstance(name_cols, str) else list(name_cols)
    table = rates.dropna(subset=[rate_col]).sort_values(rate_col, ascending=False, kind="stable")
    if table.empty:
        return "No scored episodes, so there is nothing to read."
    if len(table) == 1:
        row = table.iloc[0]
        return (f"Only {_name(row, cols)} was scored: {measure} {format_number(row[rate_col])} "
                f"[{format_number(row[low_col])}, {format_number(row[high_col])}].")
    top, second, bottom = table.iloc[0], table.iloc[1], table.iloc[-1]
    tied = table[table[rate_col] == top[rate_col]]
    if len(tied) > 1:
        lead = (f"{', '.join(_name(r, cols) for _, r in tied.iterrows())} tie for the highest {measure} "
                f"({format_number(top[rate_col])})")
    else:
        lead = (f"{_name(top, cols)} has the highest {measure}, {format_number(top[rate_col])} "
                f"[{format_number(top[low_col])}, {format_number(top[high_col])}], ahead of {_name(second, cols)} "
                f"by {format_number(top[rate_col] - second[rate_col])}; their 95% intervals "
                + ("overlap, so this run does not separate them"
                   if overlap(top[low_col], top[high_col], second[low_col], second[high_col])
                   else "do not overlap"))
    low = (f"the lowest is {_name(bottom, cols)}, {format_number(bottom[rate_col])} "
           f"[{format_number(bottom[low_col])}, {format_number(bottom[high_col])}]")
    separated = not overlap(top[low_col], top[high_col], bottom[low_col], bottom[high_col])
    spread = ("the highest and lowest intervals do not overlap" if separated
              else "even the highest and lowest intervals overlap, so the run is too small to rank them")
    return f"{lead}; {low}; {spread}."


def grouped_rate_readings(rates: pd.DataFrame, group_cols: Sequence[str], name_cols: str | Sequence[str],
                          **kwargs) -> str:
    """:func:`rate_reading` for each group (e.g. per task and model), as a Markdown list."""
    lines = []
    for key, part in rates.groupby(list(group_cols), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        lines.append(f"- **{' · '.join(map(str, key))}**: {rate_reading(part, name_cols, **kwargs)}")
    return "\n".join(lines) if lines else "No scored episodes, so there is nothing to read."
