"""Fixtures shared by several test modules."""

from __future__ import annotations

from pathlib import Path

import pytest
from toxeval.taxonomy import Taxonomy, load_taxonomy

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
