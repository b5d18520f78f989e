"""Fixtures shared by the test modules."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py), stopped after
    the test."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
