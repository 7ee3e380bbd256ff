"""One hand-written test per rule of SPEC §2 (memory document) and §3 (memory tools)."""

from __future__ import annotations

import json

import pytest

from psit_lib.studies.psit.memory.matching import ToolResult
from psit_lib.studies.psit.memory.patch import patch_memory
from psit_lib.studies.psit.memory.replace import replace_in_memory
from psit_lib.studies.psit.memory.tool_schemas import TOOL_ARGUMENTS, STRATEGIES, UnknownStrategyError, tool_schemas
from psit_lib.studies.psit.memory.tools import append_in_memory, apply_tool_call, delete_from_memory, overwrite_memory
from psit_lib.studies.psit.memory.working_memory import (SECTION_TITLES, MemoryToolError, extract_secret, find_section,
                                                          initial_memory, parse_sections, wrap_for_prompt)

META_KEYS = {"applied_hunks", "changed_lines", "sections_touched", "warnings"}

MEMORY = """## 1. Goals and Plans
- Host hangman fairly.

## 2. Facts and Knowledge
<secret>planet</secret>
- Word length: 6

## 3. Active Notes
- Guessed letters: e, a
- Pattern: _ _ a _ e _
- Lives left: 5
"""


def patch_text(*body: str) -> str:
    return "\n".join(["*** Begin Patch", "*** Update Memory", *body, "*** End Patch"])


def headers(memory: str) -> list[str]:
    return [section.header for section in parse_sections(memory)]


# --- the memory document (SPEC §2) -------------------------------------------------------


def test_initial_memory_has_three_numbered_sections_in_order():
    memory = initial_memory()
    assert headers(memory) == ["## 1. Goals and Plans", "## 2. Facts and Knowledge", "## 3. Active Notes"]
    assert SECTION_TITLES == ("Goals and Plans", "Facts and Knowledge", "Active Notes")
    assert extract_secret(memory) is None


def test_initial_memory_stores_secret_in_facts_section():
    memory = initial_memory("planet")
    assert "<secret>planet</secret>" in find_section(memory, "Facts and Knowledge").body
    assert extract_secret(memory) == "planet"


def test_extract_secret_takes_last_tag_and_ignores_empty_tags():
    assert extract_secret("<secret>a</secret>\n<secret> b </secret>") == "b"
    assert extract_secret("<secret>  </secret>") is None
    assert extract_secret("no tag here") is None


def test_parse_sections_reports_titles_numbers_and_line_spans():
    sections = parse_sections(MEMORY)
    assert [(s.number, s.title) for s in sections] == list(enumerate(SECTION_TITLES, start=1))
    lines = MEMORY.split("\n")
    for section in sections:
        assert lines[section.start] == section.header
        assert tuple(lines[section.start + 1 : section.end]) == section.body


def test_find_section_ignores_number_and_case_and_names_available_sections():
    assert find_section(MEMORY, "active NOTES").title == "Active Notes"
    assert find_section(MEMORY, "## 2. facts and knowledge").number == 2
    with pytest.raises(MemoryToolError, match="Goals and Plans.*Facts and Knowledge.*Active Notes"):
        find_section(MEMORY, "Scratchpad")


def test_wrap_for_prompt_uses_working_memory_tags():
    wrapped = wrap_for_prompt(MEMORY)
    assert wrapped.startswith("<working_memory>\n## 1. Goals and Plans")
    assert wrapped.endswith("- Lives left: 5\n</working_memory>")


# --- overwrite ----------------------------------------------------------------------------


def test_overwrite_replaces_everything_and_reports_meta():
    new = initial_memory("comet")
    result = overwrite_memory(MEMORY, new)
    assert isinstance(result, ToolResult)
    assert result.new_memory == new
    assert set(result.meta) == META_KEYS
    assert result.meta["applied_hunks"] == 1
    assert result.meta["changed_lines"] > 0
    assert "Facts and Knowledge" in result.meta["sections_touched"]


def test_overwrite_with_identical_text_is_a_no_op():
    result = overwrite_memory(MEMORY, MEMORY)
    assert result.new_memory == MEMORY
    assert result.meta["applied_hunks"] == 0 and result.meta["changed_lines"] == 0


