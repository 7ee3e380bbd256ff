"""Running experiments: the episode runner, the resumable results store, run metadata."""

from psit_lib.runs.backend import make_client
from psit_lib.runs.experiment import Experiment, figures_dir, results_root
from psit_lib.runs.runner import EpisodeSpec, describe_error, run_episodes
from psit_lib.runs.store import ParameterMismatchError, RunStore

__all__ = ["EpisodeSpec", "Experiment", "ParameterMismatchError", "RunStore", "describe_error",
           "figures_dir", "make_client", "results_root", "run_episodes"]
