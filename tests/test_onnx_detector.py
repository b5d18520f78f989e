"""The ``onnx:DIR`` detector (toxeval.classifiers): an ONNX sequence classifier built in
the test (tiny_models.py: onnx.helper graph, WordLevel tokenizer.json, config.json) is
run through ``toxeval.llm.predict``, ``toxeval.evaluate`` and the CLI; its scores equal
the NumPy forward pass, mapped onto the taxonomy (max over labels, unmapped categories
unknown), truncation is counted, reruns resume, and bad model directories are one clear
error (exit 2)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

import toxeval
from helpers import CliRun, make_dataset
from tiny_models import TinyModel, build_model
from toxeval.classifiers.heads import probabilities
from toxeval.classifiers.label_map import column_map
from toxeval.classifiers.model_dir import read_model_config
from toxeval.llm import predict
from toxeval.llm.runfile import read_run
from toxeval.taxonomy import list_mappings, load_mapping, load_taxonomy

ORIGINAL = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")
UNBIASED = (
    "toxicity",
    "severe_toxicity",
    "obscene",
    "identity_attack",
    "insult",
    "threat",
    "sexual_explicit",
    "male",
    "female",
    "homosexual_gay_or_lesbian",
    "christian",
    "jewish",
    "muslim",
    "black",
    "white",
    "psychiatric_or_mental_illness",
)
TEXTS = [
    "you are an idiot",
    "nice day the weather is lovely",
    "i will kill them all",
    "hello world",
    "stupid people should die",
    "zzz words the model never saw",
]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    return build_model(tmp_path_factory.mktemp("onnx") / "toxic-bert")


def _dataset(texts: list[str], taxonomy: str = "toxeval-15") -> Any:
    tax = load_taxonomy(taxonomy)
    y = np.zeros((len(texts), tax.k), dtype=np.int8)
    y[:, 0] = [i % 2 for i in range(len(texts))]
    y[:, 1] = [(i + 1) % 2 for i in range(len(texts))]
    return dataclasses.replace(make_dataset(y, taxonomy=tax), texts=list(texts))


def _run_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def _expected(model: TinyModel, texts: list[str], taxonomy: str, mapping: str) -> np.ndarray:
    """The NumPy forward pass mapped by hand: each category the max of its labels."""
    tax = load_taxonomy(taxonomy)
    m = load_mapping(mapping)
    probs = model.forward(texts)
    out = np.full((len(texts), tax.k), np.nan)
    for j, lab in enumerate(model.labels):
        for cid in m.map(lab) or ():
            k = tax.index(cid)
            out[:, k] = np.fmax(out[:, k], probs[:, j])
    return out


def test_scores_equal_numpy_forward_pass(model: TinyModel, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    summary = predict(_dataset(TEXTS), f"onnx:{model.path}", run)
    assert (summary.written, summary.ok, summary.truncated) == (len(TEXTS), len(TEXTS), 0)
    expected = _expected(model, TEXTS, "toxeval-15", "detoxify-original")
    tax = load_taxonomy("toxeval-15")
    rows = _run_rows(run)
    got = np.array(
        [[np.nan if r["scores"][c] is None else r["scores"][c] for c in tax.ids] for r in rows]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    # threat maps to harassment and violence, insult to harassment: harassment is their max
    probs = model.forward(TEXTS)
    np.testing.assert_allclose(
        got[:, tax.index("harassment")], np.maximum(probs[:, 3], probs[:, 4]), rtol=1e-6
    )
    # categories no Detoxify label speaks to are unknown (null), never 0
    assert all(r["scores"]["self_harm"] is None for r in rows)
    assert all(r["graded"] and r["truncated"] is False for r in rows)
    head = json.loads(run.read_text().splitlines()[0])["fingerprint"]
    assert head["mapping"]["name"] == "detoxify-original"
    assert len(head["model"]["files"]["graph"]) == 64


def test_softmax_head_for_single_label_models(tmp_path: Path) -> None:
    m = build_model(tmp_path / "m", ("hate", "harassment", "violence"), problem_type=None, seed=3)
    assert read_model_config(m.path).head == "softmax"  # transformers' rule: >1 label
    run = tmp_path / "run.jsonl"
    predict(_dataset(TEXTS), f"onnx:{m.path}", run)  # labels are taxonomy ids: identity map
    rows = _run_rows(run)
    got = np.array([[r["scores"][c] for c in ("hate", "harassment", "violence")] for r in rows])
    np.testing.assert_allclose(got, m.forward(TEXTS), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-6)
    head = json.loads(run.read_text().splitlines()[0])["fingerprint"]
    assert head["mapping"]["name"] == "taxonomy:toxeval-15"


def test_heads_are_stable_for_large_logits() -> None:
    x = np.array([[-800.0, 0.0, 800.0]])
    np.testing.assert_allclose(probabilities(x, "sigmoid"), [[0.0, 0.5, 1.0]])
    np.testing.assert_allclose(probabilities(x, "softmax"), [[0.0, 0.0, 1.0]])


def test_long_texts_are_truncated_and_counted(model: TinyModel, tmp_path: Path) -> None:
    long = "you are an idiot " * 20  # 80 words, the model keeps 16 tokens
    texts = [long, "hello world", long + "kill"]
    run = tmp_path / "run.jsonl"
    summary = predict(_dataset(texts), f"onnx:{model.path}", run)
    assert summary.truncated == 2
    assert "2 truncated" in summary.line()
    rows = _run_rows(run)
    assert [r["truncated"] for r in rows] == [True, False, True]
    assert rows[0]["parse_reason"] == "truncated to the model's 16 tokens"
    expected = _expected(model, texts, "toxeval-15", "detoxify-original")
    got = np.array([rows[i]["scores"]["profanity"] for i in range(3)])
    np.testing.assert_allclose(got, expected[:, load_taxonomy().index("profanity")], rtol=1e-6)
    result = toxeval.evaluate(_dataset(texts), f"onnx:{model.path}", bootstrap=0)
    assert result.to_dict()["system"]["rows"]["truncated"] == 2
    assert any("2 scored rows were longer than the model's token limit" in n for n in result.notes)


def test_max_length_option_cuts_earlier(model: TinyModel, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    summary = predict(_dataset(TEXTS), f"onnx:{model.path}", run, max_length=4)
    # [CLS] two words [SEP]: every text of more than two words is cut
    assert summary.truncated == sum(len(t.split()) > 2 for t in TEXTS)


def test_batches_do_not_change_scores(model: TinyModel, tmp_path: Path) -> None:
    texts = [" ".join(["hate"] * (i % 9 + 1)) + " you" for i in range(70)]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    predict(_dataset(texts), f"onnx:{model.path}", a, batch_size=1, threads=1)
    predict(_dataset(texts), f"onnx:{model.path}", b, batch_size=32, threads=2)
    for ra, rb in zip(_run_rows(a), _run_rows(b), strict=True):
        assert ra["request_hash"] == rb["request_hash"]  # batch size and threads: not in it
        assert ra["scores"]["hate"] == pytest.approx(rb["scores"]["hate"], rel=1e-6)


def test_rerun_resumes_and_a_new_mapping_asks_again(model: TinyModel, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    ds = _dataset(TEXTS)
    predict(ds, f"onnx:{model.path}", run)
    again = predict(ds, f"onnx:{model.path}", run)
    assert (again.written, again.skipped) == (0, len(TEXTS))
    mapping = tmp_path / "mine.toml"
    mapping.write_text(
        'name = "mine"\ntarget = "toxeval-15"\n[map]\ntoxic = ["harassment"]\n'
        "severe_toxic = []\nobscene = []\nthreat = []\ninsult = []\nidentity_hate = []\n"
    )
    third = predict(ds, f"onnx:{model.path}", run, mapping=mapping)
    assert third.written == len(TEXTS)
    rows = _run_rows(run)[-len(TEXTS) :]
    probs = model.forward(TEXTS)
    np.testing.assert_allclose([r["scores"]["harassment"] for r in rows], probs[:, 0], rtol=1e-6)
    assert all(r["scores"]["hate"] is None for r in rows)
    assert read_run(run).rows == 2 * len(TEXTS)  # the rerun wrote nothing


def test_evaluate_on_the_demo_set(
    model: TinyModel, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    out = tmp_path / "out"
    got = cli(
        "evaluate", "--detector", f"onnx:{model.path}", "--out", str(out), "-q", "--bootstrap", "0"
    )
    assert got.returncode == 0, got.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["system"]["fingerprint"]["mapping"]["name"] == "detoxify-original"
    assert res["system"]["rows"]["scored"] == 362
    assert res["binary_scores"] is False
    assert "self_harm" in res["excluded_categories"]  # unknown for every row: not in mAP
    again = cli(
        "predict",
        "--dataset",
        "demo",
        "--detector",
        f"onnx:{model.path}",
        "--out",
        str(out / "run.jsonl"),
        "-q",
    )
    assert again.returncode == 0 and "(362 already done)" in again.stdout


def test_api_evaluate_matches_the_run_file(model: TinyModel) -> None:
    ds = _dataset(TEXTS)
    result = toxeval.evaluate(ds, f"onnx:{model.path}", bootstrap=0)
    assert result.to_dict()["system"]["detector"] == f"onnx:{model.path}"


def test_moderation_set(
    model: TinyModel, shared_data: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    out = tmp_path / "out"
    got = cli(
        "evaluate",
        "--dataset",
        "openai-moderation",
        "--data-dir",
        str(shared_data),
        "--detector",
        f"onnx:{model.path}",
        "--out",
        str(out),
        "-q",
        "--bootstrap",
        "0",
    )
    assert got.returncode == 0, got.stderr
    res = json.loads((out / "results.json").read_text())
    fp = res["system"]["fingerprint"]
    assert fp["mapping"]["name"] == "detoxify-original-openai-moderation-8"
    assert res["system"]["rows"]["scored"] == 1680


# --- mappings -------------------------------------------------------------------------


def test_shipped_mappings_are_listed_and_load() -> None:
    names = set(list_mappings())
    for base in ("detoxify-original", "detoxify-unbiased", "detoxify-multilingual"):
        assert {base, f"{base}-openai-moderation-8"} <= names
        load_mapping(base)
        load_mapping(f"{base}-openai-moderation-8")


@pytest.mark.parametrize(
    ("labels", "taxonomy", "name"),
    [
        (ORIGINAL, "toxeval-15", "detoxify-original"),
        (UNBIASED, "toxeval-15", "detoxify-unbiased"),
        (UNBIASED[:7], "toxeval-15", "detoxify-multilingual"),
        (ORIGINAL, "openai-moderation-8", "detoxify-original-openai-moderation-8"),
        (UNBIASED[:7], "openai-moderation-8", "detoxify-multilingual-openai-moderation-8"),
    ],
)
def test_the_shipped_mapping_is_picked_by_labels(
    labels: tuple[str, ...], taxonomy: str, name: str
) -> None:
    cm = column_map(labels, load_taxonomy(taxonomy), None)
    assert cm.name == name
    assert cm.unmapped  # some categories stay unknown


def test_taxonomy_command_lists_mappings(cli: Callable[..., CliRun]) -> None:
    got = cli("taxonomy")
    assert got.returncode == 0 and "detoxify-unbiased" in got.stdout


# --- bad input ------------------------------------------------------------------------


def _fails(cli: Callable[..., CliRun], *args: str) -> str:
    got = cli("predict", "--dataset", "demo", "--out", "/dev/null/never", *args)
    assert got.returncode == 2, got.stderr
    assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr
    return got.stderr


def test_unmappable_labels(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    m = build_model(tmp_path / "m", ("spam", "ham"))
    err = _fails(cli, "--detector", f"onnx:{m.path}")
    assert "no shipped mapping" in err and "spam, ham" in err
    err = _fails(cli, "--detector", f"onnx:{m.path}", "--mapping", "detoxify-original")
    assert "no entry for the model's label(s) 'spam', 'ham'" in err


def test_mapping_for_another_taxonomy(model: TinyModel, cli: Callable[..., CliRun]) -> None:
    err = _fails(
        cli,
        "--detector",
        f"onnx:{model.path}",
        "--mapping",
        "detoxify-original-openai-moderation-8",
    )
    assert "pick a mapping for 'toxeval-15'" in err


def test_missing_tokenizer(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    m = build_model(tmp_path / "m", tokenizer=False)
    assert "no tokenizer.json" in _fails(cli, "--detector", f"onnx:{m.path}")


def test_missing_directory_and_config(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    assert "does not exist" in _fails(cli, "--detector", f"onnx:{tmp_path / 'nope'}")
    (tmp_path / "empty").mkdir()
    assert "no config.json" in _fails(cli, "--detector", f"onnx:{tmp_path / 'empty'}")


def test_wrong_onnx_input_names(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    m = build_model(tmp_path / "m", input_names=("ids", "mask"))
    err = _fails(cli, "--detector", f"onnx:{m.path}")
    assert "the graph's inputs are ids, mask" in err


def test_id2label_disagrees_with_output_width(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    m = build_model(tmp_path / "m", n_out=4)
    err = _fails(cli, "--detector", f"onnx:{m.path}")
    assert "id2label names 6 labels" in err


def test_regression_head_and_bad_config(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    m = build_model(tmp_path / "m", problem_type="regression")
    assert "gives no probabilities" in _fails(cli, "--detector", f"onnx:{m.path}")
    (m.path / "config.json").write_text('{"id2label": {"0": "a", "2": "b"}}')
    assert "id2label keys must be 0..1" in _fails(cli, "--detector", f"onnx:{m.path}")
    (m.path / "config.json").write_text("{not json")
    assert "not valid JSON" in _fails(cli, "--detector", f"onnx:{m.path}")


def test_not_an_onnx_graph(model: TinyModel, tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    d = tmp_path / "m"
    d.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (d / name).write_bytes((model.path / name).read_bytes())
    (d / "model.onnx").write_bytes(b"not a graph")
    assert "ONNX Runtime cannot load it" in _fails(cli, "--detector", f"onnx:{d}")


def test_option_checks(model: TinyModel, cli: Callable[..., CliRun]) -> None:
    assert "--threads" in _fails(cli, "--detector", "lexicon", "--threads", "2")
    assert "batch_size must be an integer >= 1" in _fails(
        cli, "--detector", f"onnx:{model.path}", "--batch-size", "0"
    )
    assert "--device applies to hf:" in _fails(
        cli, "--detector", f"onnx:{model.path}", "--device", "cpu"
    )
    assert "--dtype applies to hf:" in _fails(
        cli, "--detector", f"onnx:{model.path}", "--dtype", "float16"
    )
    assert "give the model directory" in _fails(cli, "--detector", "onnx:")


def test_missing_extra_names_it(
    model: TinyModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., CliRun]
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if absent
    err = _fails(cli, "--detector", f"onnx:{model.path}")
    assert 'pip install "toxeval[onnx]"' in err


def test_length_batches_respect_rows_and_padded_tokens() -> None:
    from toxeval.classifiers.batching import Encoded, length_batches

    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 300, size=500)
    enc = Encoded(
        ids=[[7] * int(n) for n in lengths],
        type_ids=[[0] * int(n) for n in lengths],
        lengths=lengths,
        truncated=np.zeros(500, dtype=bool),
    )
    seen = []
    for b in length_batches(enc, 32, 0, batch_tokens=512):
        assert len(b.rows) <= 32
        assert len(b.rows) == 1 or b.input_ids.size <= 512
        assert (b.attention_mask.sum(axis=1) == lengths[b.rows]).all()
        seen += b.rows.tolist()
    assert sorted(seen) == list(range(500))


def test_runtime_failure_is_one_clear_error(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    from tiny_models import write_tokenizer

    m = build_model(tmp_path / "m")
    # a tokenizer whose ids run past the graph's embedding table
    write_tokenizer(m.path / "tokenizer.json", {**m.vocab, "you": len(m.vocab) + 50})
    got = cli("predict", "--dataset", "demo", "--detector", f"onnx:{m.path}", "--out",
              str(tmp_path / "run.jsonl"), "-q")  # fmt: skip
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "ONNX Runtime failed on a batch" in got.stderr


def test_a_session_that_cannot_start_names_the_thread_count(
    model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ONNX Runtime answers a --threads it cannot start (1e9) with a bare std::bad_alloc
    # while loading the graph: the message must not blame the graph alone
    import onnxruntime
    from toxeval.classifiers.model_dir import ModelDirError
    from toxeval.classifiers.onnx_runner import OnnxClassifier
    from toxeval.classifiers.options import ModelOptions

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("std::bad_alloc")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)
    with pytest.raises(ModelDirError, match=r"with 1000000000 threads \(--threads\): std::bad"):
        OnnxClassifier(model.path, ModelOptions(threads=1_000_000_000), "onnx:m")


def test_session_threads_do_not_spin(model: TinyModel) -> None:
    # spinning intra-op threads halve the throughput on a machine whose cores are busy
    # with other work (benches/bench_onnx.py): the session must be created without them
    from toxeval.classifiers.onnx_runner import OnnxClassifier
    from toxeval.classifiers.options import ModelOptions

    clf = OnnxClassifier(model.path, ModelOptions(threads=2), "onnx:m")
    so = clf.session.get_session_options()
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert (so.intra_op_num_threads, so.inter_op_num_threads) == (2, 1)
