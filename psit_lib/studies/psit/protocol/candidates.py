"""Candidates for the yes/no branches at the fork (SPEC §1 step 2).

As in the study's reference code: the revealed secret comes first, then the secret stored in
the agent's private memory at the fork when it differs (``source="stored"``), then secrets
compatible with every public constraint from the task's own data, in the reference's
deterministic order (most frequent words first; conditions by name), or sampled when asked.
Only when the data gives too few is a model asked for more (role ``candidate_generator``);
each proposal is read as a reveal would be (``["yes", "yes", "yes"]`` proposes nothing),
re-checked against the constraints and marked ``source="model"``.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from psit_lib.llm.client import ModelSession
from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.studies.psit.tasks.base import Candidate, PsitTask


_SECRET_TAG = re.compile(r"<secret>\s*(.*?)\s*</secret>", re.I | re.S)


def stored_secret(private_state: str) -> str | None:
    """The secret the agent's private state stores at the fork: the last ``<secret>`` tag in it
    (the convention the memory prompts ask for), or None. The reference code falls back to a
    model reading untagged notes; this harness does not (no hidden extra model call)."""
    found = [m.strip() for m in _SECRET_TAG.findall(private_state or "") if m.strip()]
    return found[-1] if found else None


def candidate_request(task: PsitTask, constraints: dict[str, Any], count: int,
                      exclude: list[str]) -> list[dict[str, str]]:
    payload = json.dumps({"task": task.name, **constraints}, sort_keys=True, default=str)
    text = PROMPTS.render(f"{task.name}.candidates", count=count, constraints=payload, exclude=json.dumps(exclude))
    return [{"role": "user", "content": text}]


def parse_string_array(text: str) -> list[str]:
    """Strings from a JSON array in the reply (tolerates code fences and prose around it)."""
    match = re.search(r"\[.*\]", text or "", re.S)
    if not match:
        return []
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    return [v for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


async def pick_candidates(task: PsitTask, state: Any, revealed: str, n_candidates: int,
                          rng: random.Random | None, session: ModelSession, *,
                          stored: str | None = None) -> tuple[list[Candidate], dict]:
    """``n_candidates`` candidates (revealed first, then the stored secret if it differs) and
    a note of how they were found. ``rng`` None: the reference's deterministic order."""
    chosen = [Candidate(revealed, "revealed")]
    seen = {revealed}
    if stored and stored not in seen and len(chosen) < n_candidates:
        chosen.append(Candidate(stored, "stored"))
        seen.add(stored)
    from_memory = len(chosen) - 1
    for secret in task.compatible_secrets(state, n_candidates + 5, rng):
        key = task.normalise(secret)
        if key not in seen and len(chosen) < n_candidates:
            chosen.append(Candidate(key, "dataset"))
            seen.add(key)
    from_dataset, proposed = len(chosen) - 1 - from_memory, 0
    rejected: list[str] = []
    unreadable: list[dict[str, str]] = []
    missing = n_candidates - len(chosen)
    if missing > 0:
        reply = await session.chat(
            candidate_request(task, task.public_constraints(state), missing + 2, sorted(seen)),
            role="candidate_generator")
        for proposal in parse_string_array(reply.content):
            reading = task.read_reveal(proposal)
            if reading.value is None:  # "yes", a tool call, a runaway: no secret, so no candidate
                unreadable.append({"proposal": proposal[:120], "reason": reading.reason})
                continue
            key = task.normalise(reading.value)
            if key in seen or len(chosen) >= n_candidates:
                continue
            if not task.is_compatible(state, key):
                rejected.append(proposal)
                continue
            chosen.append(Candidate(key, "model"))
            seen.add(key)
            proposed += 1
    note = {"from_dataset": from_dataset, "model_proposed": proposed, "model_rejected": rejected,
            **({"model_unreadable": unreadable} if unreadable else {}),
            "from_memory": from_memory, "short_by": n_candidates - len(chosen)}
    return chosen, note
