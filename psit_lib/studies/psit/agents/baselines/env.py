"""Keep the memory libraries offline: set their switches before any of them is imported.

Every adapter imports this first: no Hugging Face hub lookups, no Mem0/Chroma/LiteLLM telemetry,
Mem0's config out of the home directory; values the user set explicitly are kept.
"""

from __future__ import annotations

import os
import tempfile

OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "MEM0_TELEMETRY": "False",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "TOKENIZERS_PARALLELISM": "false",
}


def apply_offline_environment() -> None:
    """Set every switch in :data:`OFFLINE_ENVIRONMENT` (and ``MEM0_DIR``) unless already set."""
    for name, value in OFFLINE_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "psit-mem0"))


apply_offline_environment()
