"""environment.yml installs the same dependency set as pyproject.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _canonical(specs):
    out = {}
    for text in specs:
        req = Requirement(text)
        out[req.name.lower().replace("_", "-")] = str(req.specifier)
    return out


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = _canonical(project["dependencies"] + extras["test"] + extras["baselines"] + extras["inspect"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(item["pip"] for item in env["dependencies"] if isinstance(item, dict))
    listed = _canonical(x for x in pip_section if not x.startswith("-e"))
    assert listed == wanted
    assert any(x.startswith("python=3.11") for x in env["dependencies"] if isinstance(x, str))


def test_no_deps_requirements_are_pinned():
    lines = [l.strip() for l in (ROOT / ".ci/requirements-nodeps.txt").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    assert lines and all("==" in l for l in lines)
