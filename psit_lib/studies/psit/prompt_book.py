"""The study's prompt templates, read once from ``prompts.toml`` beside this module
(``psit_lib.llm.prompts``). Code renders them by name: ``PROMPTS.render("hangman.confirm", secret=...)``."""

from __future__ import annotations

from psit_lib.llm.prompts import load_prompts

PROMPTS = load_prompts(__package__ or "psit_lib.studies.psit")
