"""The three compared agents of the ACC study (SPEC §5), with one per-turn interface.

They differ *only* in what they put into the model's context: the replayed transcript, the top-k
stored turns most similar to the query, or the ACC's one Compressed Cognitive State. A CCS that
fails validation is recorded on the turn and the previous one stays in force (never passed as
valid). Plain async classes rather than LangGraph graphs: each turn is a fixed pipeline.
"""

from __future__ import annotations

from typing import Any

from psit_lib.llm.diagnostics import report_helper_read
from psit_lib.llm.tokens import count_message_tokens, count_tokens

from psit_lib.studies.acc.catalogue import PROMPTS
from psit_lib.studies.acc.records import AgentAnswer
from psit_lib.studies.acc.ccs import CCS, CCSValidationError, empty_ccs, parse_ccs, render_ccs
from psit_lib.studies.acc.store import ArtifactStore, qualify

DEFAULT_RETRIEVAL_KS: tuple[int, ...] = (5,)
"""One retrieval agent, top-5, as the paper's three-agent comparison (SPEC §5: k=5 default,
3 also studied); ``retrieval_ks`` adds a retrieval agent per further k."""


def agent_rank(name: str) -> tuple[int, int]:
    """Sort key of an agent name in the answering order (retrieval agents by k)."""
    if name == "transcript":
        return (0, 0)
    if name.startswith("retrieval_k") and name[len("retrieval_k"):].isdigit():
        return (1, int(name[len("retrieval_k"):]))
    return (2, 0) if name == "acc" else (3, 0)


class TranscriptReplayAgent:
    """Replays the full transcript every turn."""

    name = "transcript"

    def __init__(self, session: Any) -> None:
        self.session = session
        self.history: list[dict[str, str]] = []

    async def respond(self, turn: int, query: str) -> AgentAnswer:
        footprint = count_message_tokens(self.history) if self.history else 0
        messages = [{"role": "system", "content": PROMPTS.render("acc.agent_system")}, *self.history,
                    {"role": "user", "content": query}]
        result = await self.session.chat(messages, role="acc_agent")
        self.history += [{"role": "user", "content": query},
                         {"role": "assistant", "content": result.content}]
        return AgentAnswer(answer=result.content, footprint_tokens=footprint,
                           details={"replayed_messages": len(messages) - 2})


def _artifact_text(query: str, answer: str) -> str:
    return f"User: {query}\nAssistant: {answer}"


def _notes_block(title: str, artifacts: list) -> str:
    lines = [title]
    for a in artifacts:
        lines.append(f"[{a.artifact_id}] turn {a.turn}, {a.source}:\n{a.text}")
    return "\n".join(lines)


class RetrievalAgent:
    """Answers from its top-k stored turns most similar to the new query."""

    def __init__(self, session: Any, *, k: int = 5) -> None:
        self.session = session
        self.k = k
        self.name = f"retrieval_k{k}"
        self.store = ArtifactStore()

    async def respond(self, turn: int, query: str) -> AgentAnswer:
        recalled = self.store.recall(query, self.k)
        block = (_notes_block("Notes retrieved from earlier turns (most relevant first):",
                              [r.artifact for r in recalled]) if recalled else "")
        system = PROMPTS.render("acc.agent_system") + ("\n\n" + block if block else "")
        result = await self.session.chat([{"role": "system", "content": system},
                                          {"role": "user", "content": query}], role="acc_agent")
        self.store.add(f"t{turn}", turn, _artifact_text(query, result.content), "stored turn")
        return AgentAnswer(answer=result.content, footprint_tokens=count_tokens(block),
                           details={"retrieved": [r.artifact.artifact_id for r in recalled]})


def compressor_message(previous: CCS, qualified: list, turn: int, query: str) -> str:
    """The compressor's user message: previous CCS, qualified artifacts, new input (in that order)."""
    artifacts = (_notes_block("", qualified).strip() if qualified else "(none)")
    return (f"Previous CCS:\n{previous.to_json()}\n\nQualified artifacts:\n{artifacts}\n\n"
            f"New input (turn {turn}):\n{query}")


class AccAgent:
    """Agent Cognitive Compressor: one CCS, replaced every turn, plus a gated artifact store."""

    name = "acc"

    def __init__(self, session: Any, *, recall_limit: int = 8, max_qualified: int = 3,
                 min_score: float = 0.1) -> None:
        self.session = session
        self.recall_limit = recall_limit
        self.max_qualified = max_qualified
        self.min_score = min_score
        self.store = ArtifactStore()
        self.state: CCS = empty_ccs()

    async def respond(self, turn: int, query: str) -> AgentAnswer:
        previous_text = render_ccs(self.state)
        recalled = self.store.recall(f"{query}\n{previous_text}", self.recall_limit)
        decisions = qualify(recalled, query, previous_text, min_score=self.min_score,
                            max_qualified=self.max_qualified)
        qualified = [d.recalled.artifact for d in decisions if d.qualified]
        reply = await self.session.chat(
            [{"role": "system", "content": PROMPTS.render("acc.compressor_system")},
             {"role": "user", "content": compressor_message(self.state, qualified, turn, query)}],
            role="acc_compressor", response_format={"type": "json_object"})
        try:
            self.state = parse_ccs(reply.content)
            ccs_error = None
        except CCSValidationError as exc:  # recorded on the turn; the previous CCS stays in force
            ccs_error = str(exc)
        report_helper_read(self.session, "acc_compressor", reply.content, ccs_error, agent=self.name)
        rendered = render_ccs(self.state)
        system = PROMPTS.render("acc.agent_system") + "\n\nCompressed cognitive state:\n" + (rendered or "(empty)")
        result = await self.session.chat([{"role": "system", "content": system},
                                          {"role": "user", "content": query}], role="acc_agent")
        self.store.add(f"t{turn}", turn, _artifact_text(query, result.content), "stored turn")
        return AgentAnswer(answer=result.content, footprint_tokens=count_tokens(rendered), details={
            "ccs_valid": ccs_error is None,
            "ccs_error": ccs_error,
            "ccs": self.state.model_dump(),
            "ccs_json_tokens": count_tokens(self.state.to_json()),
            "recalled": [d.recalled.artifact.artifact_id for d in decisions],
            "qualified": [a.artifact_id for a in qualified],
            "gate": {d.recalled.artifact.artifact_id: d.reason for d in decisions},
        })


def make_agents(session: Any, *, ks: tuple[int, ...] = DEFAULT_RETRIEVAL_KS, recall_limit: int = 8, max_qualified: int = 3,
                min_score: float = 0.1) -> list[TranscriptReplayAgent | RetrievalAgent | AccAgent]:
    """The agents in the fixed answering order (replay, retrieval per k, ACC), each on its own
    session branch."""
    return [TranscriptReplayAgent(session.branch("transcript")),
            *(RetrievalAgent(session.branch(f"retrieval_k{k}"), k=k) for k in ks),
            AccAgent(session.branch("acc"), recall_limit=recall_limit,
                     max_qualified=max_qualified, min_score=min_score)]

