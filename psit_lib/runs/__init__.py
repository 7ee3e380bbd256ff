"""Running experiments: the episode runner, the run folder and its records, run metadata; names load
lazily, so the command line validates parameters (``runs.params``) without the model client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.runs.backend import make_client
    from psit_lib.runs.experiment import Experiment
    from psit_lib.runs.folder import ParameterMismatchError, RunFolder, RunStore
    from psit_lib.runs.health import beside_rates
    from psit_lib.runs.runner import EpisodeSpec, run_episodes

_NAMES: dict[str, str] = {
    "make_client": "psit_lib.runs.backend", "Experiment": "psit_lib.runs.experiment",
    **{n: "psit_lib.runs.folder" for n in ("ParameterMismatchError", "RunFolder", "RunStore")},
    "beside_rates": "psit_lib.runs.health",
    **{n: "psit_lib.runs.runner" for n in ("EpisodeSpec", "run_episodes")},
}

__all__ = ["EpisodeSpec", "Experiment", "ParameterMismatchError", "RunFolder", "RunStore", "beside_rates",
           "make_client", "run_episodes"]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, namespace=globals())
