"""Fixtures shared by the test modules: small datasets and taxonomy files on disk, user
taxonomies, the shared public data, parser caches, a fake OpenAI-compatible server and a
headless browser for the HTML report. Plain helpers (file writers, an in-memory dataset,
the ranking-metric names) are in helpers.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from numpy.typing import NDArray
from toxeval.taxonomy import Taxonomy, load_taxonomy

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_openai import FakeOpenAI
from helpers import HYPOTHESIS_BASE_EXAMPLES, CliRun, shared_data_dir, write_jsonl

# Hypothesis profiles, chosen by $TOXEVAL_HYPOTHESIS_PROFILE (default ``dev``):
# ``dev`` runs every property test with the budget written in it (helpers.examples);
# ``ci`` runs a quarter of it, derandomized (a failure reproduces on the next run) and
# without deadlines (a loaded 2-core runner is no measure of speed). CI (.ci/run) uses
# ``ci``; run ``dev`` locally, or raise a single test's budget while working on it.
settings.register_profile("dev", max_examples=HYPOTHESIS_BASE_EXAMPLES)
settings.register_profile(
    "ci",
    max_examples=HYPOTHESIS_BASE_EXAMPLES // 4,
    derandomize=True,
    deadline=None,
    print_blob=True,
)
settings.load_profile(os.environ.get("TOXEVAL_HYPOTHESIS_PROFILE", "dev"))


# The smoke subset (``-m smoke``): what CI runs against the installed wheel on the
# Pythons other than the main one (.ci/run, tools/test_wheels.py). The full suite runs
# once, on the main Python; these check what can differ between interpreters of the
# abi3 range: the native module loads and types as stubbed, the version and entry
# point, the shipped data files, the drop-ins on arrays, the readers, the parser, the
# fuzzer of the native calls, and the CLI's default run. Whole modules by name, single
# tests by node id.
SMOKE_MODULES = {
    "test_version.py",
    "test_lean_import.py",
    "test_core_stub.py",
    "test_taxonomy.py",
    "test_metric_inputs.py",
    "test_datasets.py",
    "test_predictions.py",
    "test_parse_output.py",
    "test_no_panic.py",
}
SMOKE_TESTS = {
    "test_cli.py::test_no_arg_evaluate_subprocess",
    "test_cli.py::test_evaluate_writes_deterministic_outputs",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the smoke subset (SMOKE_MODULES, SMOKE_TESTS)."""
    for item in items:
        module = item.path.name
        test = f"{module}::{item.name.split('[', 1)[0]}"
        if module in SMOKE_MODULES or test in SMOKE_TESTS:
            item.add_marker(pytest.mark.smoke)


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliRun]:
    """``toxeval ARGS`` run in this process (no interpreter start-up), with ``env`` set;
    for the tests that do not need a process of their own (signals, rlimits)."""
    from toxeval.cli import main as cli_main

    def run(*args: str, env: dict[str, str] | None = None) -> CliRun:
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        capsys.readouterr()
        code = cli_main(list(args))
        out = capsys.readouterr()
        return CliRun(code, out.out, out.err)

    return run


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py), stopped after
    the test."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared public data folder (helpers.shared_data_dir), holding
    ``openai-moderation/samples-1680.jsonl.gz``; the test is skipped when it is absent."""
    folder = shared_data_dir()
    if folder is None:
        pytest.skip("shared data/openai-moderation/samples-1680.jsonl.gz not found")
    return folder


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


# A three-category taxonomy whose first category has a name and an alias, so that
# columns and keys can name one category in several ways.
ALIAS_TAXONOMY = """name = "alias-3"
version = "1"
[[category]]
id = "alpha"
name = "Alpha"
aliases = ["first"]
[[category]]
id = "beta"
name = "Beta"
[[category]]
id = "gamma"
name = "Gamma"
"""

# Six rows with every category positive somewhere and one unknown label (row r3, gamma).
SMALL_ROWS: list[dict[str, Any]] = [
    {"id": "r1", "text": "one", "labels": {"alpha": 1, "beta": 0, "gamma": 0}},
    {"id": "r2", "text": "two", "labels": {"alpha": 0, "beta": 1, "gamma": 0}},
    {"id": "r3", "text": "three", "labels": {"alpha": 1, "beta": 1, "gamma": None}},
    {"id": "r4", "text": "four", "labels": {"alpha": 0, "beta": 0, "gamma": 1}},
    {"id": "r5", "text": "five", "labels": {"alpha": 0, "beta": 0, "gamma": 0}},
    {"id": "r6", "text": "six", "labels": {"alpha": 1, "beta": 0, "gamma": 1}},
]


def _write_alias_taxonomy(folder: Path) -> Path:
    p = folder / "alias-3.toml"
    p.write_text(ALIAS_TAXONOMY, encoding="utf-8")
    return p


def _write_small_dataset(folder: Path) -> Path:
    return write_jsonl(folder / "small.jsonl", SMALL_ROWS)


@pytest.fixture
def alias_taxonomy_file(tmp_path: Path) -> Path:
    """A TOML taxonomy file: ids alpha (name Alpha, alias first), beta, gamma."""
    return _write_alias_taxonomy(tmp_path)


@pytest.fixture
def small_dataset_file(tmp_path: Path) -> Path:
    """SMALL_ROWS as a JSONL dataset file in the alias-3 taxonomy."""
    return _write_small_dataset(tmp_path)


@pytest.fixture(scope="module")
def shared_small_dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, Path]:
    """(Dataset, dataset file, taxonomy file) of SMALL_ROWS, once per module: for
    property tests, whose examples cannot take function-scoped fixtures."""
    from toxeval.datasets import load_dataset

    folder = tmp_path_factory.mktemp("shared")
    tax = _write_alias_taxonomy(folder)
    path = _write_small_dataset(folder)
    return load_dataset(path, taxonomy=tax), path, tax


@pytest.fixture
def small_dataset(small_dataset_file: Path, alias_taxonomy_file: Path) -> Any:
    """SMALL_ROWS loaded as a Dataset (6 rows, K=3, one unknown cell)."""
    from toxeval.datasets import load_dataset

    return load_dataset(small_dataset_file, taxonomy=alias_taxonomy_file)


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


@pytest.fixture
def masked_dataset(user_taxonomy: Taxonomy) -> Callable[..., Any]:
    """A factory: ``masked_dataset(y, mask)`` is a :class:`toxeval.datasets.Dataset` of
    the (N, 3) 0/1 labels ``y`` with ``mask`` (True = known; None = all known) in the
    3-category ``user_taxonomy``, rows ``r0..r{N-1}``."""
    from toxeval.datasets import Dataset

    def make(y: Any, mask: Any = None) -> Dataset:
        y = np.asarray(y, dtype=np.int8)
        n = y.shape[0]
        m = np.ones_like(y, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        return Dataset(
            name="test",
            level="prompt",
            taxonomy=user_taxonomy,
            ids=[f"r{i}" for i in range(n)],
            texts=[f"text {i}" for i in range(n)],
            responses=None,
            y_true=np.where(m, y, 0).astype(np.int8),
            mask=m,
            soft=None,
            n_annotators=None,
            source="test",
            sha256="0" * 64,
        )

    return make


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


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[Any]:
    """A ``distributed.LocalCluster`` of two one-thread worker processes on 127.0.0.1
    (dashboard off), started once and shared by the Dask tests, with a client set as
    Dask's default scheduler; skipped where Dask is not installed."""
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    )
    client = distributed.Client(cluster)
    try:
        yield cluster
    finally:
        client.close()
        cluster.close()
