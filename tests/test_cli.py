"""The toxeval CLI, in-process (``main([...])``) and as a subprocess: the whole flow on
the embedded demo set, ``score`` on the shared OpenAI moderation set with unknown labels
masked, deterministic results.json, exit codes 0 / 1 / 2 with one-line reasons."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from helpers import jsonl_text, write_jsonl
from toxeval.cli import main

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toxeval.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        cwd=REPO,
    )


def _one_line_error(err: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("toxeval: error: ")
    assert "Traceback" not in err


# --------------------------------------------------------------------------- whole flow


def test_no_arg_evaluate_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "mAP" in out and "label ranking loss" in out
    assert "card recipe" in out


def test_no_arg_evaluate_subprocess() -> None:
    r = _run()
    assert r.returncode == 0, r.stderr
    assert "mAP" in r.stdout
    assert "Traceback" not in r.stderr


def test_evaluate_writes_deterministic_outputs(tmp_path: Path) -> None:
    assert main(["evaluate", "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["evaluate", "--out", str(tmp_path / "b"), "--quiet"]) == 0
    for name in ("results.json", "report.md", "per_category.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    doc = json.loads((tmp_path / "a" / "results.json").read_text())
    assert doc["schema_version"] == "2"
    assert doc["system"]["kind"] == "detector"
    assert len(doc["dataset"]["sha256"]) == 64
    assert len(doc["per_category"]) == doc["config"]["taxonomy"]["k"]


@pytest.mark.parametrize("quiet", [True, False])
def test_timings_line_names_every_step(
    tmp_path: Path,
    quiet: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TOXEVAL_TIMINGS", "1")
    args = ["evaluate", "--out", str(tmp_path / "a")] + (["--quiet"] if quiet else [])
    assert main(args) == 0
    err = capsys.readouterr().err
    for prefix in ("toxeval: timings: ", "toxeval: cpu timings: "):
        lines = [ln for ln in err.splitlines() if ln.startswith(prefix)]
        assert len(lines) == 1, err
        spans = json.loads(lines[0].removeprefix(prefix))
        for step in ("importing", "reading dataset", "computing metrics", "writing outputs"):
            assert step in spans and spans[step] >= 0.0
    monkeypatch.delenv("TOXEVAL_TIMINGS")
    assert main(args) == 0
    assert "timings" not in capsys.readouterr().err


def test_cli_turns_numpy_huge_page_advice_off_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from numpy._core import multiarray

    set_hugepage = multiarray._set_madvise_hugepage
    before = set_hugepage(True)
    try:
        monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
        assert main(["taxonomy"]) == 0
        assert set_hugepage(True) is False  # main turned it off
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
        assert main(["taxonomy"]) == 0
        assert set_hugepage(True) is True  # left as the user's variable says
    finally:
        set_hugepage(before)
    capsys.readouterr()


def test_evaluate_reads_with_the_system_arrow_pool_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa

    before = pa.default_memory_pool()
    try:
        pa.set_memory_pool(
            pa.jemalloc_memory_pool() if hasattr(pa, "jemalloc_memory_pool") else before
        )
        monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
        chosen = pa.default_memory_pool().backend_name
        assert main(["evaluate", "--quiet"]) == 0
        assert pa.default_memory_pool().backend_name == chosen  # the user's variable decides
        monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL")
        assert main(["evaluate", "--quiet"]) == 0
        assert pa.default_memory_pool().backend_name == "system"
    finally:
        pa.set_memory_pool(before)
    capsys.readouterr()


def test_score_on_shared_openai_moderation(tmp_path: Path, shared_data: Path) -> None:
    from toxeval.datasets import load_dataset

    data = shared_data / "openai-moderation" / "samples-1680.jsonl.gz"
    ds = load_dataset(data)
    assert not ds.mask.all()  # the set has unknown labels
    rng = np.random.default_rng(0)
    noisy = np.clip(ds.y_true * 0.6 + rng.random(ds.y_true.shape) * 0.5, 0, 1)
    preds = tmp_path / "preds.jsonl"
    rows = [
        {
            "id": ds.ids[i],
            "scores": dict(zip(ds.taxonomy.ids, noisy[i].round(6).tolist(), strict=True)),
        }
        for i in rng.permutation(len(ds.ids))
    ]
    write_jsonl(preds, rows)
    outs = []
    for name in ("a", "b"):
        code = main(
            ["score", str(preds), "--dataset", str(data), "--out", str(tmp_path / name), "-q"]
        )
        assert code == 0
        outs.append((tmp_path / name / "results.json").read_bytes())
    assert outs[0] == outs[1]
    doc = json.loads(outs[0])
    per = {r["id"]: r for r in doc["per_category"]}
    # README counts of known labels (positives / negatives)
    assert (per["s"]["support"], per["s"]["negatives"]) == (237, 747)
    assert (per["v2"]["support"], per["v2"]["negatives"]) == (24, 1423)
    assert per["s"]["unknown"] == 1680 - 237 - 747
    assert doc["counts"]["unknown_cells"] > 0
    assert len(doc["system"]["sha256"]) == 64
    # AP of a category equals scikit-learn on its known rows
    import sklearn.metrics as skm

    k = ds.taxonomy.index("h")
    known = ds.mask[:, k]
    want = skm.average_precision_score(ds.y_true[known, k], noisy[known, k].round(6))
    assert per["h"]["ap"] == pytest.approx(want, rel=1e-9)


# --------------------------------------------------------------------------- other commands


def test_taxonomy_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["taxonomy"]) == 0
    out = capsys.readouterr().out
    assert "hate" in out and "profanity" in out


def test_datasets_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["datasets", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Q-A-MLL" in out and "not found" in out


def test_datasets_with_a_data_dir_that_does_not_exist_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["datasets", "--data-dir", str(tmp_path / "nonexistent")]) == 2
    err = capsys.readouterr().err
    assert f"--data-dir {tmp_path / 'nonexistent'}: no such folder" in err
    assert len(err.strip().splitlines()) == 1
    (tmp_path / "f.txt").write_text("x")
    assert main(["datasets", "--data-dir", str(tmp_path / "f.txt")]) == 2
    assert "is not a folder" in capsys.readouterr().err


# --------------------------------------------------------------------------- exit codes


def _dataset_file(tmp_path: Path) -> Path:
    p = tmp_path / "ds.jsonl"
    rows = [
        {"id": "a", "text": "one", "labels": ["hate"]},
        {"id": "b", "text": "two", "labels": ["violence", "hate"]},
        {"id": "c", "text": "three", "labels": []},
    ]
    write_jsonl(p, rows)
    return p


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    ds = str(_dataset_file(tmp_path))
    from toxeval.taxonomy import load_taxonomy

    ids = load_taxonomy("toxeval-15").ids
    good = {i: 0.1 for i in ids}
    malformed = tmp_path / "malformed.jsonl"
    malformed.write_text(
        json.dumps({"id": "a", "scores": good})
        + "\n"
        + json.dumps({"id": "b", "scores": good})
        + "\n{oops\n"
    )
    wrong_k = tmp_path / "wrong_k.jsonl"
    write_jsonl(wrong_k, [{"id": i, "scores": [0.1, 0.2]} for i in "abc"])
    unknown_cat = tmp_path / "unknown_cat.jsonl"
    write_jsonl(unknown_cat, [{"id": i, "scores": {**good, "spam": 0.3}} for i in "abc"])
    nan = tmp_path / "nan.jsonl"
    nan.write_text(
        "".join(json.dumps({"id": i, "scores": good}) + "\n" for i in "ab")
        + json.dumps({"id": "c", "scores": {**good, "hate": float("nan")}})
        + "\n"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    ok = tmp_path / "ok.jsonl"
    write_jsonl(ok, [{"id": i, "scores": good} for i in "abc"])
    return {
        "malformed": (["score", str(malformed), "--dataset", ds], "line 3"),
        "wrong_k": (["score", str(wrong_k), "--dataset", ds], "expected K=15"),
        "unknown_category": (["score", str(unknown_cat), "--dataset", ds], "'spam'"),
        "nan": (["score", str(nan), "--dataset", ds], "NaN"),
        "empty": (["score", str(empty), "--dataset", ds], "empty file"),
        "missing_dataset": (
            ["score", str(ok), "--dataset", "Q-A-MLL", "--data-dir", str(tmp_path)],
            "Q-A-MLL",
        ),
        "missing_predictions": (
            ["score", str(tmp_path / "nope.jsonl"), "--dataset", ds],
            "not found",
        ),
        "bad_format": (["score", str(ok), "--dataset", ds, "--format", "xml"], "invalid choice"),
        "no_dataset": (["score", str(ok)], "--dataset"),
        "bad_taxonomy": (["taxonomy", "no-such-taxonomy"], "unknown taxonomy"),
        "unknown_command": (["frobnicate"], "invalid choice"),
        "bad_threshold": (["score", str(ok), "--dataset", ds, "--threshold", "nan"], "threshold"),
        **_malformed_inputs(tmp_path, ds, ids),
    }


def _malformed_inputs(
    tmp_path: Path, ds: str, ids: tuple[str, ...]
) -> dict[str, tuple[list[str], str]]:
    """Malformed files that once reached the internal-error path (exit 1)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    k = len(ids)
    dupcol = tmp_path / "dupcol.csv"
    dupcol.write_text(
        f"id,{','.join(ids)},{ids[0]}\n" + "".join(f"{i}{',0.5' * (k + 1)}\n" for i in "abc")
    )
    ds_dupcol = tmp_path / "ds_dupcol.csv"
    ds_dupcol.write_text("id,text,labels,labels\na,x,hate,hate\n")
    nested = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"id": list("abc"), "scores": [[[0.5]] * k] * 3}), nested)
    ann_null = tmp_path / "ann_null.jsonl"
    ann_null.write_text('{"id": "a", "text": "x", "annotations": [null, ["hate"]]}\n')
    nonutf8 = tmp_path / "nonutf8.jsonl"
    nonutf8.write_bytes(b'{"id": "a", "text": "x\xff", "labels": ["hate"]}\n')
    good = jsonl_text([{"id": i, "labels": ["hate"]} for i in "abc"]).encode()
    trunc = tmp_path / "trunc.jsonl.gz"
    trunc.write_bytes(gzip.compress(good)[:30])
    notgz = tmp_path / "notgz.jsonl.gz"
    notgz.write_bytes(b"not gzip")
    hdr = f"{{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, {k}), }}".encode()
    hdr += b" " * (118 - len(hdr)) + b"\n"
    huge = tmp_path / "huge.npy"
    huge.write_bytes(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr + bytes(48))
    a_file = tmp_path / "a_file.txt"
    a_file.write_text("x")
    nope = str(tmp_path / "nope.jsonl")  # --out is checked before anything is read
    return {
        "dup_column_predictions": (["score", str(dupcol), "--dataset", ds], "dupcol.csv: column"),
        "dup_column_dataset": (["evaluate", "--dataset", str(ds_dupcol)], "ds_dupcol.csv: column"),
        "nested_parquet": (
            ["score", str(nested), "--dataset", ds],
            "nested.parquet: score vectors",
        ),
        "null_annotator": (["evaluate", "--dataset", str(ann_null)], "ann_null.jsonl: line 1"),
        "non_utf8_dataset": (["evaluate", "--dataset", str(nonutf8)], "nonutf8.jsonl: line 1"),
        "truncated_gzip": (["score", str(trunc), "--dataset", ds], "trunc.jsonl.gz: not a valid"),
        "not_gzip": (["score", str(notgz), "--dataset", ds], "notgz.jsonl.gz: not a valid gzip"),
        "npy_huge_header": (["score", str(huge), "--dataset", ds], "huge.npy: NPY: the header"),
        "out_is_a_file": (
            ["score", nope, "--dataset", ds, "--out", str(a_file)],
            "exists and is not a directory",
        ),
        "out_under_a_file": (
            ["score", nope, "--dataset", ds, "--out", str(a_file / "sub" / "dir")],
            "a_file.txt is not a directory",
        ),
        "min_annotators_without_at_least": (
            ["evaluate", "--min-annotators", "2"],
            "--min-annotators only applies with --rule at_least",
        ),
        # names the file system refuses (ENAMETOOLONG), not a failure of toxeval
        "out_name_too_long": (["evaluate", "--out", str(tmp_path / ("o" * 300))], "too long"),
        "dataset_name_too_long": (
            ["score", nope, "--dataset", str(tmp_path / ("d" * 300 + ".jsonl"))],
            "too long",
        ),
    }


