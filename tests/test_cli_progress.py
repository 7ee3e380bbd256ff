"""``psit run``'s progress lines: pure renderings (phase named, durations without residue, cut to
the terminal), and the board that writes them on a terminal (redrawn in place, checked on an
emulated screen) or in a log (sparse, one line per change of phase)."""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.cli.progress import ProgressBoard, final_line, format_duration, progress_line
from psit_lib.runs.folder import RunFolder

DURATION = re.compile(r"^(\d+)s$|^(\d+)m([0-5]\d)s$|^(\d+)h([0-5]\d)m$")


@given(st.floats(min_value=0, max_value=10_000_000, allow_nan=False))
def test_a_duration_reads_back_to_the_seconds_it_shows(seconds):
    text = format_duration(seconds)
    match = DURATION.match(text)
    assert match, text
    s, m, ms, h, hm = match.groups()
    shown = int(s) if s else int(m) * 60 + int(ms) if m else int(h) * 3600 + int(hm) * 60
    exact = round(seconds)
    assert shown == exact if exact < 3600 else 0 <= exact - shown < 60


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (45.4, "45s"), (59.6, "1m00s"), (65, "1m05s"),
                                               (3599, "59m59s"), (3600, "1h00m"), (7385, "2h03m"), (-3, "0s")])
def test_durations(seconds, text):
    assert format_duration(seconds) == text


def test_the_line_names_notebook_phase_counts_and_time_left():
    counts = {"phase": "main", "planned": 36, "resumed": 0, "done": 24, "failed": 0, "cached": 0, "started": 100.0}
    assert progress_line("02_hangman", counts, now=124.0) == "02_hangman main 24/36 ETA 12s"
    counts.update(started=0.0)
    assert progress_line("02_hangman", counts, now=130.0) == "02_hangman main 24/36 ETA 1m05s"
    sweep = {"phase": "sweep unheld_secret", "planned": 12, "resumed": 2, "done": 4, "failed": 1, "cached": 3,
             "started": 10.0, "ended": 22.5, "finished": True}
    assert (progress_line("02_hangman", sweep, now=1e9)
            == "02_hangman sweep unheld_secret 6/12 (1 failed, 2 resumed, 3 cached) done in 12s")
    assert progress_line("02_hangman", None) == "02_hangman starting"
    assert progress_line("02_hangman", {**counts, "done": 0}, now=130.0).endswith("0/36 ETA -")


counts_strategy = st.fixed_dictionaries({
    "phase": st.sampled_from(["main", "part 2", "sweep notices_contradictions, unheld_secret"]),
    "planned": st.integers(0, 10**6), "resumed": st.integers(0, 10**5), "done": st.integers(0, 10**6),
    "failed": st.integers(0, 10**5), "cached": st.integers(0, 10**6), "started": st.floats(0, 1e9),
    "finished": st.booleans(), "ended": st.floats(0, 2e9)})


@settings(max_examples=200)
@given(counts_strategy, st.integers(20, 200), st.floats(0, 2e9))
def test_a_line_fits_the_terminal_and_holds_no_control_character(counts, width, now):
    line = progress_line("07_secret_distribution_mode_collapse", counts, now=now, width=width)
    assert len(line) <= width
    assert not any(ord(c) < 32 or c == "\x7f" for c in line)
    assert "ss" not in re.sub(r"[a-z_]{3,}", "", line)  # no "ETA 45ss": a unit is never doubled


def test_final_lines():
    assert final_line("02_x", "ok", 39.1, episodes=116) == "02_x ok in 39s: 116 episodes"
    assert final_line("02_x", "episodes failed", 75, episodes=10, failed=2) == "02_x episodes failed in 1m15s: 10 episodes, 2 failed"
    assert final_line("02_x", "suspect", 5, episodes=3) == "02_x SUSPECT in 5s: 3 episodes"
    assert final_line("02_x", "failed", 3, error="ValueError: bad") == "02_x FAILED after 3s: ValueError: bad"


