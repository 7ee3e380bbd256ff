"""Agent Cognitive Compressor study (SPEC §5): CCS, artifact store, agents, live judge, metrics."""

from psit_lib.studies.acc.agents import AGENT_NAMES, AccAgent, AgentTurn, RetrievalAgent, TranscriptReplayAgent, make_agents
from psit_lib.studies.acc.ccs import CCS, ArtifactRef, CCSValidationError, FocalEntity, Relation, empty_ccs, parse_ccs, render_ccs
from psit_lib.studies.acc.experiment import AccParams, make_specs, run_acc_episode, scenario_seed
from psit_lib.studies.acc.judge import CanonicalMemory, JudgeOutputError, LiveJudge, TurnJudgement
from psit_lib.studies.acc.scenarios import DOMAINS, Scenario, ScenarioTurn, build_scenario
from psit_lib.studies.acc.store import ArtifactStore, qualify

__all__ = [
    "AGENT_NAMES", "AccAgent", "AccParams", "AgentTurn", "ArtifactRef", "ArtifactStore", "CCS",
    "CCSValidationError", "CanonicalMemory", "DOMAINS", "FocalEntity", "JudgeOutputError",
    "LiveJudge", "Relation", "RetrievalAgent", "Scenario", "ScenarioTurn", "TranscriptReplayAgent",
    "TurnJudgement", "build_scenario", "empty_ccs", "make_agents", "make_specs", "parse_ccs",
    "qualify", "render_ccs", "run_acc_episode", "scenario_seed",
]