CASES = [
    "malformed",
    "wrong_k",
    "unknown_category",
    "nan",
    "empty",
    "missing_dataset",
    "missing_predictions",
    "bad_format",
    "no_dataset",
    "bad_taxonomy",
    "unknown_command",
    "bad_threshold",
    "dup_column_predictions",
    "dup_column_dataset",
    "nested_parquet",
    "null_annotator",
    "non_utf8_dataset",
    "truncated_gzip",
    "not_gzip",
    "npy_huge_header",
    "out_is_a_file",
    "out_under_a_file",
    "min_annotators_without_at_least",
    "out_name_too_long",
    "dataset_name_too_long",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_exits_2_in_process(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, needle = _bad_inputs(tmp_path)[case]
    assert main(args) == 2
    err = capsys.readouterr().err
    _one_line_error(err)
    assert needle in err


@pytest.mark.parametrize("case", ["malformed", "wrong_k", "missing_dataset", "bad_format"])
def test_bad_input_exits_2_subprocess(case: str, tmp_path: Path) -> None:
    args, needle = _bad_inputs(tmp_path)[case]
    r = _run(*args)
    assert r.returncode == 2, r.stderr
    _one_line_error(r.stderr)
    assert needle in r.stderr


def test_lexicon_takes_row_selection_and_refuses_server_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The baseline runs in-process, but --limit and --sample still choose its rows; an
    # option only a model server takes is refused, never silently dropped.
    for args in (["--limit", "10"], ["--sample", "10", "--seed", "3"]):
        assert main(["evaluate", "--quiet", "--bootstrap", "0", *args]) == 0
        assert "(10 scored, 352 excluded)" in capsys.readouterr().out
    for args, flag in (
        (["--temperature", "0.5"], "--temperature"),
        (["--concurrency", "4"], "--concurrency"),
        (["--seed", "3"], "--seed"),
        (["--base-url", "http://127.0.0.1:9/v1"], "--base-url"),
        (["--dry-run"], "--dry-run"),
    ):
        assert main(["evaluate", "--quiet", *args]) == 2, args
        err = capsys.readouterr().err
        _one_line_error(err)
        assert flag in err


def test_mismatch_policy_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = str(_dataset_file(tmp_path))
    p = tmp_path / "p.jsonl"
    write_jsonl(p, [{"id": i, "labels": ["hate"]} for i in ("a", "b", "zz")])
    assert main(["score", str(p), "--dataset", ds]) == 2
    assert "not in the dataset ('zz')" in capsys.readouterr().err
    assert (
        main(
            [
                "score",
                str(p),
                "--dataset",
                ds,
                "--on-mismatch",
                "drop",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    doc = json.loads((tmp_path / "o" / "results.json").read_text())
    assert doc["counts"]["missing_prediction"] == 1
    assert doc["counts"]["unknown_ids_dropped"] == 1
    assert doc["system"]["unknown"]["first_ids"] == ["zz"]


def test_internal_error_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import toxeval.scoring

    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(toxeval.scoring, "evaluate", boom)
    monkeypatch.delenv("TOXEVAL_DEBUG", raising=False)
    assert main(["evaluate"]) == 1
    err = capsys.readouterr().err
    _one_line_error(err)
    assert "internal error: RuntimeError: boom" in err and "TOXEVAL_DEBUG=1" in err
    monkeypatch.setenv("TOXEVAL_DEBUG", "1")
    assert main(["evaluate"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_min_annotators_with_at_least_is_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "dir"  # created: its parent chain does not exist yet
    args = ["evaluate", "--rule", "at_least", "--min-annotators", "2", "-q", "--out", str(out)]
    assert main(args) == 0
    cfg = json.loads((out / "results.json").read_text())["config"]
    assert cfg["rule"] == "at_least" and cfg["min_annotators"] == 2
    assert main(["evaluate", "-q", "--out", str(out)]) == 0  # an existing directory is fine
    cfg = json.loads((out / "results.json").read_text())["config"]
    assert cfg["min_annotators"] == 1
    capsys.readouterr()


# --------------------------------------------------------------------------- options


def _score_run(tmp_path: Path, args: list[str], name: str = "out") -> dict[str, Any]:
    """``main([...])`` with ``--out`` and ``-q``; exit code 0; the parsed results.json."""
    out = tmp_path / name
    assert main([*args, "--out", str(out), "-q"]) == 0
    return dict(json.loads((out / "results.json").read_text()))


TOXEVAL_15 = [
    *("hate", "harassment", "violence", "self_harm", "sexual", "sexual_minors", "weapons"),
    *("drugs", "fraud", "cybercrime", "privacy", "crime", "extremism", "misinformation"),
    "profanity",
]


def _scored_problem(tmp_path: Path, n: int = 40) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    """A toxeval-15 dataset file with complete label lists and a score-vector dump."""
    rng = np.random.default_rng(17)
    k = len(TOXEVAL_15)
    y = (rng.random((n, k)) < 0.25).astype(int)
    s = np.round(np.clip(0.35 * y + rng.random((n, k)) * 0.6, 0, 1), 3)
    ds = write_jsonl(
        tmp_path / "ds.jsonl",
        [
            {
                "id": f"q{i}",
                "text": f"text {i}",
                "labels": [c for c, v in zip(TOXEVAL_15, y[i], strict=True) if v],
            }
            for i in range(n)
        ],
    )
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [
            {"id": f"q{i}", "scores": dict(zip(TOXEVAL_15, s[i].tolist(), strict=True))}
            for i in range(n)
        ],
    )
    return ds, preds, y, s


def test_score_threshold_option_sets_the_f1_threshold(tmp_path: Path) -> None:
    skm = pytest.importorskip("sklearn.metrics")  # the reference (not on Python 3.10)

    ds, preds, y, s = _scored_problem(tmp_path)
    doc = _score_run(tmp_path, ["score", str(preds), "--dataset", str(ds), "--threshold", "0.3"])
    assert doc["config"]["threshold"] == 0.3 and doc["figures"]["threshold"] == 0.3
    pred = (s >= 0.3).astype(int)
    want = skm.f1_score(y.ravel(), pred.ravel())
    assert doc["figures"]["micro_f1"] == pytest.approx(want, rel=1e-12)
    assert doc["figures"]["hamming_loss"] == pytest.approx(skm.hamming_loss(y, pred), rel=1e-12)
    # at the default threshold the figure is another number
    at_half = skm.f1_score(y.ravel(), (s >= 0.5).astype(int).ravel())
    assert abs(want - at_half) > 1e-3


def test_score_taxonomy_file_option(tmp_path: Path) -> None:
    import sklearn.metrics as skm

    tax = tmp_path / "greek.toml"
    tax.write_text(
        'name = "greek-3"\nversion = "2.0"\ndescription = "three test categories"\n'
        + "".join(
            f'\n[[category]]\nid = "{c}"\nname = "{c.title()}"\ndescription = "the {c} one"\n'
            for c in ("alpha", "beta", "gamma")
        )
    )
    y = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 0, 1], [0, 0, 0], [1, 0, 1]])
    s = np.array(
        [
            [0.9, 0.2, 0.1],
            [0.3, 0.7, 0.4],
            [0.6, 0.5, 0.5],
            [0.1, 0.1, 0.8],
            [0.2, 0.6, 0.3],
            [0.4, 0.3, 0.9],
        ]
    )
    ids = ("alpha", "beta", "gamma")
    ds = write_jsonl(
        tmp_path / "ds.jsonl",
        [
            {"id": f"r{i}", "text": "t", "labels": [c for c, v in zip(ids, y[i], strict=True) if v]}
            for i in range(6)
        ],
    )
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [{"id": f"r{i}", "scores": dict(zip(ids, s[i].tolist(), strict=True))} for i in range(6)],
    )
    doc = _score_run(tmp_path, ["score", str(preds), "--dataset", str(ds), "--taxonomy", str(tax)])
    assert doc["config"]["taxonomy"] == {
        "name": "greek-3",
        "version": "2.0",
        "k": 3,
        "ids": list(ids),
    }
    assert [r["id"] for r in doc["per_category"]] == list(ids)
    want = np.mean([skm.average_precision_score(y[:, k], s[:, k]) for k in range(3)])
    assert doc["figures"]["map"] == pytest.approx(want, rel=1e-12)
    assert doc["figures"]["label_ranking_loss"] == pytest.approx(
        skm.label_ranking_loss(y, s), rel=1e-12
    )


def test_evaluate_taxonomy_threshold_and_detector_options(tmp_path: Path) -> None:
    import sklearn.metrics as skm
    from toxeval.detectors import get_detector

    om8 = ["s", "h", "v", "hr", "sh", "s3", "h2", "v2"]  # docs/taxonomy.md
    texts = ["I will kill you", "hello there", "you are an idiot", "nice weather", "kill them all"]
    labels = [["v"], [], ["h"], [], ["v", "h"]]
    ds = write_jsonl(
        tmp_path / "ds.jsonl",
        [
            {"id": str(i), "text": t, "labels": lab}
            for i, (t, lab) in enumerate(zip(texts, labels, strict=True))
        ],
    )
    args = [
        "evaluate",
        "--dataset",
        str(ds),
        "--taxonomy",
        "openai-moderation-8",
        "--detector",
        "lexicon",
    ]
    doc = _score_run(tmp_path, [*args, "--threshold", "0.25"])
    assert doc["config"]["taxonomy"]["ids"] == om8
    assert doc["config"]["taxonomy"]["name"] == "openai-moderation-8"
    assert doc["config"]["detector"] == "lexicon" and doc["system"]["kind"] == "detector"
    assert doc["config"]["threshold"] == 0.25 and doc["figures"]["threshold"] == 0.25
    y = np.zeros((len(texts), len(om8)), dtype=int)
    for i, lab in enumerate(labels):
        for c in lab:
            y[i, om8.index(c)] = 1
    s = np.asarray(get_detector("lexicon", "openai-moderation-8").predict_scores(texts))
    for thr in (0.25, 0.9):
        if thr != 0.25:
            doc = _score_run(tmp_path, [*args, "--threshold", str(thr)], name="hi")
            assert doc["config"]["threshold"] == thr
        pred = (s >= thr).astype(int)
        want = skm.f1_score(y.ravel(), pred.ravel(), zero_division=0)
        assert doc["figures"]["micro_f1"] == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert main([*args, "--detector", "no-such-detector", "-q"]) == 2


def _raw_output_problem(tmp_path: Path) -> tuple[Path, Path, np.ndarray, np.ndarray, np.ndarray]:
    """Six rows; two model outputs are refusals (unparseable)."""
    labels = [["hate"], [], ["violence"], ["hate", "violence"], [], ["self_harm"]]
    outputs = [
        '["hate"]',
        "I can't help with that.",
        '{"violence": 0.8, "hate": 0.3}',
        '["hate"]',
        "I'm sorry, but I cannot answer.",
        '{"self_harm": 0.6, "violence": 0.2}',
    ]
    ds = write_jsonl(
        tmp_path / "ds.jsonl",
        [{"id": f"r{i}", "text": "t", "labels": lab} for i, lab in enumerate(labels)],
    )
    preds = write_jsonl(
        tmp_path / "outputs.jsonl", [{"id": f"r{i}", "output": o} for i, o in enumerate(outputs)]
    )
    k = len(TOXEVAL_15)
    y = np.zeros((6, k), dtype=int)
    for i, lab in enumerate(labels):
        for c in lab:
            y[i, TOXEVAL_15.index(c)] = 1
    s = np.zeros((6, k))
    for i, sc in {
        0: {"hate": 1.0},
        2: {"violence": 0.8, "hate": 0.3},
        3: {"hate": 1.0},
        5: {"self_harm": 0.6, "violence": 0.2},
    }.items():
        for c, v in sc.items():
            s[i, TOXEVAL_15.index(c)] = v
    parsed = np.array([True, False, True, True, False, True])
    return ds, preds, y, s, parsed


def test_score_parse_policy_exclude_leaves_unparseable_rows_out(tmp_path: Path) -> None:
    import sklearn.metrics as skm

    ds, preds, y, s, parsed = _raw_output_problem(tmp_path)
    base = ["score", str(preds), "--dataset", str(ds)]
    doc = _score_run(tmp_path, [*base, "--parse-policy", "exclude"])
    assert doc["config"]["parse_policy"] == "exclude" and doc["parse"]["policy"] == "exclude"
    assert doc["parse"]["status_counts"]["unparseable"] == 2
    assert doc["counts"]["excluded_by_parse_policy"] == 2 == doc["parse"]["excluded"]
    assert doc["counts"]["scored"] == 4 and doc["counts"]["excluded"] == 2
    want = skm.label_ranking_loss(y[parsed], s[parsed])
    assert doc["figures"]["label_ranking_loss"] == pytest.approx(want, rel=1e-12)
    # exclude is the default: an unreadable answer is not a "no"
    default = _score_run(tmp_path, base, name="default")
    assert default["config"]["parse_policy"] == "exclude"
    assert default["counts"] == doc["counts"] and default["figures"] == doc["figures"]
    # zeros, asked for, scores all six rows, the refusals as all-zero vectors, and says so
    doc = _score_run(tmp_path, [*base, "--parse-policy", "zeros"], name="zeros")
    assert doc["config"]["parse_policy"] == "zeros" and doc["parse"]["policy"] == "zeros"
    assert doc["counts"]["scored"] == 6 and doc["counts"]["excluded_by_parse_policy"] == 0
    assert any("2 unparseable outputs are scored as all-zero" in n for n in doc["notes"])
    assert doc["figures"]["label_ranking_loss"] == pytest.approx(
        skm.label_ranking_loss(y, s), rel=1e-12
    )


def test_score_parse_policy_error_fails_on_unparseable_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds, preds, *_ = _raw_output_problem(tmp_path)
    out = tmp_path / "o"
    args = ["score", str(preds), "--dataset", str(ds), "--parse-policy", "error", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    _one_line_error(err)
    assert "2 of 6 outputs are unparseable" in err and "id 'r1'" in err
    assert not (out / "results.json").exists()


def test_score_llama_guard_outputs_on_r_a_mll_with_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's ``toxeval score llm_outputs.jsonl --dataset R-A-MLL --mapping
    llama-guard-3`` on a small R-A-MLL-shaped file and raw Llama Guard outputs."""
    import sklearn.metrics as skm

    data = tmp_path / "data"
    data.mkdir()
    labels = [[], ["violence", "hate"], ["self_harm"], ["fraud"], ["hate"], [], ["violence"], []]
    write_jsonl(
        data / "R-A-MLL.jsonl",
        [
            {"id": f"x{i}", "text": f"prompt {i}", "response": f"response {i}", "labels": lab}
            for i, lab in enumerate(labels)
        ],
    )
    # Llama Guard 3 answers; the bare code lists and the JSON need the explicit mapping
    outputs = ["safe", "unsafe\nS1,S10", "S11", '{"S2": 0.9}', "S10", "safe", "unsafe\nS1", "S6"]
    monkeypatch.chdir(tmp_path)
    write_jsonl(
        tmp_path / "llm_outputs.jsonl",
        [{"id": f"x{i}", "output": o} for i, o in enumerate(outputs)],
    )
    monkeypatch.setenv("TOXEVAL_DATA_DIR", str(data))
    doc = _score_run(
        tmp_path,
        ["score", "llm_outputs.jsonl", "--dataset", "R-A-MLL", "--mapping", "llama-guard-3"],
    )
    assert doc["config"]["mapping"] == "llama-guard-3"
    assert doc["dataset"]["name"] == "R-A-MLL" and doc["dataset"]["level"] == "response"
    counts = doc["parse"]["status_counts"]
    # '{"S2": 0.9}' is a JSON object: it speaks for the five categories S2 maps to, the
    # other ten are unknown on that row (masked), so the row is partial
    assert counts["unparseable"] == 0 and counts["partial"] == 1
    assert counts["ok"] == 4 and counts["empty"] == 3  # safe, safe, S6 (maps to [])
    # docs/taxonomy.md: S1 violence, S2 crime/fraud/cybercrime/drugs/weapons, S10 hate,
    # S11 self_harm, S6 nothing
    codes = {
        "S1": {"violence": 1.0},
        "S2": {c: 0.9 for c in ("crime", "fraud", "cybercrime", "drugs", "weapons")},
        "S10": {"hate": 1.0},
        "S11": {"self_harm": 1.0},
    }
    given = [[], ["S1", "S10"], ["S11"], ["S2"], ["S10"], [], ["S1"], []]
    k = len(TOXEVAL_15)
    y, s = np.zeros((8, k), dtype=int), np.zeros((8, k))
    for i in range(8):
        for c in labels[i]:
            y[i, TOXEVAL_15.index(c)] = 1
        for code in given[i]:
            for c, v in codes[code].items():
                s[i, TOXEVAL_15.index(c)] = v
    with_pos = [j for j in range(k) if y[:, j].any()]
    want_map = np.mean([skm.average_precision_score(y[:, j], s[:, j]) for j in with_pos])
    assert doc["figures"]["map"] == pytest.approx(want_map, rel=1e-12)
    # label ranking loss per row on its known cells: row 3 knows only the S2 categories
    known = np.ones((8, k), dtype=bool)
    known[3] = s[3] > 0
    per_row = [
        skm.label_ranking_loss(y[i : i + 1, known[i]], s[i : i + 1, known[i]]) for i in range(8)
    ]
    assert doc["figures"]["label_ranking_loss"] == pytest.approx(np.mean(per_row), rel=1e-12)


def test_score_format_option_reads_a_file_the_extension_does_not_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sklearn.metrics as skm

    ds, preds, y, s = _scored_problem(tmp_path, n=12)
    txt = tmp_path / "preds.txt"
    txt.write_bytes(preds.read_bytes())
    assert main(["score", str(txt), "--dataset", str(ds), "-q"]) == 2  # auto cannot tell
    assert "pass format= (--format)" in capsys.readouterr().err
    doc = _score_run(tmp_path, ["score", str(txt), "--dataset", str(ds), "--format", "jsonl"])
    assert doc["config"]["format"] == "jsonl" and doc["system"]["format"] == "jsonl"
    assert doc["counts"]["scored"] == 12
    assert doc["figures"]["label_ranking_loss"] == pytest.approx(
        skm.label_ranking_loss(y, s), rel=1e-12
    )


def test_version_option(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code in (0, None)
    assert capsys.readouterr().out == f"toxeval {version('toxeval')}\n"


def test_quiet_line_says_n_a_for_an_undefined_figure(
    tmp_path: Path, alias_taxonomy_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # no category has a known positive: mAP is undefined; the quiet line printed "nan"
    # where every other output says n/a
    rows = [
        {"id": f"r{i}", "text": "t", "labels": {"alpha": 0, "beta": 0, "gamma": None}}
        for i in range(6)
    ]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"id": r["id"], "scores": {"alpha": i / 10, "beta": 0.5, "gamma": 0.2}}
            for i, r in enumerate(rows)
        ],
    )
    args = ["score", str(preds), "--dataset", str(data), "--taxonomy", str(alias_taxonomy_file)]
    assert main([*args, "-q", "--bootstrap", "20"]) == 0
    line = capsys.readouterr().out
    assert line.startswith("mAP n/a  label ranking loss 0.0000") and "nan" not in line


def test_python_dash_m_toxeval_is_the_command() -> None:
    # `python -m toxeval` said "No module named toxeval.__main__"
    got = subprocess.run(
        [sys.executable, "-m", "toxeval", "--version"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    want = _run("--version")
    assert got.returncode == want.returncode == 0, got.stderr
    assert got.stdout == want.stdout and got.stdout.strip()


def test_a_sample_larger_than_the_dataset_runs_every_row_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["evaluate", "--sample", "1000", "--bootstrap", "0", "--out", str(out)]) == 0
    note = "--sample 1000 asks for more rows than the dataset has (362): all 362 rows are run"
    assert note in " ".join(capsys.readouterr().out.split())
    assert note in (out / "report.md").read_text(encoding="utf-8")
    assert any(note in n for n in json.loads((out / "results.json").read_text())["notes"])
    run = tmp_path / "run.jsonl"
    lexicon = ["--dataset", "demo", "--detector", "lexicon"]
    assert main(["predict", *lexicon, "--sample", "1000", "--out", str(run)]) == 0
    assert f"toxeval: note: {note}" in capsys.readouterr().err
    # a sample smaller than the dataset is what was asked: no note
    assert main(["predict", *lexicon, "--sample", "10", "--out", str(tmp_path / "r10.jsonl")]) == 0
    assert "note" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["evaluate", "score"])
def test_out_help_names_every_file_written_including_what_compare_reads(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "--out DIR write results.json, report.md, per_category.csv and scored_rows.parquet "
        "(the scored rows: what 'toxeval compare' reads) into DIR"
    ) in text


def test_moderation_categories_without_scores_are_not_called_unknown_labels(
    fake_openai: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """openai-moderation on the demo set scores 8 of toxeval-15's categories; the other 7
    have known positives (16 to 28) that the system gives no score for. Those were shown
    as 'n/a (no known positive)' with every cell in 'unknown', the column of the dataset's
    unknown labels."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "out"
    args = ["evaluate", "--dataset", "demo", "--detector", "openai-moderation"]
    assert main([*args, "--base-url", fake_openai.url, "--out", str(out), "--html"]) == 0
    shown = capsys.readouterr().out
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    ds = toxeval.load_dataset()
    by_id = {c["id"]: c for c in doc["per_category"]}
    unscored = ["drugs", "fraud", "cybercrime", "privacy", "extremism", "misinformation",
                "profanity"]  # fmt: skip
    assert sorted(doc["excluded_categories"]) == sorted(unscored)
    for cid in unscored:
        k = ds.taxonomy.ids.index(cid)
        known = ds.mask[:, k]
        c = by_id[cid]
        assert c["ap_undefined_reason"] == "no score from the system", cid
        assert c["unknown"] == int((~known).sum())  # the dataset's own unknown labels
        assert c["no_score"] == int(known.sum())  # every known label, unscored
        assert c["support"] == c["negatives"] == 0
        assert 16 <= int((ds.y_true[known, k] == 1).sum()) <= 28
    hate = by_id["hate"]
    assert hate["no_score"] == 0 and hate["ap_undefined_reason"] is None
    assert hate["unknown"] == int((~ds.mask[:, ds.taxonomy.ids.index("hate")]).sum())
    assert doc["counts"]["no_score_cells"] == sum(c["no_score"] for c in doc["per_category"])
    assert doc["counts"]["unknown_cells"] == sum(c["unknown"] for c in doc["per_category"])
    notes = " ".join(doc["notes"])
    assert "the system gives no score for their known positives: drugs (" in notes
    assert "no known positive among the scored rows" not in notes
    assert f"{doc['counts']['no_score_cells']} known labels have no score from the system" in notes
    assert "one class only: drugs" not in notes
    # every output tells the two apart
    header = next(line for line in shown.splitlines() if line.startswith("category"))
    assert header.split()[-4:] == ["negatives", "unknown", "no", "score"]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| unknown | no score | in mAP |" in md
    assert "Excluded from mAP and macro F1: no score from the system: drugs" in md
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("n/a (no score from the system)") == len(unscored)  # the AP bars
    assert "n/a (no known positive)" not in page
    rows = list(csv.DictReader(io.StringIO((out / "per_category.csv").read_text())))
    assert {r["id"]: r["ap_undefined_reason"] for r in rows}["drugs"] == "no score from the system"
