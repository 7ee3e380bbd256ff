"""Running experiments: the episode runner, the run folder and its resumable records, run metadata."""

from psit_lib.runs.backend import make_client
from psit_lib.runs.experiment import Experiment
from psit_lib.runs.folder import ParameterMismatchError, RunFolder, RunMetadata, RunParams, RunStore
from psit_lib.runs.health import assess_health, beside_rates, health_table
from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, describe_error, run_episodes, study_episode
from psit_lib.runs.paths import figures_dir, results_root

__all__ = ["EpisodeSpec", "Experiment", "ParameterMismatchError", "RunFolder", "RunMetadata", "RunParams", "RunStore",
           "StudyEpisode", "assess_health",
           "beside_rates", "describe_error", "health_table",
           "figures_dir", "make_client", "results_root", "run_episodes", "study_episode"]
