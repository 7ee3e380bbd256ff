"""Candidates for the yes/no branches at the fork (SPEC §1 step 2).

As in the study's reference code: the secret stored in the agent's private memory comes first
(``source="stored"``), then the revealed secret, then secrets compatible with every public constraint
from the task's own data, in the reference's deterministic order (most frequent words first;
conditions in the dataset's order, or by name when more fit than are needed), or sampled when asked.
A secret already listed is skipped by the reference's rule
(:func:`~psit_lib.studies.psit.protocol.reference_reading.same_candidate`), so two names of one
condition ("Heart attack" and "Possible NSTEMI / STEMI") are two candidates, as there. A stored
secret that contains the reveal or is contained in it is the reveal, asked once in the host's words
(the reference asks the shorter of two Hangman words; a registered difference). Only when the data
gives too few is a model asked for more (role ``candidate_generator``); each proposal is read as a
reveal would be (``["yes", "yes", "yes"]`` proposes nothing), re-checked against the constraints and
marked ``source="model"``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from psit_lib.llm.client import ModelSession
from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.studies.psit.protocol.reference_reading import same_as_reveal, same_candidate
from psit_lib.studies.psit.tasks.base import Candidate, PsitTask


_SECRET_TAG = re.compile(r"<\s*secret\s*>(.*?)<\s*/\s*secret\s*>", re.I | re.S)


def stored_secret(private_states: str | Sequence[str]) -> str | None:
    """The secret the agent's private states store at the fork, as the reference reads them: the last
    ``<secret>`` tag of the latest state (oldest first) that has one, or None. The reference code falls
    back to a model reading untagged notes; this harness does not (no hidden extra model call)."""
    states = [private_states] if isinstance(private_states, str) else list(private_states)
    for state in reversed(states):
        found = [m.strip() for m in _SECRET_TAG.findall(state or "") if m.strip()]
        if found:
            return found[-1]
    return None


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


def _repeats(task: PsitTask, listed: list[Candidate], text: str) -> bool:
    """Whether ``text`` repeats a listed candidate by the reference's rule for the task (another task:
    the same secret once normalised)."""
    if task.name in ("hangman", "diagnosis"):
        return any(same_candidate(task.name, c.text, text) for c in listed)
    key = task.normalise(text)
    return any(c.secret == key for c in listed)


def _one_secret(task: PsitTask, revealed: str, stored: str) -> bool:
    """Whether the stored secret is the reveal (the reference's containment rule; another task: the
    same secret once normalised)."""
    if task.name in ("hangman", "diagnosis"):
        return same_as_reveal(task.name, revealed, stored)
    return task.normalise(revealed) == task.normalise(stored)


async def pick_candidates(task: PsitTask, state: Any, revealed: str | None, n_candidates: int,
                          rng: random.Random | None, session: ModelSession, *,
                          stored: str | None = None) -> tuple[list[Candidate], dict]:
    """``n_candidates`` candidates (the stored secret unless it is the reveal, the reveal as the host
    wrote it, then the task's compatible secrets and, if still short, the model's) and a note of how
    they were found. ``revealed`` None: the reveal could not be read, and the branches still ask about
    the others, as the reference does. ``rng`` None: the reference's deterministic order."""
    chosen: list[Candidate] = []

    def add(text: str, source: str) -> None:
        chosen.append(Candidate(task.normalise(text), source, text))

    if stored and not (revealed and _one_secret(task, revealed, stored)):
        add(stored, "stored")
    if revealed:
        add(revealed, "revealed")
    from_memory = sum(c.source == "stored" for c in chosen)
    for secret in task.compatible_secrets(state, n_candidates, rng):
        if len(chosen) < n_candidates and not _repeats(task, chosen, secret):
            add(secret, "dataset")
    from_dataset = sum(c.source == "dataset" for c in chosen)
    proposed = 0
    rejected: list[str] = []
    unreadable: list[dict[str, str]] = []
    missing = n_candidates - len(chosen)
    if missing > 0:
        reply = await session.chat(
            candidate_request(task, task.public_constraints(state), missing + 2, sorted(c.text for c in chosen)),
            role="candidate_generator")
        for proposal in parse_string_array(reply.content):
            reading = task.read_reveal(proposal)
            if reading.value is None:  # "yes", a tool call, a runaway: no secret, so no candidate
                unreadable.append({"proposal": proposal[:120], "reason": reading.reason})
                continue
            text = reading.value.strip()
            if _repeats(task, chosen, text) or len(chosen) >= n_candidates:
                continue
            if not task.is_compatible(state, task.normalise(text)):
                rejected.append(proposal)
                continue
            add(text, "model")
            proposed += 1
    note = {"from_dataset": from_dataset, "model_proposed": proposed, "model_rejected": rejected,
            **({"model_unreadable": unreadable} if unreadable else {}),
            "from_memory": from_memory, "short_by": n_candidates - len(chosen)}
    return chosen, note
