"""Where notebook 06 departs from the BASIS study and its reference code (one entry each)."""

from __future__ import annotations

from psit_lib.analysis.differences import Difference

NB = ("06",)

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        point="Models",
        study="Real models for the orchestrator, the app subagents and the CortexAgent.",
        here="The simulated model by default; any OpenAI-compatible endpoint by configuration.",
        why="No model weights and no network offline.",
        effect="Default numbers follow the simulator's assumptions (shown and swept under 'What decides "
               "this result'); the study's Table 1 appears only as labelled reference columns.",
        notebooks=NB),
    Difference(
        point="Agent framework",
        study="ARE's agent loop, with one app subagent per app exposed to the orchestrator as a tool.",
        here="LangGraph graphs for the orchestrator and its subagents around ARE's own CabApp "
             "(its tools called directly); the orchestrator delegates with one tool per subagent.",
        why="The same graph style as the rest of the workbench; bounded loops with recorded limits.",
        effect="Prompts and step limits are ours; the information flow (cortex or not) is the study's.",
        notebooks=NB),
    Difference(
        point="Number of agents and masks",
        study="An orchestrator plus one subagent per app of the environment, each with its own mask bit.",
        here="Three agents: the orchestrator, the cab subagent and a notification agent that sends the "
             "user a written confirmation once the cab work is settled (a send_message_to_user tool that "
             "records the message); the simulated CortexAgent writes the mask it infers for each step "
             "(the agent that took it and the agent it worked with or for).",
        why="The study's cab scenarios have one app, hence two agents, and with two agents every step "
            "concerns both; a third agent makes the masks decide who sees a step.",
        effect="Success is still judged on the CabApp alone. The orchestrator checks the cab agent only "
               "before notifying, so the extra agent gives it no extra chance to correct; its one extra "
               "step raises the default orchestrator step limit from 4 to 5.",
        notebooks=NB),
    Difference(
        point="pass^k and pass@k",
        study="Its code runs, for every k, independent sets of k fresh runs (10 sets) and reports the "
              "share of sets whose runs all (pass^k) or any (pass@k) succeed.",
        here="Both: the unbiased estimators over the main n trials, and the reference design with "
             "reference_sets independent sets per k (study: 10).",
        why="The reference design is what the study's Table 1 reports; the unbiased estimators use every "
            "trial and are monotone in k.",
        effect="The two columns can differ, and the reference column is not monotone in k.",
        notebooks=NB),
    Difference(
        point="Scale of the reference design",
        study="10 sets of k runs for each k in 1, 2, 5, 10 per scenario and system (180 runs).",
        here="reference_sets = 2 by default (36 runs per cell); notebooks/params/study_scale.yaml sets 10.",
        why="The default run must stay within minutes.",
        effect="The reference-design column is coarse (steps of one half) at default size.",
        notebooks=NB),
    Difference(
        point="Gaia2-mini",
        study="Also evaluates on the Gaia2-mini benchmark of ARE (many apps, many agents).",
        here="Not run: the Gaia2 scenarios are a dataset that is not shipped and cannot be fetched offline.",
        why="Offline machine; the dataset is not in data/.",
        effect="Only the three CabApp scenarios are reproduced. A user with the ARE Gaia2 data and an "
               "endpoint can run the study's own evals/run_gaia2_mini_a2a_multi_agent.py.",
        notebooks=NB),
)
