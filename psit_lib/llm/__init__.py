"""Model layer: settings, the OpenAI-compatible client, the response cache, seeds, tokens."""

from psit_lib.llm.cache import ResponseCache
from psit_lib.llm.client import LLMClient, ModelSession
from psit_lib.llm.errors import CacheMissError, ConfigurationError, ModelCallError
from psit_lib.llm.seeds import derive_seed
from psit_lib.llm.settings import LLMSettings
from psit_lib.llm.types import ChatRequest, ChatResult, ToolCall

__all__ = ["CacheMissError", "ChatRequest", "ChatResult", "ConfigurationError", "LLMClient", "LLMSettings",
           "ModelCallError", "ModelSession", "ResponseCache", "ToolCall", "derive_seed"]
