"""The release workflow builds, tests and publishes what the README promises.

actionlint is not in the dev extra (its PyPI package is an sdist that downloads the
binary while it builds, which an offline machine cannot do), so the workflow is parsed
as YAML and
its structure checked: the platforms and libcs built (Linux x86_64/aarch64 as
manylinux and musllinux, macOS x86_64/arm64, Windows x64, the sdist), every build
through PyO3/maturin-action, every wheel tested where the runner can run it, and
publishing only on ``v*`` tags through PyPI trusted publishing (``id-token: write``,
no stored token).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

WORKFLOW = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "release.yml"
BUILD_JOBS = ("linux", "macos", "windows", "sdist")


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    if not WORKFLOW.is_file():
        pytest.skip(".github/workflows/release.yml is not beside the tests (installed package)")
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _triggers(wf: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the bare key `on` as True
    on = wf.get("on", wf.get(True))
    assert isinstance(on, dict), "the workflow has no `on:` mapping"
    return on


def _uses(job: dict[str, Any]) -> list[str]:
    return [str(step.get("uses", "")) for step in job["steps"]]


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job["steps"])


def _maturin_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in job["steps"] if str(s.get("uses", "")).startswith("PyO3/maturin-action@")]


def test_publishes_on_version_tags_only(workflow: dict[Any, Any]) -> None:
    on = _triggers(workflow)
    assert on["push"]["tags"] == ["v*"]
    assert "branches" not in on["push"]
    publish = workflow["jobs"]["publish"]
    assert "refs/tags/v" in publish["if"] and "push" in publish["if"]
    assert sorted(publish["needs"]) == sorted(BUILD_JOBS)


def test_trusted_publishing_without_a_token(workflow: dict[Any, Any]) -> None:
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    steps = [
        s
        for s in publish["steps"]
        if str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")
    ]
    assert len(steps) == 1
    assert not {"password", "user"} & set(steps[0].get("with", {}))
    assert workflow["permissions"] == {"contents": "read"}
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")


def test_builds_every_platform_with_maturin_action(workflow: dict[Any, Any]) -> None:
    jobs = workflow["jobs"]
    linux = {(m["target"], m["manylinux"]) for m in jobs["linux"]["strategy"]["matrix"]["include"]}
    assert linux == {
        ("x86_64", "2014"),
        ("aarch64", "2014"),
        ("x86_64", "musllinux_1_2"),
        ("aarch64", "musllinux_1_2"),
    }
    macos = {m["target"] for m in jobs["macos"]["strategy"]["matrix"]["include"]}
    assert macos == {"x86_64", "aarch64"}
    for name in ("linux", "macos", "windows"):
        (step,) = _maturin_steps(jobs[name])
        assert "--release" in step["with"]["args"]
        # the wheels are compressed as tools/test_wheels.py builds and measures them
        assert "--compression-level 9" in step["with"]["args"]
    assert _maturin_steps(jobs["windows"])[0]["with"]["target"] == "x64"
    (sdist,) = _maturin_steps(jobs["sdist"])
    assert sdist["with"]["command"] == "sdist"


def test_every_wheel_is_checked_and_tested(workflow: dict[Any, Any]) -> None:
    jobs = workflow["jobs"]
    for name in ("linux", "macos", "windows", "sdist"):
        runs = _runs(jobs[name])
        assert "twine check --strict" in runs, name
        assert "tools/test_wheels.py" in runs, name
    for name in ("linux", "macos", "windows"):
        runs = _runs(jobs[name])
        assert "abi3audit --strict" in runs and "check-wheel-contents" in runs, name
    assert "auditwheel show" in _runs(jobs["linux"])
    assert "docker run" in _runs(jobs["linux"]), "musllinux wheels are not run anywhere"
    assert all(
        any(u.startswith("actions/upload-artifact@") for u in _uses(jobs[n])) for n in BUILD_JOBS
    )


def test_the_test_script_it_calls_exists() -> None:
    if not WORKFLOW.is_file():
        pytest.skip("repository files are not beside the tests (installed package)")
    assert (WORKFLOW.parents[2] / "tools" / "test_wheels.py").is_file()
