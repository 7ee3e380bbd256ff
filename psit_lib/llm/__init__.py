"""Model layer: settings, the OpenAI-compatible client, the response cache, seeds, tokens."""

from .cache import ResponseCache, request_key
from .client import (PROFILE_HEADER, ROLE_HEADER, CallStats, LLMClient, ModelSession,
                     SamplingDefaults)
from .errors import (CacheMissError, ConfigurationError, FatalRunError, LLMError, ModelCallError,
                     ModelOutputError)
from .seeds import derive_seed
from .settings import SIM_MODEL_NAME, LLMSettings
from .tokens import TOKENIZER_NAME, count_message_tokens, count_tokens
from .types import CallRecord, ChatRequest, ChatResult, ToolCall, Usage

__all__ = [
    "CacheMissError", "CallRecord", "CallStats", "ChatRequest", "ChatResult",
    "ConfigurationError", "FatalRunError", "LLMClient", "LLMError", "LLMSettings", "ModelCallError",
    "ModelOutputError", "ModelSession", "PROFILE_HEADER", "ROLE_HEADER", "ResponseCache",
    "SIM_MODEL_NAME", "SamplingDefaults", "TOKENIZER_NAME", "ToolCall", "Usage",
    "count_message_tokens", "count_tokens", "derive_seed", "request_key",
]