class Screen(io.StringIO):
    """A terminal: keeps what is on screen, interpreting newlines, carriage returns and the two
    control sequences the board uses (cursor to the start of a line n up; erase to the end)."""

    def __init__(self):
        super().__init__()
        self.rows: list[str] = [""]
        self.row = 0

    def isatty(self):
        return True

    def write(self, text):
        for token in re.split(r"(\x1b\[\d*[A-Za-z]|\n|\r)", text):
            if not token:
                continue
            if token == "\n":
                self.row += 1
                if self.row == len(self.rows):
                    self.rows.append("")
            elif token == "\r":
                pass  # the board never relies on it
            elif token.startswith("\x1b["):
                n, code = int(token[2:-1] or 1), token[-1]
                if code == "F":
                    self.row = max(0, self.row - n)
                elif code == "J":
                    self.rows = self.rows[:self.row] + [""]
                else:
                    raise AssertionError(f"unexpected control sequence {token!r}")
            else:
                assert "\x1b" not in token
                self.rows[self.row] += token
        return len(text)

    def screen(self):
        return [r for r in self.rows if r]


def _write(folder, **counts):
    folder.dir.mkdir(parents=True, exist_ok=True)
    folder.progress_path.write_text(json.dumps({"planned": 100, "resumed": 0, "done": 0, "failed": 0, "cached": 0,
                                                "started": 0.0, **counts}))


def test_on_a_terminal_each_running_notebook_has_a_line_redrawn_in_place(tmp_path, monkeypatch):
    import sys

    screen = Screen()
    monkeypatch.setattr(sys, "stdout", screen)  # lines that stay go to stdout, the same terminal
    a, b = RunFolder(tmp_path / "a"), RunFolder(tmp_path / "b")
    board = ProgressBoard(screen)
    board.say("[1/2] 02_hangman")
    board.start("02_hangman", a)
    board.say("[2/2] 05_acc")
    board.start("05_acc", b)
    assert screen.screen() == ["[1/2] 02_hangman", "[2/2] 05_acc", "02_hangman starting", "05_acc starting"]
    _write(a, phase="main", done=95, started=1.0)
    _write(b, phase="main", done=1, started=1.0)
    board.refresh()
    _write(a, phase="sweep unheld_secret", done=3, planned=12, started=2.0)
    board.refresh()
    shown = screen.screen()
    assert shown[:2] == ["[1/2] 02_hangman", "[2/2] 05_acc"] and len(shown) == 4
    assert re.fullmatch(r"02_hangman sweep unheld_secret 3/12 ETA \S+", shown[2])  # nothing left of "main 95/100"
    assert shown[3].startswith("05_acc main 1/100 ETA ")
    written = len(screen.getvalue())
    board.refresh()
    assert len(screen.getvalue()) == written  # unchanged lines are not redrawn
    board.finish("02_hangman", "02_hangman ok in 39s: 116 episodes")
    assert screen.screen()[:3] == ["[1/2] 02_hangman", "[2/2] 05_acc", "02_hangman ok in 39s: 116 episodes"]
    assert screen.screen()[3].startswith("05_acc main 1/100") and len(screen.screen()) == 4
    board.finish("05_acc", "05_acc ok in 1m05s: 35 episodes")
    board.__exit__(None, None, None)
    assert screen.screen() == ["[1/2] 02_hangman", "[2/2] 05_acc", "02_hangman ok in 39s: 116 episodes",
                               "05_acc ok in 1m05s: 35 episodes"]


def test_a_line_longer_than_the_terminal_is_cut_so_it_never_wraps(tmp_path, monkeypatch):
    import os

    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=None: os.terminal_size((30, 10)))
    screen = Screen()
    board = ProgressBoard(screen)
    _write(RunFolder(tmp_path / "p"), phase="sweep notices_contradictions", done=5)
    board.start("07_secret_distribution_mode_collapse", RunFolder(tmp_path / "p"))
    assert [len(r) for r in screen.screen()] == [29]