def test_overwrite_warns_when_secret_is_dropped():
    result = overwrite_memory(MEMORY, "just notes")
    assert result.new_memory == "just notes"
    assert any("secret" in warning for warning in result.meta["warnings"])


# --- append -------------------------------------------------------------------------------


def test_append_adds_lines_at_end_of_section_before_separator():
    result = append_in_memory(MEMORY, "Goals and Plans", ["- Keep the word private.", "- Never reveal it."])
    assert result.new_memory.startswith(
        "## 1. Goals and Plans\n- Host hangman fairly.\n- Keep the word private.\n- Never reveal it.\n\n## 2."
    )
    assert result.meta == {
        "applied_hunks": 1,
        "changed_lines": 2,
        "sections_touched": ["Goals and Plans"],
        "warnings": [],
    }


def test_append_accepts_one_string_with_newlines():
    from_string = append_in_memory(MEMORY, "Active Notes", "- Guessed t\n- Guessed o")
    from_list = append_in_memory(MEMORY, "Active Notes", ["- Guessed t", "- Guessed o"])
    assert from_string.new_memory == from_list.new_memory
    assert from_string.new_memory.endswith("- Lives left: 5\n- Guessed t\n- Guessed o\n")


def test_append_refuses_section_headers_and_empty_input():
    with pytest.raises(MemoryToolError, match="header"):
        append_in_memory(MEMORY, "Active Notes", ["## 4. Extra Section"])
    with pytest.raises(MemoryToolError, match="no non-blank"):
        append_in_memory(MEMORY, "Active Notes", ["", "   "])
    with pytest.raises(MemoryToolError, match="No section"):
        append_in_memory(MEMORY, "Nowhere", ["x"])


# --- delete -------------------------------------------------------------------------------


def test_delete_removes_matching_line_and_reports_meta():
    result = delete_from_memory(MEMORY, "Active Notes", ["- Lives left: 5"])
    assert "Lives left" not in result.new_memory
    assert result.new_memory.endswith("- Pattern: _ _ a _ e _\n")
    assert result.meta["changed_lines"] == 1
    assert result.meta["sections_touched"] == ["Active Notes"]


def test_delete_short_target_must_equal_a_whole_line():
    memory = append_in_memory(MEMORY, "Active Notes", ["- e", "- apple"]).new_memory
    # "e" is shorter than 8 characters: it removes only the line that is exactly "e".
    result = delete_from_memory(memory, "Active Notes", ["e"])
    assert "- e\n" not in result.new_memory and "Guessed letters: e, a" in result.new_memory
    # "appl" is a substring of "- apple" but too short to match as a substring.
    with pytest.raises(MemoryToolError, match="appl"):
        delete_from_memory(memory, "Active Notes", ["appl"])


def test_delete_long_target_may_match_as_substring():
    result = delete_from_memory(MEMORY, "Active Notes", ["guessed letters"])
    assert "Guessed letters" not in result.new_memory
    assert "Pattern" in result.new_memory


def test_delete_forgives_whitespace_case_and_bullets():
    memory = append_in_memory(MEMORY, "Active Notes", ["1. Player seems to like vowels", "• Tone: friendly"]).new_memory
    result = delete_from_memory(
        memory,
        "active notes",
        ["*   LIVES   left:  5", "player SEEMS to like vowels", "- tone: FRIENDLY", "  -   pattern: _ _ a _ e _  "],
    )
    assert result.new_memory.endswith("## 3. Active Notes\n- Guessed letters: e, a\n")


def test_delete_fails_on_missing_target_and_changes_nothing():
    with pytest.raises(MemoryToolError, match="no line of section 'Active Notes' matches"):
        delete_from_memory(MEMORY, "Active Notes", ["- Lives left: 5", "the player cheated"])


def test_delete_only_searches_the_named_section():
    with pytest.raises(MemoryToolError):
        delete_from_memory(MEMORY, "Goals and Plans", ["Lives left: 5"])


def test_delete_refuses_section_headers():
    with pytest.raises(MemoryToolError, match="header"):
        delete_from_memory(MEMORY, "Active Notes", ["## 3. Active Notes"])


# --- patch --------------------------------------------------------------------------------


