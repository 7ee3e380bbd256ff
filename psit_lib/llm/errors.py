"""Errors of the model layer: each carries one sentence a researcher can act on."""

from __future__ import annotations


class LLMError(RuntimeError):
    """Base class for every failure of the model layer."""


class ConfigurationError(LLMError):
    """The environment describes a backend that cannot be used (bad value, missing URL)."""


class ModelCallError(LLMError):
    """A model call failed after the last retry (or with an error that is not worth retrying)."""


class CacheMissError(LLMError):
    """Replay-only mode met a request that is not in the response cache."""


class ModelOutputError(LLMError):
    """A model reply could not be used (malformed tool-call arguments, missing content, ...)."""