def test_in_a_log_lines_are_sparse_per_notebook_but_a_new_phase_shows_at_once(tmp_path):
    log, now = io.StringIO(), [0.0]
    a, b = RunFolder(tmp_path / "a"), RunFolder(tmp_path / "b")
    board = ProgressBoard(log, log_interval=10, clock=lambda: now[0])
    board.start("A", a)
    board.start("B", b)
    board.refresh()
    assert log.getvalue() == ""  # no counts yet, no line
    for t, done_a, done_b in [(0, 0, 0), (3, 5, 1), (9, 9, 1), (11, 12, 1), (15, 12, 2), (22, 30, 2)]:
        now[0] = t
        _write(a, phase="main", done=done_a)
        _write(b, phase="main", done=done_b)
        board.refresh()
    now[0] = 23
    _write(a, phase="sweep k", done=1, planned=5)  # a new phase: shown at once
    board.refresh()
    _write(a, phase="sweep k", done=5, planned=5, finished=True, ended=30.0)
    board.finish("A", "A ok in 30s: 35 episodes", log)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and "\x1b" not in log.getvalue()
    assert [" ".join(line.split()[:4]) for line in lines] == [
        "A main 0/100 ETA", "B main 0/100 ETA", "A main 12/100 ETA", "B main 1/100 ETA", "A main 30/100 ETA",
        "B main 2/100 ETA", "A sweep k 1/5", "A sweep k 5/5", "A ok in 30s:"]
    assert lines[-2].endswith("done in 30s")


def test_disabled_progress_writes_only_the_lines_that_stay(tmp_path, monkeypatch):
    import sys

    screen = Screen()
    monkeypatch.setattr(sys, "stdout", screen)
    board = ProgressBoard(screen, enabled=False)
    _write(RunFolder(tmp_path / "p"), phase="main", done=5)
    board.start("A", RunFolder(tmp_path / "p"))
    board.refresh()
    board.finish("A", "A ok in 1s: 5 episodes")
    assert screen.screen() == ["A ok in 1s: 5 episodes"]


def test_headlines_are_wrapped_under_their_notebook_without_markdown():
    from psit_lib.cli.summary import headline_lines

    text = ("- **hangman · psit-sim**: private_cot, workflow_overwrite tie for the highest rate (1); the lowest "
            "rate, amem's 0, cannot be told apart\n- **diagnosis**: short")
    lines = headline_lines("02_hangman_fork_tests", text, width=60)
    assert lines[0] == "  02_hangman_fork_tests"
    assert lines[1].startswith("    - hangman · psit-sim: private_cot") and "**" not in "".join(lines)
    assert all(len(line) <= 60 for line in lines) and lines[2].startswith("      ")
    assert lines[-1] == "    - diagnosis: short"
    assert headline_lines("01_x", "") == [] and headline_lines("01_x", "  \n") == []


def test_the_summary_table_is_as_narrow_as_its_contents():
    from psit_lib.cli.summary import NotebookSummary, table

    shown = table([NotebookSummary("07_secret_distribution_mode_collapse", "ok", 97.2, episodes=40, model_calls=80),
                   NotebookSummary("02_hangman_fork_tests", "episodes failed", 3600, episodes=116, failed=2)])
    lines = shown.splitlines()
    assert lines[0].split() == ["notebook", "status", "episodes", "failed", "calls", "cached", "time"]
    assert lines[2].split() == ["07_secret_distribution_mode_collapse", "ok", "40", "0", "80", "0", "1m37s"]
    assert lines[3].endswith(" 1h00m") and max(map(len, lines)) <= 90
    resumed = table([NotebookSummary("02_x", "ok", 9, resumed=3, retries=1)]).splitlines()[0].split()
    assert "resumed" in resumed and "retries" in resumed


async def test_each_run_of_a_notebook_names_its_phase_in_the_progress_file(tmp_path):
    """The notebook's first run is ``main``, a run of swept models ``sweep <knob>``, a later run of
    the notebook's own models ``part <n>``: what ``psit run`` shows beside the counts."""
    from psit_lib.llm import LLMSettings
    from psit_lib.runs import EpisodeSpec, Experiment

    async def episode(spec, session):
        return {"answer": "ok"}

    exp = Experiment("90_phases", {"x": 1}, seed=0, settings=LLMSettings(cache="off"), run_dir=tmp_path)
    phases = []
    sweep = exp.sweep_models("unheld_secret", ["deny", "play_along"])
    for specs in ([EpisodeSpec("a", {"model": "psit-sim"})],
                  [EpisodeSpec(f"s-{v}", {"model": m}) for v, m in sweep.items()],
                  [EpisodeSpec("b", {})]):
        await exp.run(specs, episode, progress=False)
        phases.append(RunFolder(tmp_path / "90_phases").progress()["phase"])
    assert phases == ["main", "sweep unheld_secret", "part 2"]