def test_patch_happy_path_replaces_line_located_by_context():
    patch = patch_text("@@ section: Active Notes", " - Guessed letters: e, a", "-- Pattern: _ _ a _ e _", "+- Pattern: p _ a _ e _")
    result = patch_memory(MEMORY, patch, "player guessed p")
    assert "- Pattern: p _ a _ e _" in result.new_memory
    assert "_ _ a _ e _" not in result.new_memory
    assert result.meta == {
        "applied_hunks": 1,
        "changed_lines": 2,
        "sections_touched": ["Active Notes"],
        "warnings": [],
    }


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("*** Update Memory\n@@ section: Active Notes\n+x\n*** End Patch", "start with"),
        ("*** Begin Patch\n@@ section: Active Notes\n+x\n*** End Patch", "Update Memory"),
        ("*** Begin Patch\n*** Update Memory\n@@ section: Active Notes\n+x", "end with"),
        ("*** Begin Patch\n*** Update Memory\n+x\n@@ section: Active Notes\n+y\n*** End Patch", "before the first"),
        ("*** Begin Patch\n*** Update Memory\n@@ Active Notes\n+x\n*** End Patch", "@@ section:"),
        ("*** Begin Patch\n*** Update Memory\n*** End Patch", "no '@@ section"),
        ("*** Begin Patch\n*** Update Memory\n@@ section: Active Notes\n - Lives left: 5\n*** End Patch", "changes nothing"),
    ],
)
def test_patch_envelope_and_hunk_format_errors(patch, message):
    with pytest.raises(MemoryToolError, match=message):
        patch_memory(MEMORY, patch, "malformed")


def test_patch_hunk_is_anchored_to_its_section():
    memory = append_in_memory(MEMORY, "Goals and Plans", ["- Lives left: 5"]).new_memory
    patch = patch_text("@@ section: Goals and Plans", "-- Lives left: 5")
    result = patch_memory(memory, patch, "drop the misplaced note")
    assert result.new_memory == MEMORY
    with pytest.raises(MemoryToolError, match="available sections"):
        patch_memory(MEMORY, patch_text("@@ section: Scratch", "+x"), "no such section")


def test_patch_context_picks_between_identical_lines():
    memory = MEMORY.replace("- Lives left: 5\n", "- todo\n- Lives left: 5\n- todo\n")
    patch = patch_text("@@ section: Active Notes", " - Lives left: 5", "-- todo", "+- done")
    result = patch_memory(memory, patch, "tick the second todo")
    assert result.new_memory.endswith("- todo\n- Lives left: 5\n- done\n")


def test_patch_fails_on_ambiguous_target():
    memory = MEMORY.replace("- Lives left: 5\n", "- todo\n- Lives left: 5\n- todo\n")
    with pytest.raises(MemoryToolError, match="ambiguous"):
        patch_memory(memory, patch_text("@@ section: Active Notes", "-- todo"), "which one?")


def test_patch_fails_on_missing_target():
    patch = patch_text("@@ section: Active Notes", "-- Lives left: 4", "+- Lives left: 3")
    with pytest.raises(MemoryToolError, match="not found"):
        patch_memory(MEMORY, patch, "wrong line")


def test_patch_expected_hunks_and_changes_are_checked():
    patch = patch_text(
        "@@ section: Active Notes",
        "-- Lives left: 5",
        "+- Lives left: 4",
        "@@ section: Goals and Plans",
        "+- Stay calm.",
    )
    result = patch_memory(MEMORY, patch, "two hunks", expected_hunks=2, expected_changes=3)
    assert result.meta["applied_hunks"] == 2 and result.meta["changed_lines"] == 3
    assert result.meta["sections_touched"] == ["Active Notes", "Goals and Plans"]
    with pytest.raises(MemoryToolError, match="expected_hunks"):
        patch_memory(MEMORY, patch, "two hunks", expected_hunks=1)
    with pytest.raises(MemoryToolError, match="expected_changes"):
        patch_memory(MEMORY, patch, "two hunks", expected_changes=2)


def test_patch_is_all_or_nothing_across_hunks():
    patch = patch_text(
        "@@ section: Active Notes",
        "-- Lives left: 5",
        "+- Lives left: 4",
        "@@ section: Goals and Plans",
        "-- a line that does not exist",
    )
    with pytest.raises(MemoryToolError, match="hunk 2"):
        patch_memory(MEMORY, patch, "second hunk fails")


