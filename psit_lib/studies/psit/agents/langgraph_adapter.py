"""A researcher's own compiled LangGraph graph as an agent of the fork test.

    from psit_lib.studies.psit.agents.langgraph_adapter import graph_family
    from psit_lib.studies.psit.agents.names import register_agent_family

    register_agent_family("mine", graph_family(my_graph, private_key="scratchpad"))

The graph's state keeps the conversation under ``messages_key`` with a reducer that appends
(LangGraph's ``MessagesState`` and its ``add_messages``, or ``operator.add``); its messages may be
LangChain messages or ``{"role", "content"}`` dicts. Each turn, the player's message is sent as one
user message on the episode's thread; the turn's reply is the last assistant message. The public
dialogue the fork test scores is the user messages and the assistant messages that call no tool.
``private_key`` names the state key that holds the agent's private state (text, or anything JSON
shows), recorded after every turn and at the fork; without one the agent keeps none.

The nodes make their model calls through the runtime context they are given (:class:`HostContext`:
``await runtime.context.chat(messages)``), so every call goes through the run's client: seeded,
cached, counted, and answered by the simulator offline. The graph runs with the episode's
checkpointer bound to it (whatever it was compiled with), one checkpoint per turn; the fork
branches are runs from the pre-fork checkpoint's id.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from psit_lib.llm.client import ModelSession
from psit_lib.llm.tokens import count_tokens
from psit_lib.llm.types import ChatResult
from psit_lib.studies.psit.agents.graph_agent import AgentStateError, GraphAgent
from psit_lib.studies.psit.agents.names import AgentBuilder

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph


@dataclass(frozen=True)
class HostContext:
    """The runtime context of every turn: the branch's model session, the host's system prompt (the
    fork test's), the role to label the host's calls with, and the agent's name."""

    session: ModelSession
    system_prompt: str
    host_role: str
    agent: str

    async def chat(self, messages: Sequence[Any], *, private: str = "", **options: Any) -> ChatResult:
        """The host's model call: the fork test's system prompt (with ``private`` after it, e.g. a
        private block only the model reads), then ``messages``; ``options`` go to ``session.chat``."""
        system = "\n\n".join(part for part in (self.system_prompt, private) if part)
        return await self.session.chat([{"role": "system", "content": system}, *openai_messages(messages)],
                                       role=self.host_role, **options)


def openai_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Messages as the OpenAI wire has them, from LangChain messages or dicts."""
    if all(isinstance(m, dict) for m in messages):
        return [dict(m) for m in messages]
    from langchain_core.messages import convert_to_openai_messages

    return list(convert_to_openai_messages(list(messages)))


def _role_text_tools(message: Any) -> tuple[str, str, bool]:
    """A message's role (user / assistant / other), its text and whether it calls tools."""
    if isinstance(message, dict):
        role, content, tools = message.get("role"), message.get("content"), bool(message.get("tool_calls"))
    else:
        role, content = getattr(message, "type", None), getattr(message, "content", None)
        tools = bool(getattr(message, "tool_calls", None))
    role = {"human": "user", "ai": "assistant"}.get(str(role), str(role))
    if isinstance(content, list):  # content blocks: their text
        content = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return role, content if isinstance(content, str) else "", tools


def graph_family(graph: CompiledStateGraph, *, messages_key: str = "messages",
                 private_key: str | None = None) -> AgentBuilder:
    """A builder for :func:`~psit_lib.studies.psit.agents.names.register_agent_family` that makes
    ``graph`` (compiled, with a messages state) an agent; the keys are checked now, one sentence each."""
    channels = getattr(graph, "channels", None)
    if not isinstance(channels, dict) or not hasattr(graph, "astream"):
        raise AgentStateError(f"graph_family needs a compiled LangGraph graph (StateGraph(...).compile()), "
                              f"not {type(graph).__name__}")
    from langgraph.channels.binop import BinaryOperatorAggregate

    if messages_key not in channels:
        raise AgentStateError(f"the graph's state has no {messages_key!r} key for the conversation; name it "
                              "with messages_key= (its keys: " + ", ".join(sorted(k for k in channels
                                                                                  if not k.startswith("__"))) + ")")
    if not isinstance(channels[messages_key], BinaryOperatorAggregate):
        raise AgentStateError(f"the graph's {messages_key!r} key must append messages (a reducer such as "
                              "add_messages, as in MessagesState), or each turn would replace the conversation")
    if private_key is not None and private_key not in channels:
        raise AgentStateError(f"the graph's state has no {private_key!r} key for the private state named by "
                              "private_key=")

    def build(name: str, system_prompt: str, host_role: str) -> LangGraphAgent:
        return LangGraphAgent(graph, name=name, system_prompt=system_prompt, host_role=host_role,
                              messages_key=messages_key, private_key=private_key)

    return build


class LangGraphAgent(GraphAgent):
    """A researcher's graph on the episode's thread, seen by the fork test through :meth:`view`."""

    def __init__(self, graph: CompiledStateGraph, *, name: str, system_prompt: str, host_role: str,
                 messages_key: str, private_key: str | None) -> None:
        super().__init__(graph, name=name)
        self.system_prompt = system_prompt
        self.host_role = host_role
        self.messages_key = messages_key
        self.private_key = private_key

    def turn_input(self, text: str) -> dict[str, Any]:
        return {self.messages_key: [{"role": "user", "content": text}]}

    def context(self, session: ModelSession) -> HostContext:
        return HostContext(session=session, system_prompt=self.system_prompt, host_role=self.host_role,
                           agent=self.name)

    def private_state(self, values: dict[str, Any]) -> str:
        if self.private_key is None:
            return ""
        value = values.get(self.private_key)
        if value is None or isinstance(value, str):
            return value or ""
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)

    def view(self, values: dict[str, Any]) -> dict[str, Any]:
        """The fork test's view of the graph's state: ``public``, ``reply``; one sentence naming the
        key when the state lacks what the fork test reads."""
        messages = values.get(self.messages_key)
        if not isinstance(messages, list):
            raise AgentStateError(f"{self.name}'s graph state holds no list of messages under {self.messages_key!r} "
                                  f"after a turn (found {type(messages).__name__})")
        if self.private_key is not None and self.private_key not in values:
            raise AgentStateError(f"{self.name}'s graph state has no {self.private_key!r} key after a turn, so its "
                                  "private state cannot be recorded; set it in the graph's first node")
        public = []
        for message in messages:
            role, text, tools = _role_text_tools(message)
            if role == "user" or (role == "assistant" and not tools):
                public.append({"role": role, "content": text})
        if not public or public[-1]["role"] != "assistant":
            raise AgentStateError(f"{self.name}'s graph ended a turn without an assistant message under "
                                  f"{self.messages_key!r}, so the turn has no reply")
        return {**values, "public": public, "reply": public[-1]["content"]}

    async def state(self, checkpoint_id: str | None = None) -> dict[str, Any]:
        """The state at a checkpoint, with a ``turn_log`` read from LangGraph's history of the thread:
        each turn's checkpoint back to the first, and the private state it held."""
        values = await super().state(checkpoint_id)
        privates: list[str] = []
        config: Any = self.run_config(checkpoint_id or self.head)
        while config is not None:
            snapshot = await self.graph.aget_state(config)
            privates.append(self.private_state(dict(snapshot.values)))
            config = snapshot.parent_config
        log = [{"turn": turn, "private_state_tokens": count_tokens(text), "private_state": text}
               for turn, text in enumerate(reversed(privates), 1)]
        return {**values, "turn_log": log}
