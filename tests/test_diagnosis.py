"""Tests for the DDXPlus loader, the diagnosis task and the shared yes/no reader.

Rule checks compare against the raw JSON files (read here without the loader), so a loader
bug cannot hide behind itself.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.llm.reply_readers import read_yes_no
from psit_lib.studies.psit.tasks.base import HostReplyError, PsitTask
from psit_lib.studies.psit.tasks.diagnosis import DiagnosisState, DiagnosisTask, answers_yes
from psit_lib.studies.psit.tasks.diagnosis_data import DatasetError, default_data_dir, load_ddxplus

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "ddxplus"
RAW_CONDITIONS = json.loads((DATA_DIR / "release_conditions.json").read_text(encoding="utf-8"))
RAW_EVIDENCES = json.loads((DATA_DIR / "release_evidences.json").read_text(encoding="utf-8"))
RAW_BINARY = sorted(code for code, entry in RAW_EVIDENCES.items() if entry["data_type"] == "B")
RAW_HAS = {
    entry["cond-name-eng"]: set(entry["symptoms"]) | set(entry["antecedents"]) for entry in RAW_CONDITIONS.values()
}

TASK = DiagnosisTask()


def _copy_data(tmp_path: Path) -> Path:
    target = tmp_path / "ddxplus"
    target.mkdir()
    for name in ("release_conditions.json", "release_evidences.json"):
        shutil.copyfile(DATA_DIR / name, target / name)
    return target


def _brute_force_compatible(answers: list[tuple[str, bool]]) -> set[str]:
    return {name for name, has in RAW_HAS.items() if all((code in has) == yes for code, yes in answers)}


# ----- data files and loader --------------------------------------------------------------


def test_shipped_files_are_the_published_copies():
    expected = {
        "release_conditions.json": "61e16706a2ab78efb997bab8a865c83b46151b10b0377b63530745f1e18e71a8",
        "release_evidences.json": "281c78b044ae60514e28ecc9052d08a8225dd3e2db3f00f8788b99c47b05e0c0",
    }
    for name, digest in expected.items():
        assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == digest, name
    assert "CC-BY" in (DATA_DIR / "ATTRIBUTION.md").read_text(encoding="utf-8")


def test_loader_reads_the_dataset():
    data = load_ddxplus()
    assert default_data_dir().resolve() == DATA_DIR
    assert len(data.conditions) == 49
    assert len(data.evidences) == 223
    assert len(data.binary_evidences) == 208
    assert all(evidence.data_type == "B" for evidence in data.binary_evidences)
    myasthenia = data.condition("Myasthenia gravis")
    assert (myasthenia.severity, myasthenia.name_fr) == (3, "Myasthénie grave")
    assert myasthenia.antecedents == ("E_28", "E_204")
    assert myasthenia.evidences == frozenset(myasthenia.symptoms) | {"E_28", "E_204"}
    assert data.evidences["E_91"].question_en.startswith("Do you have a fever")
    assert data.evidences["E_204"].data_type == "C"
    with pytest.raises(KeyError, match="Flu"):
        data.condition("Flu")


def test_loader_caches_per_directory_and_honours_env(tmp_path, monkeypatch):
    assert load_ddxplus() is load_ddxplus(DATA_DIR)
    _copy_data(tmp_path)
    monkeypatch.setenv("PSIT_DATA_DIR", str(tmp_path))
    from_env = load_ddxplus()
    assert from_env is not load_ddxplus(DATA_DIR)
    assert from_env.condition_names == load_ddxplus(DATA_DIR).condition_names


@pytest.mark.parametrize("name", ["release_conditions.json", "release_evidences.json"])
def test_loader_rejects_truncated_file(tmp_path, name):
    copy = _copy_data(tmp_path)
    raw = (copy / name).read_bytes()
    (copy / name).write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DatasetError, match=rf"{name} is not valid JSON \(truncated or malformed\)"):
        load_ddxplus(copy)


def _drop_condition_field(conditions, evidences):
    del conditions["Croup"]["severity"]
    return "condition 'Croup' lacks the required field 'severity'"


def _drop_question(conditions, evidences):
    del evidences["E_91"]["question_en"]
    return "evidence 'E_91' lacks the required field 'question_en'"


def _unknown_code(conditions, evidences):
    conditions["Croup"]["symptoms"]["E_999"] = {}
    return "names evidence 'E_999', which is missing from release_evidences.json"


def _bad_data_type(conditions, evidences):
    evidences["E_91"]["data_type"] = "X"
    return "evidence 'E_91' has data_type 'X'"


def _list_instead_of_object(conditions, evidences):
    conditions["Croup"]["symptoms"] = ["E_91"]
    return "'symptoms' field that is not an object"


def _text_severity(conditions, evidences):
    conditions["Croup"]["severity"] = "2"
    return "condition 'Croup' has a non-integer 'severity'"


@pytest.mark.parametrize(
    "corrupt",
    [_drop_condition_field, _drop_question, _unknown_code, _bad_data_type, _list_instead_of_object, _text_severity],
)
def test_loader_rejects_malformed_content(tmp_path, corrupt):
    copy = _copy_data(tmp_path)
    conditions = json.loads((copy / "release_conditions.json").read_text(encoding="utf-8"))
    evidences = json.loads((copy / "release_evidences.json").read_text(encoding="utf-8"))
    expected = corrupt(conditions, evidences)
    (copy / "release_conditions.json").write_text(json.dumps(conditions), encoding="utf-8")
    (copy / "release_evidences.json").write_text(json.dumps(evidences), encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_ddxplus(copy)
    assert expected in str(info.value)
    assert str(copy) in str(info.value)


def test_loader_rejects_missing_file_and_non_object(tmp_path):
    copy = _copy_data(tmp_path)
    (copy / "release_evidences.json").unlink()
    with pytest.raises(DatasetError, match="release_evidences.json does not exist"):
        load_ddxplus(copy)
    (copy / "release_evidences.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(DatasetError, match="must hold a non-empty JSON object"):
        load_ddxplus(copy)


# ----- rule R and the hypothesis space ------------------------------------------------------


def test_rule_matches_the_dataset_on_every_pair():
    data = load_ddxplus()
    assert {c.name for c in data.conditions} == set(RAW_HAS)
    for condition in data.conditions:
        raw = RAW_CONDITIONS[condition.name]
        for code in RAW_EVIDENCES:
            expected = code in raw["symptoms"] or code in raw["antecedents"]
            assert answers_yes(condition, code) is expected, (condition.name, code)


@st.composite
def answer_sets(draw):
    """Answers that mostly follow one condition, with some flips, so both empty and open sets occur."""
    secret = draw(st.sampled_from(sorted(RAW_HAS)))
    codes = draw(st.lists(st.sampled_from(RAW_BINARY), unique=True, max_size=8))
    flips = draw(st.lists(st.booleans(), min_size=len(codes), max_size=len(codes)))
    return [(code, (code in RAW_HAS[secret]) != (flip and draw(st.booleans()))) for code, flip in zip(codes, flips)]


@settings(max_examples=150, deadline=None)
@given(answers=answer_sets(), seed=st.integers(0, 2**32 - 1))
def test_candidate_filter_agrees_with_brute_force(answers, seed):
    state = DiagnosisState(tuple(answers))
    expected = _brute_force_compatible(answers)
    found = TASK.compatible_secrets(state, 100, random.Random(seed))
    assert len(found) == len(set(found))
    assert set(found) == expected
    assert {c.name for c in TASK.compatible_conditions(state)} == expected
    assert all(TASK.is_compatible(state, name) is (name in expected) for name in RAW_HAS)
    limited = TASK.compatible_secrets(state, 3, random.Random(seed))
    assert len(limited) == min(3, len(expected)) and set(limited) <= expected
    assert TASK.public_constraints(state)["n_compatible"] == len(expected)


def test_compatible_secrets_order_is_seeded():
    state = DiagnosisState((("E_201", True),))
    first = TASK.compatible_secrets(state, 50, random.Random(7))
    assert first == TASK.compatible_secrets(state, 50, random.Random(7))
    orders = {tuple(TASK.compatible_secrets(state, 50, random.Random(seed))) for seed in range(10)}
    assert len(orders) > 1
    with pytest.raises(ValueError, match="limit"):
        TASK.compatible_secrets(state, -1, random.Random(0))


def test_names_outside_the_dataset_cannot_be_refuted():
    state = DiagnosisState((("E_201", True),))
    assert TASK.is_compatible(state, "Common migraine variant")
    assert not TASK.is_checkable("Common migraine variant")
    assert not TASK.is_compatible(state, "   ")
    assert not TASK.is_compatible(state, "Larygospasm")  # no cough in the dataset entry


def test_state_rejects_repeated_codes():
    with pytest.raises(ValueError, match="twice"):
        DiagnosisState((("E_91", True), ("E_91", False)))
    with pytest.raises(ValueError, match="twice"):
        DiagnosisState((("E_91", True),), ("E_91",))   # asked and answered, then unanswered: no
    assert DiagnosisState((("E_91", True),), ("E_53",)).asked == ("E_91", "E_53")


# ----- the seeded player ---------------------------------------------------------------------


def _play(task: DiagnosisTask, seed: int, host) -> DiagnosisState:
    rng = random.Random(seed)
    state = task.observe_opening(task.initial_state(), "Ready.")
    while not task.is_over(state):
        open_before = {c.name for c in task.compatible_conditions(state)}
        code, message = task.next_move(state, rng)
        evidence = task.dataset.evidences[code]
        assert evidence.data_type == "B"
        assert code not in state.asked
        assert evidence.question_en in message
        yes_side = {name for name in open_before if code in RAW_HAS[name]}
        assert 0 < len(yes_side) < len(open_before), "the question must split the open conditions"
        state = task.observe_reply(state, code, host(code))
    return state


@pytest.mark.parametrize("seed", range(25))
def test_player_with_truthful_host_narrows_to_the_secret(seed):
    task = DiagnosisTask(max_questions=60)
    secret = task.dataset.conditions[(seed * 7) % 49]
    state = _play(task, seed, lambda code: "Yes." if answers_yes(secret, code) else "No, I don't.")
    assert [c.name for c in task.compatible_conditions(state)] == [secret.name]
    assert len(state.asked) == len(set(state.asked))


@pytest.mark.parametrize("seed", range(25))
def test_player_with_erratic_host_never_repeats_or_asks_non_binary(seed):
    host_rng = random.Random(1000 + seed)
    task = DiagnosisTask(max_questions=60, explore_prob=0.5)
    state = _play(task, seed, lambda code: host_rng.choice(["yes", "**No**", "I do not", "Yep"]))
    assert len(state.asked) == len(set(state.asked))
    assert task.compatible_conditions(state), "split questions keep at least one condition compatible"


def test_player_is_seeded_and_explores():
    state = TASK.initial_state()
    assert TASK.next_move(state, random.Random(3)) == TASK.next_move(state, random.Random(3))
    firsts = {TASK.next_move(state, random.Random(seed))[0] for seed in range(60)}
    assert len(firsts) > 1


def test_greedy_player_picks_the_most_even_split():
    task = DiagnosisTask(explore_prob=0.0)
    imbalance = {code: abs(2 * sum(code in has for has in RAW_HAS.values()) - 49) for code in RAW_BINARY}
    best = min(imbalance.values())
    for seed in range(10):
        code, _ = task.next_move(task.initial_state(), random.Random(seed))
        assert imbalance[code] == best


def test_contradictory_history_ends_the_game():
    croup_binary = sorted(code for code in RAW_HAS["Croup"] if code in RAW_BINARY)
    lie = next(code for code in RAW_BINARY if code not in RAW_HAS["Croup"])
    answers = [(code, True) for code in croup_binary] + [(lie, True)]
    state = DiagnosisState(tuple(answers))
    assert _brute_force_compatible(answers) == set()
    assert TASK.compatible_conditions(state) == ()
    assert TASK.is_over(state)
    assert TASK.compatible_secrets(state, 5, random.Random(0)) == []


def test_game_ends_at_max_questions_and_refuses_more_moves():
    task = DiagnosisTask(max_questions=2)
    rng = random.Random(0)
    state = task.initial_state()
    for _ in range(2):
        code, _ = task.next_move(state, rng)
        state = task.observe_reply(state, code, "no")
    assert task.is_over(state)
    with pytest.raises(ValueError, match="over"):
        task.next_move(state, rng)


def test_observe_reply_rejects_bad_replies_and_moves():
    state = TASK.initial_state()
    with pytest.raises(HostReplyError, match="E_91"):
        TASK.observe_reply(state, "E_91", "Hmm, hard to say.")
    with pytest.raises(ValueError, match="not a binary"):
        TASK.observe_reply(state, "E_204", "yes")
    state = TASK.observe_reply(state, "E_91", "Yes.")
    assert state.answers == (("E_91", True),)
    with pytest.raises(ValueError, match="already asked"):
        TASK.observe_reply(state, "E_91", "no")


# ----- wording, reveal parsing and the protocol surface ----------------------------------------


def test_task_satisfies_the_protocol_and_prompts_carry_the_rules():
    assert isinstance(TASK, PsitTask)
    closed = DiagnosisTask(choice="closed")
    for prompt in (closed.host_system_prompt(), closed.opener()):
        assert all(f"- {name}" in prompt for name in RAW_HAS)
    for prompt in (TASK.host_system_prompt(), TASK.opener()):  # free choice (the study): no list
        assert not any(f"- {name}" in prompt for name in RAW_HAS) and "realistic" in prompt
    assert "yes or no" in TASK.host_system_prompt().lower() and "privately" in TASK.host_system_prompt().lower()
    reveal = TASK.reveal_prompt()
    assert "reveal the medical condition" in reveal and "name only" in reveal and "in the list" in closed.reveal_prompt()
    confirm = TASK.confirm_prompt("Croup")
    assert "Croup" in confirm and "single word" in confirm and "yes or no" in confirm
    opener = TASK.opener().lower()
    # every instruction of the study's opener (its Appendix F), in this project's words
    for phrase in ["random, realistic, but not obvious", "don't reveal it unless i ask you to reveal it",
                   "short yes/no questions", "symptoms, antecedents, signs or findings", "running summary",
                   "stay consistent", "unless i ask you to reveal it"]:
        assert phrase in opener, phrase
    with pytest.raises(ValueError, match="choice"):
        DiagnosisTask(choice="any")


def test_public_constraints_are_json_ready():
    state = DiagnosisState((("E_201", True), ("E_91", False)))
    summary = json.loads(json.dumps(TASK.public_constraints(state)))
    assert summary["present_evidences"] == ["E_201"] and summary["absent_evidences"] == ["E_91"]
    assert summary["answers"][0] == {"evidence": "E_201", "question": "Do you have a cough?", "answer": "yes"}
    assert set(summary["compatible_conditions"]) == _brute_force_compatible([("E_201", True), ("E_91", False)])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Sarcoidosis", "Sarcoidosis"),
        ("**sarcoidosis**", "Sarcoidosis"),
        ('"Spontaneous Pneumothorax."', "Spontaneous pneumothorax"),
        ("I chose Croup.", "Croup"),
        ("<think>maybe Croup?</think>Pneumonia", "Pneumonia"),
        ("Guillain Barre syndrome", "Guillain-Barré syndrome"),
        ("Laryngospasm", "Larygospasm"),
        ("Rhinite allergique", "Allergic sinusitis"),
        ("pneumothorax", None),       # broader than the dataset's name: never matched by containment
        ("Acute bronchitis", None),   # contains a name but is another condition: not a guess either
        ("NSTEMI", "Possible NSTEMI / STEMI"),
        ("stable angina", "Stable angina"),
        ("Unstable Angina", "Unstable angina"),
        ("angina", None),
        ("rhinosinusitis", None),
        ("Pneumonia or bronchitis", None),
        ("I'd rather not say.", None),
        ("", None),
    ],
)
def test_parse_reveal_with_a_closed_list(reply, expected):
    """The reading is the name as the reply writes it; ``normalise`` gives the dataset's name."""
    task = DiagnosisTask(choice="closed")
    written = task.read_reveal(reply).value
    assert (task.normalise(written) if written is not None else None) == expected


