"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from toxeval.taxonomy import Taxonomy, load_taxonomy


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of a headless Chromium (Debian's ``chromium``). CI installs it (``.ci/run``),
    so there a missing browser fails; elsewhere the browser tests are skipped."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("headless Chromium is not installed (apt-get install chromium)")
    pytest.skip("headless Chromium is not installed (apt-get install chromium)")


BrowserRun = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_browser(chromium: str, tmp_path: Path) -> BrowserRun:
    """Run headless Chromium on a local file with the network unreachable; returns the
    finished process (``stdout``: the DOM with ``--dump-dom``; ``stderr``: the log, in
    which every console message appears as ``CONSOLE``)."""

    def run(page: Path, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            page.resolve().as_uri(),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    return run


USER_TAXONOMY_TOML = """\
name = "forum-3"
version = "0.1"
description = "A small user taxonomy whose aliases name toxeval-15 categories."

[[category]]
id = "identity_attack"
name = "Identity attack"
description = "Attacks on a group for who they are."
aliases = ["hate"]

[[category]]
id = "insult"
name = "Insult"
description = "Insults aimed at a person."
aliases = ["harassment"]

[[category]]
id = "threat"
name = "Threat"
description = "Threats of violence."
aliases = ["violence"]
"""


@pytest.fixture(scope="session")
def toxeval15() -> Taxonomy:
    return load_taxonomy("toxeval-15")


@pytest.fixture(scope="session")
def moderation8() -> Taxonomy:
    return load_taxonomy("openai-moderation-8")


@pytest.fixture()
def user_taxonomy_path(tmp_path: Path) -> Path:
    """A 3-category user taxonomy file whose aliases name toxeval-15 categories."""
    p = tmp_path / "forum-3.toml"
    p.write_text(USER_TAXONOMY_TOML, encoding="utf-8")
    return p


@pytest.fixture()
def user_taxonomy(user_taxonomy_path: Path) -> Taxonomy:
    return load_taxonomy(user_taxonomy_path)


@pytest.fixture
def fresh_parse_caches() -> None:
    """Forget toxeval.parsing's caches, so that a test sees the parser as it is now (a
    monkeypatched mapping or a cached row of an earlier test does not leak in)."""
    from toxeval.parsing import clear_caches

    clear_caches()


def make_multilabel(
    n: int, k: int, *, seed: int, tie_levels: int = 7, min_pos: int = 3
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """A multilabel problem with tied scores and at least ``min_pos`` positives and
    negatives per label: ``(y_true, score_a, score_b)``, b a noisier copy of a."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.35).astype(np.int64)
    y[:min_pos] = 1
    y[min_pos : 2 * min_pos] = 0
    a = np.round(0.6 * y + rng.random((n, k)), 1) * tie_levels
    b = np.round(0.3 * y + rng.random((n, k)), 1) * tie_levels
    return y, a, b


@pytest.fixture
def make_problem() -> Any:
    """The generator of multilabel problems (see ``make_multilabel``)."""
    return make_multilabel


@pytest.fixture
def multilabel_problem() -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """60 rows x 4 labels, ties, every label with positives and negatives."""
    return make_multilabel(60, 4, seed=11)
