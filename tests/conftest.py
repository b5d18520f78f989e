"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


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