@pytest.mark.parametrize(
    ("reply", "expected", "checkable"),
    [
        ("Sarcoidosis", "Sarcoidosis", True),
        ("heart attack", "Possible NSTEMI / STEMI", True),
        ("Lyme disease", "Lyme disease", False),             # outside DDXPlus: kept as written
        ("The condition is Lyme disease.", "Lyme disease", False),
        ("**Celiac disease**", "Celiac disease", False),
        ("angina", "angina", False),                          # not one dataset name: kept, unchecked
        ("Pneumonia or bronchitis", None, None),              # names several
        ("I'd rather not say.", None, None),
        ("Is it important?", None, None),
        ("", None, None),
    ],
)
def test_parse_reveal_with_free_choice_keeps_off_dataset_conditions(reply, expected, checkable):
    """A dataset name (or alias) reads as written and normalises to the dataset's name; any other name
    is kept as written."""
    written = TASK.read_reveal(reply).value
    parsed = written if written is None or not TASK.is_checkable(written) else TASK.normalise(written)
    assert parsed == expected
    if parsed is not None:
        assert TASK.is_checkable(parsed) is checkable


def test_normalise_maps_dataset_names_and_cleans_others():
    assert TASK.normalise("  acute PULMONARY edema ") == "Acute pulmonary edema"
    assert TASK.normalise("Some Rare Syndrome!") == "some rare syndrome"
    assert all(TASK.normalise(name) == name for name in RAW_HAS)


