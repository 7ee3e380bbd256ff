"""Model layer: settings, the OpenAI-compatible client, the response cache, seeds, tokens."""

from psit_lib.llm.cache import ResponseCache, request_key
from psit_lib.llm.client import (PROFILE_HEADER, ROLE_HEADER, CallStats, LLMClient, ModelSession,
                     SamplingDefaults)
from psit_lib.llm.errors import (CacheMissError, ConfigurationError, FatalRunError, LLMError, ModelCallError,
                     ModelOutputError)
from psit_lib.llm.seeds import derive_seed
from psit_lib.llm.settings import SIM_MODEL_NAME, LLMSettings
from psit_lib.llm.tokens import TOKENIZER_NAME, count_message_tokens, count_tokens
from psit_lib.llm.types import CallRecord, ChatRequest, ChatResult, ToolCall, Usage

__all__ = [
    "CacheMissError", "CallRecord", "CallStats", "ChatRequest", "ChatResult",
    "ConfigurationError", "FatalRunError", "LLMClient", "LLMError", "LLMSettings", "ModelCallError",
    "ModelOutputError", "ModelSession", "PROFILE_HEADER", "ROLE_HEADER", "ResponseCache",
    "SIM_MODEL_NAME", "SamplingDefaults", "TOKENIZER_NAME", "ToolCall", "Usage",
    "count_message_tokens", "count_tokens", "derive_seed", "request_key",
]
