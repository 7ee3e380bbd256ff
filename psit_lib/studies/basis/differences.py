"""Where notebook 06 departs from the BASIS study and its reference code (one entry each)."""

from __future__ import annotations

from psit_lib.analysis.differences import Difference

NB = ("06",)

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        point="Models",
        study="Real models for the orchestrator, the app subagents and the CortexAgent; the reference code records "
              "the agents' model nowhere (its scripts take it as a --model argument; the CortexAgent runs "
              "gemini-2.0-flash).",
        here="The simulated model by default; any OpenAI-compatible endpoint by configuration. Since the paper's model "
             "is not recorded, a run is the paper's model only when PSIT_PAPER_MODELS names it (served-name=BASIS).",
        why="No model weights and no network offline; a verdict against the paper needs the paper's model (SPEC §9).",
        effect="Default numbers follow the simulator's assumptions (shown and swept under 'What decides "
               "this result'); the study's Table 1 appears only as labelled reference columns, and every claim and "
               "Table 1 cell of a run that is not named the paper's model illustrates the protocol (no verdict).",
        notebooks=NB),
    Difference(
        point="Agent framework",
        study="ARE's agent loop, with one app subagent per app exposed to the orchestrator as a tool.",
        here="The orchestrator and each delegation to a subagent are LangGraph graphs (one node per step, "
             "bounded by LangGraph's recursion limit at the step limits) around ARE's own CabApp (its tools "
             "called directly); the orchestrator delegates with one tool per subagent.",
        why="One agent framework for the whole workbook (the private-state study's agents are LangGraph graphs): "
            "one checkpointer and one loop bound for every agent; of ARE, a trial needs only the CabApp.",
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
        point="Prompts",
        study="ARE's app-agent ReAct/JSON system prompt for the cab subagent with the confounder policy "
              "appended; a long orchestrator prompt; the scenarios' user requests.",
        here="Every element of the reference scenarios' user requests and confounder policies, in this "
             "project's words (prompts.toml, basis.request.* and basis.policy.*), after a short subagent prompt "
             "of ours; tools are called by native function calling, not ARE's JSON action format.",
        why="The house rule: prompts in our own words, keeping every instruction of the study's.",
        effect="On a real model the wording may move the rates by an amount not measured here; on the simulator "
               "only the policies' and requests' content acts (it reads what they ask).",
        notebooks=NB),
    Difference(
        point="Success (event log)",
        study="Each scenario's validate() reads ARE's event log of agent tool calls (function name and "
              "arguments, compared as exact strings, whatever the call returned).",
        here="The same rules on the record of every call that reached the CabApp, in order, failed ones "
             "included; a call to an unknown tool or with non-object arguments is recorded but can match nothing.",
        why="The workbench runs the CabApp without ARE's environment and event log.",
        effect="None on the verdicts: every call ARE would log as an agent event is in the record, in the same order.",
        notebooks=NB),
    Difference(
        point="Final-state view",
        study="Not reported: success is the event-log verdict only.",
        here="A second, labelled table judges the same main trials on the app's final state (the rides that "
             "stand at the end; a successful list_rides for premium_bias).",
        why="A user cares about the rides that stand; the two verdicts differ exactly where a correct booking was "
            "later cancelled, or a wrong call failed.",
        effect="Where they differ, the final-state rate is lower after a cancelled correct booking (premium_bias, "
               "stale_locations) and higher after a refused order (quote_only_vs_book); the headline uses the "
               "reference verdict.",
        notebooks=NB),
    Difference(
        point="Crashed runs",
        study="A run with no validation decision counts as a failure in the Success column and in pass^k/pass@k.",
        here="In the set-based pass^k/pass@k a crashed run is a failure, as in the reference; in every success rate it "
             "is kept out of the rate and counted in n_failed.",
        why="A crash (endpoint or harness error) says nothing about the system; house rule: a failed episode is "
            "never scored.",
        effect="None when no trial crashes (the default run has none); otherwise the success rates here are higher "
               "than the reference's rule would give, by the crashed share at most.",
        notebooks=NB),
    Difference(
        point="pass^k and pass@k",
        study="Its code runs, for every k, independent sets of k fresh runs (10 sets) and reports the share of "
              "sets whose runs all (pass^k) or any (pass@k) succeed; Figure 4 draws them in two rows per scenario.",
        here="The same set-based design drawn as Figure 4, with the unbiased estimators C(c,k)/C(n,k) and "
             "1 - C(n-c,k)/C(n,k) over n main trials per cell beside it (and the paper's values, labelled).",
        why="The set-based values are what the study reports; the unbiased estimators use every main trial "
            "and are monotone in k.",
        effect="The two estimates can differ, and the set-based one is not monotone in k; the main trials "
               "(n_trials per cell) are runs the study did not make.",
        notebooks=NB),
    Difference(
        point="Scale of the reference design",
        study="10 sets of k runs for each k in 1, 2, 5, 10 per scenario and system: 180 runs per cell, pooled "
              "into its Success column.",
        here="reference_sets = 2 by default (36 runs per cell); notebooks/params/study_scale.yaml sets 10 (180).",
        why="The default run must stay within minutes.",
        effect="At default size the set-based pass^k/pass@k move in steps of one half and the pooled success "
               "has Wilson intervals about 2.2 times as wide as at study scale.",
        notebooks=NB),
    Difference(
        point="Headline gain",
        study="Calls its stale_locations gain \"the highest relative improvement ... at a 54.4% increase\"; "
              "numerically 54.4% is the absolute gap 0.744 - 0.200 (relative to the baseline the same rates are "
              "+272%): the number is absolute, the sentence says relative.",
        here="Both, labelled: the absolute gain, BASIS - baseline of the pooled success rate, with the paper's +54.4 "
             "points beside it, and the relative gain (BASIS - baseline) / baseline beside both, with the Newcombe "
             "95% interval of the gap deciding higher or lower; the claim itself (the ledger's BASIS-2) is tested "
             "relative, on risk ratios, as the sentence words it.",
        why="A number beside the paper's must use the rule that gives the paper's number; a claim is tested as the "
            "paper words it (SPEC §9).",
        effect="None on the rates. On the paper's own counts the absolute test left BASIS-2 undecided (+0.54 vs "
               "+0.52); the relative one decides it (risk ratio 3.72 vs 2.49, z 2.14).",
        notebooks=NB),
    Difference(
        point="Simulated report of the booked service",
        study="Real models: whether the orchestrator relays the user's request to report the booked service "
              "type and price, and what it makes of the answer, are the models' own.",
        here="On the simulator the orchestrator relays that request with the explicit-detail weight, the cab agent "
             "then names the service type it booked, and the orchestrator reads a Premium booking there as "
             "evidence (without the route, which the reply never states).",
        why="Information-flow faithful: the reply is in the baseline orchestrator's request, so it may use it.",
        effect="The baseline can correct a Premium booking in premium_bias without the cortex, which raises its "
               "premium_bias success on the simulator; stale_locations and quote_only_vs_book are not affected.",
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