# ----- the shared yes/no reader ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes.", True),
        ("yes", True),
        ("YES!", True),
        ("Yes – I do have that", True),
        ("**Answer:** yes", True),
        ("'Yep'", True),
        ("Yeah, I do.", True),
        ("I do have a fever.", True),
        ("I have that, yes.", True),
        ("Correct.", True),
        ("Absolutely!", True),
        ("y", True),
        ("Answer (yes/no): yes", True),
        ("Yes or no? Yes.", True),
        ("No.", False),
        ("no", False),
        ("No, I don't", False),
        ("**Answer:** no", False),
        ("Answer (yes/no): no", False),
        ("I do not", False),
        ("I don’t have that.", False),
        ("I have no fever.", False),
        ("I've never had that.", False),
        ("Nope", False),
        ("nah", False),
        ('"NO"', False),
        ("> no", False),
        ("Not really.", False),
        ("Absolutely not.", False),
        ("I'm afraid not.", False),
        ("That is not correct.", False),
        ("Negative.", False),
        ("n", False),
        ("<think>Yes would leak it.</think>No.", False),
        ("I'm not sure.", None),
        ("I don't know.", None),
        ("Please answer yes or no.", None),
        ("Hmm.", None),
        ("Nothing to add.", None),
        ("", None),
    ],
)
def test_parse_yes_no_table(reply, expected):
    assert read_yes_no(reply).value is expected


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parse_yes_no_is_total(text):
    assert read_yes_no(text).value in (True, False, None)


