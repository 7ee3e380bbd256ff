"""``psit run`` validates every parameter value with the notebook's parameter model before any
kernel starts; agent and sweep errors name what is allowed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from psit_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bad_value_stops_before_any_kernel_in_one_sentence(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PSIT_RESULTS_DIR": str(tmp_path / "results")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", "02", "-p", "n_episodes=abc"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    elapsed = time.monotonic() - started
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "psit: 02_hangman_fork_tests: parameter 'n_episodes' is invalid: Input should be a valid integer, "
        "unable to parse string as an integer (got 'abc')"]
    assert not (tmp_path / "results").exists()  # no run folder: no kernel started
    assert elapsed < 15, f"validation took {elapsed:.1f} s (the budget is 5 s on an idle machine)"


@pytest.mark.parametrize(("args", "message"), [
    (["02", "-p", "sweep=unheld_secret"],
     "02_hangman_fork_tests: parameter 'sweep' is invalid: 'unheld_secret' is not a sweep of the fork-test study; "
     "choose from host_without_a_secret, pull_of_common_secrets, unprompted_memory_tool_use"),
    (["04", "-p", "sweep_values=[2.0]"], "no selected notebook has parameter(s) sweep_values"),
    (["06", "-p", "sweeps={notices_contradictions: [3]}"],  # 06's sweeps are its study's, never a parameter
     "no selected notebook has parameter(s) sweeps"),
    (["02", "-p", "sweep_knob=nope"], "no selected notebook has parameter(s) sweep_knob"),
    (["05", "-p", "n_turns=0"], "05_acc_judge_evaluation: parameter 'n_turns' is invalid"),
    (["07", "-p", "agent=zz"], "07_secret_distribution_mode_collapse: parameter 'agent' is invalid: unknown agent 'zz'"),
])
def test_bad_values_are_named_per_notebook(args, message, capsys):
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_study_scale_parameters_pass_validation():
    from psit_lib.cli.notebooks import load_params, resolve_notebooks

    params = load_params(str(ROOT / "notebooks" / "params" / "study_scale.yaml"), [], resolve_notebooks([]))
    assert set(params) >= {"02_hangman_fork_tests", "05_acc_judge_evaluation", "06_basis_cab_scenarios"}


def test_unknown_agent_lists_every_agent_the_registry_knows():
    from psit_lib.studies.psit.agents.names import OPTIONAL_AGENTS, known_agents, register_agent_family, validate_agent_names

    with pytest.raises(ValueError) as caught:
        validate_agent_names(["vanilla", "nobody"])
    listed = str(caught.value).split("valid agents: ", 1)[1].split(", ")
    assert {"mem0", "amem", "lightmem", "memoryos"} <= set(listed) and set(OPTIONAL_AGENTS) <= set(listed)
    assert "workflow_patch_replace" in listed and listed == known_agents()
    register_agent_family("toyagent", lambda name, system, role: None)
    try:
        assert "toyagent" in known_agents() and validate_agent_names(["toyagent_x"]) == ["toyagent_x"]
    finally:
        from psit_lib.studies.psit.agents import names

        names._FAMILIES.pop("toyagent")


def test_parameter_models_load_without_the_episode_code():
    code = ("import sys; from psit_lib.studies.registry import params_model; "
            "[params_model(n) for n in ('02_hangman_fork_tests', '04_memory_strategy_ablations', "
            "'07_secret_distribution_mode_collapse', '01_theorem_illustration')]; "
            "heavy = [m for m in ('langgraph', 'pandas', 'openai', 'psit_lib.studies.psit.protocol.experiment') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "[]", out.stderr
