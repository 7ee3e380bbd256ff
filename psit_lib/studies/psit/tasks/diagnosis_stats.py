"""A small descriptive view of DDXPlus for notebook 03 (pure, no model)."""

from __future__ import annotations

import random

import pandas as pd

from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask, answers_yes


def evidence_counts(task: DiagnosisTask) -> pd.DataFrame:
    """Per condition: binary symptom and antecedent evidences it answers yes to."""
    binary = {e.code for e in task.dataset.binary_evidences}
    rows = [{"condition": c.name, "severity": c.severity,
             "binary_symptoms": len(set(c.symptoms) & binary),
             "binary_antecedents": len(set(c.antecedents) & binary)}
            for c in task.dataset.conditions]
    df = pd.DataFrame(rows)
    df["binary_evidences"] = df.binary_symptoms + df.binary_antecedents
    return df.sort_values("binary_evidences", ascending=False, ignore_index=True)


def shrinkage_curve(task: DiagnosisTask, n_games: int, n_questions: int, seed: int = 0) -> pd.DataFrame:
    """Compatible conditions after each question, the seeded player against a truthful host.

    The secret cycles through the conditions so every one is played equally often.
    """
    rows = []
    conditions = task.dataset.conditions
    for game in range(n_games):
        rng = random.Random(seed * 1_000_003 + game)
        secret = conditions[game % len(conditions)]
        state = task.initial_state()
        rows.append({"game": game, "question": 0, "compatible": len(task.compatible_conditions(state))})
        for q in range(1, n_questions + 1):
            if task.is_over(state):
                break
            code, _ = task.next_move(state, rng)
            state = state.with_answer(code, answers_yes(secret, code))
            rows.append({"game": game, "question": q, "compatible": len(task.compatible_conditions(state))})
    return pd.DataFrame(rows)
