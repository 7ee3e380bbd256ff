"""Running experiments: the episode runner, the run folder and its resumable records, run metadata.

Names load lazily (PEP 562), so a light module of this package (``runs.params``) is imported
without the model client, pandas or the runner (the command line validates parameters with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.runs.backend import make_client
    from psit_lib.runs.experiment import Experiment
    from psit_lib.runs.folder import ParameterMismatchError, RunFolder, RunMetadata, RunParams, RunStore
    from psit_lib.runs.health import assess_health, beside_rates, health_table
    from psit_lib.runs.paths import figures_dir, results_root
    from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, describe_error, run_episodes, study_episode
    from psit_lib.runs.scores import Metric, Score, ScoreContext, Scored, Scorer, metric, scorer
    from psit_lib.runs.study import Part, Study, StudyNotebook, StudyRun

_NAMES: dict[str, str] = {
    "make_client": "psit_lib.runs.backend", "Experiment": "psit_lib.runs.experiment",
    **{n: "psit_lib.runs.folder" for n in ("ParameterMismatchError", "RunFolder", "RunMetadata", "RunParams",
                                           "RunStore")},
    **{n: "psit_lib.runs.health" for n in ("assess_health", "beside_rates", "health_table")},
    **{n: "psit_lib.runs.paths" for n in ("figures_dir", "results_root")},
    **{n: "psit_lib.runs.runner" for n in ("EpisodeSpec", "StudyEpisode", "describe_error", "run_episodes",
                                           "study_episode")},
    **{n: "psit_lib.runs.scores" for n in ("Metric", "Score", "ScoreContext", "Scored", "Scorer", "metric", "scorer")},
    **{n: "psit_lib.runs.study" for n in ("Part", "Study", "StudyNotebook", "StudyRun")},
}

__all__ = ["EpisodeSpec", "Experiment", "Metric", "ParameterMismatchError", "Part", "RunFolder", "RunMetadata",
           "RunParams", "RunStore", "Score", "ScoreContext", "Scored", "Scorer",
           "Study", "StudyEpisode", "StudyNotebook", "StudyRun", "assess_health", "metric", "scorer",
           "beside_rates", "describe_error", "health_table",
           "figures_dir", "make_client", "results_root", "run_episodes", "study_episode"]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, namespace=globals())
