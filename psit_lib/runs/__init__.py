"""Running experiments: the episode runner, the resumable results store, run metadata."""

from .experiment import Experiment, figures_dir, results_root
from .runner import EpisodeSpec, describe_error, run_episodes
from .store import ParameterMismatchError, RunStore

__all__ = ["EpisodeSpec", "Experiment", "ParameterMismatchError", "RunStore", "describe_error",
           "figures_dir", "results_root", "run_episodes"]
