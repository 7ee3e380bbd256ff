"""Your own LangGraph agent in the fork test: a two-node graph with a private scratchpad.

    export PSIT_PLUGINS=docs/examples/scratchpad_agent.py
    .venv/bin/psit run 02 -p 'agents=["vanilla","scratchpad"]'

``answer`` replies to the player with the scratchpad in a private block of its system prompt;
``note`` then keeps the reasoning behind that reply in the scratchpad, so the word the host chose
on the first turn is still there at the fork. The conversation is LangGraph's ``MessagesState``; the
scratchpad is the private state the fork test records (``private_key``). The model is called
through the turn's runtime context (``HostContext.chat``), so the run's client makes every call.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime

from psit_lib.studies.psit.agents.langgraph_adapter import HostContext, graph_family
from psit_lib.studies.psit.agents.names import register_agent_family


class ScratchpadState(MessagesState):
    scratchpad: str  # private: the model reads it, the player never does
    thought: str     # this turn's reasoning, from answer to note


async def answer(state: ScratchpadState, runtime: Runtime[HostContext]) -> dict[str, Any]:
    notes = state.get("scratchpad", "")
    private = f"Your private notes from earlier turns:\n<private_memory>\n{notes}\n</private_memory>" if notes else ""
    result = await runtime.context.chat(state["messages"], private=private)
    return {"messages": [{"role": "assistant", "content": result.content}], "thought": result.reasoning or ""}


async def note(state: ScratchpadState) -> dict[str, Any]:
    kept = "\n".join(part for part in (state.get("scratchpad", ""), state.get("thought", "").strip()) if part)
    return {"scratchpad": kept, "thought": ""}


builder = StateGraph(ScratchpadState, context_schema=HostContext)
builder.add_node("answer", answer)
builder.add_node("note", note)
builder.add_edge(START, "answer")
builder.add_edge("answer", "note")
builder.add_edge("note", END)
graph = builder.compile()

register_agent_family("scratchpad", graph_family(graph, private_key="scratchpad"))
