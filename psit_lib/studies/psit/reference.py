"""Numbers reported by the private-state study (SPEC §7), for labelled comparison rows only.

They are never used as results: tables show them beside measured rows, with
``source = "reference study"`` and the reference model's name.
"""

from __future__ import annotations

import pandas as pd

REFERENCE_MODELS = ("GPT-OSS 20B", "GPT-OSS 120B", "Qwen3 32B", "Qwen3 235B")

# Self-consistency (%) per (task, agent): one value per REFERENCE_MODELS entry.
SELF_CONSISTENCY_PCT: dict[tuple[str, str], tuple[int, int, int, int]] = {
    ("hangman", "vanilla"): (2, 12, 4, 12),
    ("hangman", "private_cot"): (94, 82, 94, 98),
    ("hangman", "workflow_overwrite"): (76, 98, 92, 100),
    ("hangman", "autonomous_overwrite"): (50, 72, 12, 78),
    ("diagnosis", "vanilla"): (2, 26, 12, 14),
    ("diagnosis", "private_cot"): (66, 54, 16, 82),
    ("diagnosis", "workflow_overwrite"): (70, 96, 18, 56),
    ("diagnosis", "autonomous_overwrite"): (46, 50, 14, 26),
}

MODE_COLLAPSE_ATTRACTORS = {("hangman", "GPT-OSS 120B"): "planet", ("hangman", "GPT-OSS 20B"): "python",
                            ("diagnosis", "reference models"): "Sarcoidosis"}



def self_consistency_reference(task: str, agents: list[str] | None = None) -> pd.DataFrame:
    """Reference rows (task, agent, model, rate, source) for the agents that have them."""
    rows = []
    for (ref_task, agent), values in SELF_CONSISTENCY_PCT.items():
        if ref_task != task or (agents is not None and agent not in agents):
            continue
        for model, pct in zip(REFERENCE_MODELS, values):
            rows.append({"task": task, "agent": agent, "model": model, "rate": pct / 100,
                         "source": "reference study (reported)"})
    return pd.DataFrame(rows, columns=["task", "agent", "model", "rate", "source"])