def test_patch_pure_addition_without_context_appends_to_section():
    result = patch_memory(MEMORY, patch_text("@@ section: Goals and Plans", "+- Stay calm."), "add a goal")
    assert result.new_memory.startswith("## 1. Goals and Plans\n- Host hangman fairly.\n- Stay calm.\n\n## 2.")


def test_patch_default_options_forgive_whitespace_and_blank_line_gaps():
    patch = patch_text("@@ section: Active Notes", "-  -   Lives    left: 5", "+- Lives left: 4")
    assert "- Lives left: 4" in patch_memory(MEMORY, patch, "spacing differs").new_memory
    gapped = MEMORY.replace("- Pattern", "\n- Pattern")
    patch = patch_text("@@ section: Active Notes", " - Guessed letters: e, a", "-- Pattern: _ _ a _ e _")
    result = patch_memory(gapped, patch, "blank line between context and target")
    assert "Pattern" not in result.new_memory and result.meta["warnings"]
    with pytest.raises(MemoryToolError):
        patch_memory(gapped, patch, "strict", options={"strict_context": True})


def test_patch_non_strict_falls_back_to_deleted_lines_when_context_is_wrong():
    patch = patch_text("@@ section: Active Notes", " - this context is stale", "-- Lives left: 5", "+- Lives left: 4")
    result = patch_memory(MEMORY, patch, "stale context")
    assert "- Lives left: 4" in result.new_memory
    assert any("context" in warning for warning in result.meta["warnings"])
    with pytest.raises(MemoryToolError, match="not found"):
        patch_memory(MEMORY, patch, "stale context", options={"strict_context": True})


def test_patch_respects_whitespace_and_case_options():
    patch = patch_text("@@ section: Active Notes", "-- LIVES LEFT: 5", "+- Lives left: 4")
    with pytest.raises(MemoryToolError):
        patch_memory(MEMORY, patch, "case differs")
    result = patch_memory(MEMORY, patch, "case differs", options={"case_sensitive": False})
    assert "- Lives left: 4" in result.new_memory
    spaced = patch_text("@@ section: Active Notes", "--  Lives left: 5", "+- Lives left: 4")
    with pytest.raises(MemoryToolError):
        patch_memory(MEMORY, spaced, "spacing", options={"normalize_whitespace": False, "strict_context": True})


def test_patch_rejects_unknown_or_non_boolean_options():
    patch = patch_text("@@ section: Goals and Plans", "+- x")
    with pytest.raises(MemoryToolError, match="fuzzy"):
        apply_tool_call(MEMORY, "patch_memory", {"patch": patch, "explanation": "e", "options": {"fuzzy": True}})
    with pytest.raises(MemoryToolError, match="strict_context"):
        apply_tool_call(MEMORY, "patch_memory", {"patch": patch, "explanation": "e",
                                                 "options": {"strict_context": "yes"}})


def test_patch_cannot_touch_section_headers():
    with pytest.raises(MemoryToolError, match="header"):
        patch_memory(MEMORY, patch_text("@@ section: Active Notes", "-## 3. Active Notes", "+## 3. Notes"), "rename")
    with pytest.raises(MemoryToolError, match="header"):
        patch_memory(MEMORY, patch_text("@@ section: Active Notes", "+## 4. Extra"), "add section")


def test_patch_may_use_the_section_header_as_context():
    patch = patch_text("@@ section: Active Notes", " ## 3. Active Notes", "+- First note")
    result = patch_memory(MEMORY, patch, "insert at top")
    assert "## 3. Active Notes\n- First note\n- Guessed letters" in result.new_memory


def test_patch_reapplied_changes_nothing_and_warns():
    patch = patch_text("@@ section: Active Notes", " - Guessed letters: e, a", "-- Pattern: _ _ a _ e _", "+- Pattern: p _ a _ e _")
    first = patch_memory(MEMORY, patch, "guess p")
    second = patch_memory(first.new_memory, patch, "guess p", expected_hunks=1, expected_changes=2)
    assert second.new_memory == first.new_memory
    assert second.meta["applied_hunks"] == 0 and second.meta["changed_lines"] == 0
    assert any("already applied" in warning for warning in second.meta["warnings"])


