"""Agent Cognitive Compressor study (SPEC §5): CCS, artifact store, agents, live judge, metrics."""

from .agents import AGENT_NAMES, AccAgent, AgentTurn, RetrievalAgent, TranscriptReplayAgent, make_agents
from .ccs import CCS, ArtifactRef, CCSValidationError, FocalEntity, Relation, empty_ccs, parse_ccs, render_ccs
from .experiment import AccParams, make_specs, run_acc_episode, scenario_seed
from .judge import CanonicalMemory, JudgeOutputError, LiveJudge, TurnJudgement
from .scenarios import DOMAINS, Scenario, ScenarioTurn, build_scenario
from .store import ArtifactStore, qualify

__all__ = [
    "AGENT_NAMES", "AccAgent", "AccParams", "AgentTurn", "ArtifactRef", "ArtifactStore", "CCS",
    "CCSValidationError", "CanonicalMemory", "DOMAINS", "FocalEntity", "JudgeOutputError",
    "LiveJudge", "Relation", "RetrievalAgent", "Scenario", "ScenarioTurn", "TranscriptReplayAgent",
    "TurnJudgement", "build_scenario", "empty_ccs", "make_agents", "make_specs", "parse_ccs",
    "qualify", "render_ccs", "run_acc_episode", "scenario_seed",
]
