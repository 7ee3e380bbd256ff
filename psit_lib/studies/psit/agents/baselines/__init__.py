"""Retrieval-memory baselines (SPEC §2) as fork-test agents: Mem0, A-Mem, LightMem, MemoryOS.

Each baseline stores only the public dialogue and injects what it retrieves into the system
prompt; none of them can hold a secret the model never wrote publicly. Importing this package
is cheap: it only registers the agent names with the factory. The heavy optional packages
(torch, sentence-transformers, mem0ai, memoryos-pro, faiss) load when an agent is built, and
a missing one raises :class:`BaselineUnavailableError` naming what to install.
"""

from __future__ import annotations

import importlib
from typing import Any

from psit_lib.studies.psit.agents.config import UnknownAgentError
from psit_lib.studies.psit.agents.names import register_agent_family

from psit_lib.studies.psit.agents.baselines.embedder import BaselineUnavailableError

RETRIEVAL_BASELINES = ("mem0", "amem", "lightmem", "memoryos")
"""The four retrieval-memory baselines built by this package (the significance tests' baselines are
``protocol.experiment.SIGNIFICANCE_BASELINES``: these and ``vanilla``)."""
_BACKENDS = {"mem0": ("mem0_adapter", "Mem0Backend"), "amem": ("amem_adapter", "AMemBackend"),
             "lightmem": ("lightmem_adapter", "LightMemBackend"),
             "memoryos": ("memoryos_adapter", "MemoryOSBackend")}


def make_backend(name: str, **kwargs: Any):
    """The memory backend of baseline ``name`` (reference settings unless overridden)."""
    if name not in _BACKENDS:
        raise UnknownAgentError(f"unknown retrieval baseline {name!r}; choose one of {', '.join(RETRIEVAL_BASELINES)}")
    module_name, class_name = _BACKENDS[name]
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except BaselineUnavailableError:
        raise
    except ImportError as exc:
        raise BaselineUnavailableError(
            f"the {name} baseline cannot load its optional packages ({exc}); install them with the "
            "project's install script") from exc
    return getattr(module, class_name)(**kwargs)


def build_baseline_agent(name: str, system_prompt: str, host_role: str, **kwargs: Any):
    """A fork-test agent for baseline ``name`` (the factory's builder)."""
    from psit_lib.studies.psit.agents.baselines.base import BaselineAgent

    return BaselineAgent(make_backend(name, **kwargs), name=name, system_prompt=system_prompt,
                         host_role=host_role)


for _name in RETRIEVAL_BASELINES:
    register_agent_family(_name, build_baseline_agent)

__all__ = ["RETRIEVAL_BASELINES", "BaselineUnavailableError", "build_baseline_agent", "make_backend"]