def test_patch_reapplied_insertion_with_context_is_not_duplicated():
    patch = patch_text("@@ section: Active Notes", " - Guessed letters: e, a", "+- Guessed t")
    first = patch_memory(MEMORY, patch, "add")
    assert patch_memory(first.new_memory, patch, "add").new_memory == first.new_memory
    addition = patch_text("@@ section: Goals and Plans", "+- Stay calm.")
    once = patch_memory(MEMORY, addition, "add").new_memory
    assert patch_memory(once, addition, "add").new_memory == once


# --- replace ------------------------------------------------------------------------------


def test_replace_happy_path_replaces_exact_span():
    result = replace_in_memory(MEMORY, "Lives left: 5", "Lives left: 4", "lost a life")
    assert result.new_memory == MEMORY.replace("Lives left: 5", "Lives left: 4")
    assert result.meta == {
        "applied_hunks": 1,
        "changed_lines": 2,
        "sections_touched": ["Active Notes"],
        "warnings": [],
    }


def test_replace_scoped_to_section_title():
    memory = append_in_memory(MEMORY, "Goals and Plans", ["- Word length: 6"]).new_memory
    with pytest.raises(MemoryToolError, match="occurs 2 times"):
        replace_in_memory(memory, "Word length: 6", "Word length: six", "ambiguous")
    result = replace_in_memory(memory, "Word length: 6", "Word length: six", "scoped", section_title="facts and knowledge")
    assert find_section(result.new_memory, "Goals and Plans").body == find_section(memory, "Goals and Plans").body
    assert "- Word length: six" in find_section(result.new_memory, "Facts and Knowledge").body


def test_replace_expected_replacements_must_match_count():
    with pytest.raises(MemoryToolError, match="expected_replacements is 1"):
        replace_in_memory(MEMORY, "_ ", "? ", "many")
    with pytest.raises(MemoryToolError, match="expected_replacements is 2"):
        replace_in_memory(MEMORY, "Lives", "Hearts", "one", expected_replacements=2)
    memory = append_in_memory(MEMORY, "Active Notes", ["- Lives lost: 1"]).new_memory
    result = replace_in_memory(memory, "Lives", "Hearts", "two", expected_replacements=2)
    assert result.new_memory.endswith("- Hearts left: 5\n- Hearts lost: 1\n")
    assert result.meta["applied_hunks"] == 2


def test_replace_fails_when_old_string_missing():
    with pytest.raises(MemoryToolError, match="not found"):
        replace_in_memory(MEMORY, "Lives left: 9", "Lives left: 8", "missing")


def test_replace_pre_and_post_context_select_the_occurrence():
    memory = MEMORY.replace("- Word length: 6", "- Word length: 6\n- Guesses so far: 6")
    with pytest.raises(MemoryToolError, match="occurs 2 times"):
        replace_in_memory(memory, "6", "7", "ambiguous", section_title="Facts and Knowledge")
    result = replace_in_memory(memory, "6", "7", "pinned", pre_context="Guesses so far: ")
    assert "- Guesses so far: 7" in result.new_memory and "- Word length: 6" in result.new_memory
    result = replace_in_memory(memory, "Word", "Secret word", "pinned", post_context=" length")
    assert "- Secret word length: 6" in result.new_memory


def test_replace_context_must_be_adjacent_unless_strict_context_off():
    with pytest.raises(MemoryToolError, match="not found"):
        replace_in_memory(MEMORY, "5", "4", "not adjacent", pre_context="Lives")
    result = replace_in_memory(MEMORY, "5", "4", "nearby", pre_context="Lives", options={"strict_context": False})
    assert "- Lives left: 4" in result.new_memory


def test_replace_option_defaults_differ_from_patch():
    # replace: whitespace is NOT normalised by default; patch normalises it by default.
    with pytest.raises(MemoryToolError, match="not found"):
        replace_in_memory(MEMORY, "Lives  left:   5", "Lives left: 4", "spacing")
    result = replace_in_memory(MEMORY, "Lives  left:   5", "Lives left: 4", "spacing", options={"normalize_whitespace": True})
    assert "- Lives left: 4" in result.new_memory
    patched = patch_memory(MEMORY, patch_text("@@ section: Active Notes", "-- Lives  left:   5", "+- Lives left: 4"), "spacing")
    assert patched.new_memory == result.new_memory


