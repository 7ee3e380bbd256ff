"""Errors of the model layer: each carries one sentence a researcher can act on."""

from __future__ import annotations


class LLMError(RuntimeError):
    """Base class for every failure of the model layer."""

    def _render_traceback_(self) -> list[str]:  # IPython hook: one sentence, no traceback wall
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


class FatalRunError(LLMError):
    """An error that no episode can recover from: the run stops instead of recording it."""


class ConfigurationError(FatalRunError):
    """The environment describes a backend that cannot be used (bad value, missing URL)."""


class ModelCallError(LLMError):
    """A model call failed after the last retry (or with an error that is not worth retrying)."""


class CacheMissError(FatalRunError):
    """Replay-only mode met a request that is not in the response cache."""


class ModelOutputError(LLMError):
    """A model reply could not be used (malformed tool-call arguments, missing content, ...)."""
