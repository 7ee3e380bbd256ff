"""Shared fixtures: loopback servers and per-test isolation of results and settings."""

from __future__ import annotations

import pytest

from loopback import FaultServer


@pytest.fixture
def fault_server():
    server = FaultServer()
    yield server
    server.close()


@pytest.fixture
def sim_server_url():
    from psit_lib.sim.server import running_server

    with running_server() as url:
        yield url


@pytest.fixture(autouse=True)
def _isolated_results(tmp_path, monkeypatch):
    """Keep every test's results and figures out of the repository, and the terminal 100 columns wide
    whatever runs the tests (an xdist worker can inherit another width), so printed layouts are the same."""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("PSIT_FIGURES_DIR", str(tmp_path / "figures"))
    for name in ("PSIT_BACKEND", "PSIT_BASE_URLS", "OPENAI_BASE_URL", "PSIT_API_KEY",
                 "OPENAI_API_KEY", "PSIT_MODEL", "PSIT_SIM_PROFILE", "PSIT_CACHE", "PSIT_RUN_DIR",
                 "PSIT_MODEL_ENDPOINTS", "PSIT_ENDPOINT_CONCURRENCY", "PSIT_CHECKPOINTS"):
        monkeypatch.delenv(name, raising=False)