def test_replace_case_insensitive_option():
    with pytest.raises(MemoryToolError):
        replace_in_memory(MEMORY, "lives LEFT: 5", "Lives left: 4", "case")
    result = replace_in_memory(MEMORY, "lives LEFT: 5", "Lives left: 4", "case", options={"case_sensitive": False})
    assert "- Lives left: 4" in result.new_memory


def test_replace_rejects_unknown_options():
    with pytest.raises(MemoryToolError, match="regex"):
        apply_tool_call(MEMORY, "replace_in_memory", {"old_string": "Lives", "new_string": "Hearts",
                                                      "explanation": "bad", "options": {"regex": True}})


def test_replace_cannot_touch_section_headers():
    with pytest.raises(MemoryToolError, match="header"):
        replace_in_memory(MEMORY, "Active Notes", "Scratchpad", "rename section")
    with pytest.raises(MemoryToolError, match="header"):
        replace_in_memory(MEMORY, "- Lives left: 5", "## 4. New Section", "add header")
    with pytest.raises(MemoryToolError, match="header"):
        replace_in_memory(MEMORY, "Word length: 6\n\n", "", "glue a header onto a line")


def test_replace_is_idempotent():
    first = replace_in_memory(MEMORY, "<secret>planet</secret>", "<secret>comet</secret>", "swap")
    second = replace_in_memory(first.new_memory, "<secret>planet</secret>", "<secret>comet</secret>", "swap")
    assert second.new_memory == first.new_memory
    assert second.meta["applied_hunks"] == 0
    assert any("already applied" in warning for warning in second.meta["warnings"])


def test_replace_is_idempotent_when_new_string_contains_old_string():
    first = replace_in_memory(MEMORY, "Lives left: 5", "Lives left: 5 (of 6)", "clarify")
    second = replace_in_memory(first.new_memory, "Lives left: 5", "Lives left: 5 (of 6)", "clarify")
    assert second.new_memory == first.new_memory == MEMORY.replace("Lives left: 5", "Lives left: 5 (of 6)")


# --- dispatcher and schemas ---------------------------------------------------------------


def test_apply_tool_call_routes_to_the_named_tool():
    result = apply_tool_call(MEMORY, "append_in_memory", {"section_title": "Active Notes", "lines": ["- x"]})
    assert result == append_in_memory(MEMORY, "Active Notes", ["- x"])
    as_json = json.dumps({"old_string": "5", "new_string": "4", "explanation": "e", "pre_context": "left: "})
    assert apply_tool_call(MEMORY, "replace_in_memory", as_json).new_memory.endswith("- Lives left: 4\n")
    options = {"patch": patch_text("@@ section: Active Notes", "-- LIVES LEFT: 5"), "explanation": "e",
               "options": {"case_sensitive": False}}
    assert "Lives" not in apply_tool_call(MEMORY, "patch_memory", options).new_memory


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("rewrite_memory", {"new_memory": "x"}, "Unknown memory tool"),
        ("overwrite_memory", {}, "new_memory"),
        ("overwrite_memory", {"new_memory": "x", "mood": "happy"}, "mood"),
        ("overwrite_memory", {"new_memory": 7}, "new_memory"),
        ("append_in_memory", {"section_title": "Active Notes", "lines": [1, 2]}, "lines"),
        ("replace_in_memory", {"old_string": "a", "new_string": "b", "explanation": "e", "expected_replacements": "1"},
         "expected_replacements"),
        ("replace_in_memory", {"old_string": "a", "new_string": "b", "explanation": "e", "expected_replacements": True},
         "expected_replacements"),
        ("patch_memory", {"patch": "x", "explanation": "e", "options": {"fuzzy": True}}, "fuzzy"),
        ("patch_memory", "{not json", "not valid JSON"),
        ("patch_memory", ["patch"], "must be an object"),
    ],
)
def test_apply_tool_call_rejects_bad_calls(name, arguments, message):
    with pytest.raises(MemoryToolError, match=message):
        apply_tool_call(MEMORY, name, arguments)


