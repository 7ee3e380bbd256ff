"""Running experiments: the episode runner, the resumable results store, run metadata."""

from psit_lib.runs.backend import make_client
from psit_lib.runs.experiment import Experiment, figures_dir, results_root
from psit_lib.runs.health import assess_health, beside_rates, health_table
from psit_lib.runs.runner import EpisodeSpec, StudyEpisode, describe_error, run_episodes, study_episode
from psit_lib.runs.store import ParameterMismatchError, RunStore

__all__ = ["EpisodeSpec", "Experiment", "ParameterMismatchError", "RunStore", "StudyEpisode", "assess_health",
           "beside_rates", "describe_error", "health_table",
           "figures_dir", "make_client", "results_root", "run_episodes", "study_episode"]
