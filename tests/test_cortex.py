"""Mask algebra, registry, episode store and ingest parsing of the BASIS cortex."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from psit_lib.studies.basis.cortex import (
    CONTEXT_TAG,
    CORTEX_WINDOW,
    FALLBACK_SUMMARY_CHARS,
    INGEST_TOOL,
    AgentRegistry,
    CortexInputError,
    Episode,
    EpisodeStore,
    IngestError,
    MaskError,
    fallback_episode,
    format_context_block,
    format_mask,
    parse_ingest_call,
    parse_mask,
    truncate_text,
    visible,
)

widths = st.integers(min_value=1, max_value=40)


@st.composite
def width_and_mask(draw):
    width = draw(widths)
    return width, draw(st.integers(min_value=1, max_value=(1 << width) - 1))


# --------------------------------------------------------------------------- masks


@given(width_and_mask())
def test_format_then_parse_round_trips(wm):
    width, mask = wm
    text = format_mask(mask, width)
    assert len(text) == width
    assert set(text) <= {"0", "1"}
    assert parse_mask(text, width=width) == mask


@pytest.mark.slow
@given(st.text(alphabet="01", min_size=1, max_size=30).filter(lambda s: "1" in s))
def test_parse_then_format_round_trips_up_to_leading_zeros(text):
    width = len(text)
    assert format_mask(parse_mask(text, width=width), width) == text


def test_rightmost_digit_is_agent_zero():
    assert parse_mask("001") == 1
    assert parse_mask("100") == 4
    assert parse_mask("101") == 5
    assert format_mask(5, 4) == "0101"


def test_parse_tolerates_whitespace_and_0b_prefix():
    assert parse_mask("  101\n") == 5
    assert parse_mask("0b110") == 6


@pytest.mark.parametrize("bad", ["", "   ", "0b", "102", "1 01", "abc", "-101", "1.0", "0", "0000"])
def test_parse_rejects_empty_non_binary_and_zero(bad):
    with pytest.raises(MaskError):
        parse_mask(bad)


def test_parse_rejects_non_string():
    with pytest.raises(MaskError, match="binary string"):
        parse_mask(101)  # type: ignore[arg-type]


def test_parse_rejects_bits_beyond_registry_but_allows_leading_zeros():
    assert parse_mask("0011", width=2) == 3
    with pytest.raises(MaskError, match="beyond the 2 registered"):
        parse_mask("100", width=2)


def test_format_rejects_masks_that_do_not_fit_or_are_empty():
    with pytest.raises(MaskError):
        format_mask(8, 3)
    with pytest.raises(MaskError):
        format_mask(0, 3)
    with pytest.raises(MaskError):
        format_mask(True, 3)  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=2**20), st.integers(min_value=0, max_value=2**20))
def test_visible_is_symmetric_and_means_a_shared_bit(a, b):
    assert visible(a, b) == visible(b, a)
    shared = any((a >> i) & 1 and (b >> i) & 1 for i in range(21))
    assert visible(a, b) == shared


@given(width_and_mask())
def test_exactly_the_agents_named_in_a_mask_can_see_it(wm):
    width, mask = wm
    registry = AgentRegistry(f"agent{i}" for i in range(width))
    seeing = [a for a in registry.agent_ids if visible(registry.mask_of(a), mask)]
    assert seeing == registry.agents_in(mask)
    assert len(seeing) == bin(mask).count("1")


# --------------------------------------------------------------------------- registry


def test_registry_hands_out_one_hot_masks_in_order():
    registry = AgentRegistry(["orchestrator", "cab", "cortex"])
    assert [registry.mask_of(a) for a in ("orchestrator", "cab", "cortex")] == [0b1, 0b10, 0b100]
    assert registry.agent_ids == ("orchestrator", "cab", "cortex")
    assert registry.mask_of("cab") == 2
    assert registry.width == 3
    assert registry.agents_in(0b101) == ["orchestrator", "cortex"]
    assert registry.mask_legend().splitlines() == ["orchestrator: 001", "cab: 010", "cortex: 100"]


def test_registry_rejects_duplicates_empty_and_unknown_ids():
    with pytest.raises(ValueError, match="already registered"):
        AgentRegistry(["a", "a"])
    with pytest.raises(ValueError, match="non-empty string"):
        AgentRegistry(["a", "  "])
    with pytest.raises(ValueError, match="not registered"):
        AgentRegistry(["a"]).mask_of("b")


# --------------------------------------------------------------------------- store


def _episode(i: int, source: str, mask: int, summary: str | None = None) -> Episode:
    return Episode(f"ep{i:04d}", source, mask, raw_trace=f"raw step {i} by {source}", summary=summary)


def test_episode_rejects_empty_masks_and_ids():
    with pytest.raises(MaskError):
        Episode("e1", "a", 0, "trace")
    with pytest.raises(MaskError):
        Episode("e1", "a", -3, "trace")
    with pytest.raises(ValueError, match="non-empty episode_id"):
        Episode("", "a", 1, "trace")


def test_store_shows_each_agent_only_what_its_bit_allows():
    store = EpisodeStore()
    store.append(_episode(0, "orch", 0b01))
    store.append(_episode(1, "cab", 0b10))
    store.append(_episode(2, "cab", 0b11))
    assert [e.episode_id for e in store.visible_to(0b01)] == ["ep0000", "ep0002"]
    assert [e.episode_id for e in store.visible_to(0b10)] == ["ep0001", "ep0002"]
    assert store.visible_to(0b100) == []
    assert len(store) == 3
    assert store.next_episode_id() == "ep0003"


def test_store_rejects_duplicate_ids():
    store = EpisodeStore()
    store.append(_episode(0, "a", 1))
    with pytest.raises(ValueError, match="already stored"):
        store.append(_episode(0, "b", 1))


def test_recent_window_is_the_last_n_of_that_agent_oldest_first():
    store = EpisodeStore()
    for i in range(7):
        store.append(_episode(i, "cab" if i % 2 else "orch", 0b11))
    assert CORTEX_WINDOW == 4
    assert [e.episode_id for e in store.recent_by("orch")] == ["ep0000", "ep0002", "ep0004", "ep0006"]
    assert [e.episode_id for e in store.recent_by("cab", 2)] == ["ep0003", "ep0005"]
    assert [e.episode_id for e in store.recent_by("cab", 10)] == ["ep0001", "ep0003", "ep0005"]
    assert store.recent_by("cab", 0) == []
    assert store.recent_by("nobody") == []
    with pytest.raises(ValueError):
        store.recent_by("cab", -1)


# --------------------------------------------------------------------------- context block


def test_context_block_is_empty_when_nothing_is_visible():
    assert format_context_block([]) == ""


def test_context_block_wraps_summaries_with_their_source():
    block = format_context_block(
        [_episode(0, "orch", 1, summary="User wants Downtown -> Airport."), _episode(1, "cab", 1)]
    )
    lines = block.splitlines()
    assert lines[0] == f"<{CONTEXT_TAG}>" == "<relevant_multiagent_context>"
    assert lines[-1] == "</relevant_multiagent_context>"
    assert lines[1] == "[ep0000] from orch: User wants Downtown -> Airport."
    assert lines[2] == "[ep0001] from cab: raw step 1 by cab"  # no summary: raw trace shown


# --------------------------------------------------------------------------- fallback


def test_default_fallback_keeps_the_step_private_to_its_source():
    registry = AgentRegistry(["orch", "cab"])
    trace = "x" * 1000
    ep = fallback_episode("ep0009", "cab", trace, registry, reason="no tool call")
    assert ep.access_mask == registry.mask_of("cab")
    assert visible(registry.mask_of("cab"), ep.access_mask)
    assert not visible(registry.mask_of("orch"), ep.access_mask)
    assert ep.summary is not None and len(ep.summary) == FALLBACK_SUMMARY_CHARS
    assert ep.summary.endswith("…")
    assert ep.metadata["ingest"] == "fallback" and ep.metadata["fallback_reason"] == "no tool call"
    assert ep.raw_trace == trace


@given(st.text(max_size=200), st.integers(min_value=1, max_value=100))
def test_truncate_never_exceeds_the_limit(text, limit):
    out = truncate_text(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text


# --------------------------------------------------------------------------- ingest tool


def test_ingest_tool_schema_matches_the_parser():
    fn = INGEST_TOOL["function"]
    assert INGEST_TOOL["type"] == "function"
    assert fn["name"] == "ingest_episode"
    assert set(fn["parameters"]["properties"]) == {"summary", "access_mask"}
    assert fn["parameters"]["required"] == ["summary", "access_mask"]
    assert all(p["type"] == "string" for p in fn["parameters"]["properties"].values())


def test_parse_ingest_call_reads_summary_and_mask():
    registry = AgentRegistry(["orch", "cab", "cortex"])
    args = json.dumps({"summary": "  Booked nothing yet. ", "access_mask": "011", "extra": 1})
    assert parse_ingest_call(args, registry) == ("Booked nothing yet.", 0b011)


@pytest.mark.parametrize(
    "arguments, error",
    [
        ("not json", IngestError),
        ('["summary", "01"]', IngestError),
        ('{"access_mask": "01"}', IngestError),
        ('{"summary": "  ", "access_mask": "01"}', IngestError),
        ('{"summary": 3, "access_mask": "01"}', IngestError),
        ('{"summary": "s"}', IngestError),
        ('{"summary": "s", "access_mask": 11}', IngestError),
        ('{"summary": "s", "access_mask": "2"}', MaskError),
        ('{"summary": "s", "access_mask": "00"}', MaskError),
        ('{"summary": "s", "access_mask": "100"}', MaskError),
        ('{"summary": "s", "access_mask": ""}', MaskError),
    ],
)
def test_parse_ingest_call_rejects_bad_arguments(arguments, error):
    registry = AgentRegistry(["orch", "cab"])
    with pytest.raises(error):
        parse_ingest_call(arguments, registry)
    with pytest.raises(CortexInputError):  # one type for a caller that falls back on any bad ingest
        parse_ingest_call(arguments, registry)