def test_strategies_group_the_five_tools():
    assert STRATEGIES == {
        "overwrite": ("overwrite_memory",),
        "append_delete": ("append_in_memory", "delete_from_memory"),
        "patch_replace": ("patch_memory", "replace_in_memory"),
    }


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_tool_schemas_follow_the_argument_models(strategy):
    schemas = tool_schemas(strategy)
    assert [schema["function"]["name"] for schema in schemas] == list(STRATEGIES[strategy])
    for schema in schemas:
        assert schema["type"] == "function"
        function = schema["function"]
        model = TOOL_ARGUMENTS[function["name"]]
        parameters = function["parameters"]
        assert function["description"]
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert set(parameters["properties"]) == set(model.model_fields)
        required = {name for name, field in model.model_fields.items() if field.is_required()}
        assert set(parameters["required"]) == required
        assert "$ref" not in json.dumps(parameters)


def test_tool_schemas_unknown_strategy_is_a_clear_error():
    with pytest.raises(UnknownStrategyError, match="known strategies"):
        tool_schemas("rewrite")


# -- found by a differential check against the reference implementation ---------------------

def test_normalised_whitespace_never_lets_a_space_match_a_line_break():
    from psit_lib.studies.psit.memory.replace import replace_in_memory

    memory = "## 1. Goals and Plans\n- foo\n- bar\n"
    result = replace_in_memory(memory, "foo ", "baz ", "e", options={"normalize_whitespace": True})
    assert result.new_memory.splitlines() == ["## 1. Goals and Plans", "- baz ", "- bar"]
    assert "- baz - bar" not in result.new_memory


def test_reapplying_a_pinned_deletion_is_a_no_op_success():
    from psit_lib.studies.psit.memory.replace import replace_in_memory

    memory = "## 1. Goals and Plans\n- keep\n- drop me\n- tail\n"
    once = replace_in_memory(memory, "- drop me\n", "", "e", pre_context="- keep\n")
    assert once.new_memory == "## 1. Goals and Plans\n- keep\n- tail\n"
    twice = replace_in_memory(once.new_memory, "- drop me\n", "", "e", pre_context="- keep\n")
    assert twice.new_memory == once.new_memory and "already applied" in twice.meta["warnings"][0]
    with pytest.raises(MemoryToolError):  # an unpinned deletion of text that is not there still fails
        replace_in_memory(once.new_memory, "- drop me\n", "", "e")


def test_a_hunk_line_matches_a_memory_line_that_differs_only_by_its_bullet():
    from psit_lib.studies.psit.memory.patch import patch_memory

    memory = "## 1. Goals and Plans\n- Old line\n"
    patch = "*** Begin Patch\n*** Update Memory\n@@ section: Goals and Plans\n-Old line\n+New line\n*** End Patch"
    result = patch_memory(memory, patch, "e")
    assert result.new_memory == "## 1. Goals and Plans\n- New line\n"
    assert any("bullets" in w for w in result.meta["warnings"])
    again = patch_memory(result.new_memory, patch, "e")
    assert again.new_memory == result.new_memory  # idempotent


def test_counts_accept_equivalent_values_and_warnings_reach_the_model():
    from psit_lib.studies.psit.memory.tools import apply_tool_call
    from psit_lib.studies.psit.memory.working_memory import initial_memory
    from psit_lib.studies.psit.agents.graphs import tool_result_text

    memory = apply_tool_call(initial_memory(), "append_in_memory", {"section_title": "Active Notes", "lines": ["- x"]}).new_memory
    for count in ("1", 1.0, 1):
        result = apply_tool_call(memory, "replace_in_memory", {"old_string": "- x", "new_string": "- y",
                                                               "explanation": "e", "expected_replacements": count})
        assert "- y" in result.new_memory
    with pytest.raises(MemoryToolError):
        apply_tool_call(memory, "replace_in_memory", {"old_string": "- x", "new_string": "- y", "explanation": "e",
                                                      "expected_replacements": 1.5})
    done = apply_tool_call(result.new_memory, "replace_in_memory", {"old_string": "- x", "new_string": "- y",
                                                                     "explanation": "e"})
    text = tool_result_text({"name": "replace_in_memory", "ok": True, "meta": done.meta})
    assert text.startswith("ok: nothing changed") and "already applied" in text