@pytest.mark.parametrize("reply", [
    "I have to keep my word a secret!",
    "I've already chosen a word, and I can't tell you.",
    "Sure, let's see... no, that's not my word.",
    "Hmm, I'd rather not say whether it is.",
    "Well, maybe. No.",
])
def test_refusals_deflections_and_late_answers_are_unreadable_not_yes(reply):
    assert read_yes_no(reply).value is None


def test_reasoning_written_inline_is_split_from_the_public_reply():
    from psit_lib.llm.reply_readers import read_json_object, split_reasoning

    assert split_reasoning("<think>My secret is candy.</think>\nPattern: _ _ _") == ("Pattern: _ _ _", "My secret is candy.")
    assert split_reasoning("<thinking>a</thinking>x<reasoning>b</reasoning>y") == ("x y", "a\nb")
    assert split_reasoning("The word is fine. <think>cut off mid-thought") == ("The word is fine.", "cut off mid-thought")
    assert split_reasoning("all of this was reasoning</think>Yes.") == ("Yes.", "all of this was reasoning")
    assert read_json_object('```json\n{"a": [1, 2]}\n```\nAnything else?') == {"a": [1, 2]}
    assert read_json_object('Here: {"b": "}"} — done') == {"b": "}"}
    assert read_json_object('{"a": 1') is None
