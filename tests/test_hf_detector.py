"""The ``hf:DIR`` detector (toxeval.classifiers.hf_runner): without transformers or torch
it is one clear error naming ``toxeval[hf]`` (exit 2); with both, transformers models
with random weights saved in the test (a multi-label BERT and a single-label RoBERTa,
a WordLevel tokenizer.json wrapped by PreTrainedTokenizerFast, nothing downloaded) score
as the model's own direct forward pass, one text at a time, mapped onto the taxonomy
(unmapped categories unknown); truncation is counted, reruns resume, the fingerprint
holds the weights' sha256 and the mapping, and bad model directories, a CUDA device or
half precision asked for on a CPU are one clear error (exit 2). The tests that need torch
are skipped, saying so, where it is not installed (CI does not install it)."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import CliRun, make_dataset
from toxeval.taxonomy import load_mapping, load_taxonomy

HAVE_HF = all(importlib.util.find_spec(m) is not None for m in ("transformers", "torch"))
needs_hf = pytest.mark.skipif(
    not HAVE_HF, reason="transformers and torch are not installed (toxeval[hf])"
)

ORIGINAL = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")
TEXTS = [
    "you are an idiot",
    "nice day the weather is lovely",
    "i will kill them all",
    "hello world",
    "stupid people should die",
    "zzz words the model never saw",
]
#: BERT's position limit in the tiny models: texts of more than 14 words are cut
MAX_POSITIONS = 16


def _dataset(texts: list[str], taxonomy: str = "toxeval-15") -> Any:
    tax = load_taxonomy(taxonomy)
    y = np.zeros((len(texts), tax.k), dtype=np.int8)
    y[:, 0] = [i % 2 for i in range(len(texts))]
    y[:, 1] = [(i + 1) % 2 for i in range(len(texts))]
    return dataclasses.replace(make_dataset(y, taxonomy=tax), texts=list(texts))


def _run_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def _build(
    d: Path,
    labels: tuple[str, ...] = ORIGINAL,
    *,
    model_type: str = "bert",
    problem_type: str | None = "multi_label_classification",
    seed: int = 0,
) -> Path:
    """A transformers sequence classifier with random weights and its fast tokenizer,
    written by ``save_pretrained`` to ``d``."""
    import torch
    import transformers
    from tiny_models import WORDS, write_tokenizer

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    common: dict[str, Any] = {
        "vocab_size": len(vocab),
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "num_labels": len(labels),
        "id2label": dict(enumerate(labels)),
        "label2id": {lab: i for i, lab in enumerate(labels)},
        "problem_type": problem_type,
        "pad_token_id": 0,
        # transformers' 0.02 gives logits near 0 (every probability near 0.5)
        "initializer_range": 0.5,
    }
    if model_type == "bert":
        config: Any = transformers.BertConfig(max_position_embeddings=MAX_POSITIONS, **common)
        cls: Any = transformers.BertForSequenceClassification
    else:  # RoBERTa: position ids start after the padding id, two positions unusable
        config = transformers.RobertaConfig(
            max_position_embeddings=MAX_POSITIONS + 2, type_vocab_size=1, **common
        )
        cls = transformers.RobertaForSequenceClassification
    torch.manual_seed(seed)
    model = cls(config).eval()
    model.save_pretrained(d)
    write_tokenizer(d / "tokenizer.json", vocab)
    transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(d / "tokenizer.json"), pad_token="[PAD]", unk_token="[UNK]"
    ).save_pretrained(d)
    return d


def _forward(d: Path, texts: list[str], softmax: bool = False) -> np.ndarray:
    """Probabilities of the model in ``d``: transformers' own tokenizer call and one
    forward pass per text (no batching, no padding), sigmoid or softmax in float64."""
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(d, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        d, local_files_only=True
    ).float()
    out = []
    with torch.inference_mode():
        for text in texts:
            enc = tok(text, return_tensors="pt", truncation=True, max_length=MAX_POSITIONS)
            logits = model(**enc).logits[0].double()
            probs = torch.softmax(logits, dim=0) if softmax else torch.sigmoid(logits)
            out.append(probs.numpy())
    return np.array(out)


def _expected(probs: np.ndarray, labels: tuple[str, ...], mapping: str) -> np.ndarray:
    """Model probabilities mapped by hand: each category the max of its labels."""
    tax = load_taxonomy("toxeval-15")
    m = load_mapping(mapping)
    out = np.full((len(probs), tax.k), np.nan)
    for j, lab in enumerate(labels):
        for cid in m.map(lab) or ():
            k = tax.index(cid)
            out[:, k] = np.fmax(out[:, k], probs[:, j])
    return out


def _fails(cli: Callable[..., CliRun], *args: str) -> str:
    got = cli("predict", "--dataset", "demo", "--out", "/dev/null/never", *args)
    assert got.returncode == 2, got.stderr
    assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr, got.stderr
    return got.stderr


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not HAVE_HF:
        pytest.skip("transformers and torch are not installed (toxeval[hf])")
    return _build(tmp_path_factory.mktemp("hf") / "toxic-bert")


# --- without torch ---------------------------------------------------------------------


def test_missing_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., CliRun]
) -> None:
    import sys

    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"id2label": {"0": "toxic"}}))
    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    got = cli("predict", "--dataset", "demo", "--detector", f"hf:{d}", "--out", str(d / "r"))
    assert got.returncode == 2
    assert 'pip install "toxeval[hf]"' in got.stderr and "Traceback" not in got.stderr


def test_threads_is_an_onnx_option(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    got = cli(
        "predict", "--dataset", "demo", "--detector", f"hf:{tmp_path}", "--out",
        str(tmp_path / "r"), "--threads", "2",
    )  # fmt: skip
    assert got.returncode == 2
    assert "--threads applies to onnx:" in got.stderr or "toxeval[hf]" in got.stderr


def test_dtype_is_a_local_classifier_option(cli: Callable[..., CliRun]) -> None:
    err = _fails(cli, "--detector", "lexicon", "--dtype", "float16")
    assert "--dtype" in err and "local classifiers" in err
    got = cli("predict", "--dataset", "demo", "--detector", "lexicon", "--dtype", "fp8")
    assert got.returncode == 2 and "invalid choice: 'fp8'" in got.stderr


# --- with transformers and torch ------------------------------------------------------


@needs_hf
def test_scores_equal_the_direct_forward_pass(bert: Path, tmp_path: Path) -> None:
    from toxeval.llm import predict

    run = tmp_path / "run.jsonl"
    summary = predict(_dataset(TEXTS), f"hf:{bert}", run, device="cpu")
    assert (summary.written, summary.ok, summary.truncated) == (len(TEXTS), len(TEXTS), 0)
    probs = _forward(bert, TEXTS)
    assert probs.min() < 0.2 and probs.max() > 0.8  # graded scores, not all near 0.5
    expected = _expected(probs, ORIGINAL, "detoxify-original")
    tax = load_taxonomy("toxeval-15")
    rows = _run_rows(run)
    got = np.array(
        [[np.nan if r["scores"][c] is None else r["scores"][c] for c in tax.ids] for r in rows]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # threat maps to harassment and violence, insult to harassment: harassment is their max
    np.testing.assert_allclose(
        got[:, tax.index("harassment")], np.maximum(probs[:, 3], probs[:, 4]), rtol=1e-5
    )
    # categories no Detoxify label speaks to are unknown (null), never 0
    assert all(r["scores"]["self_harm"] is None for r in rows)
    assert all(r["graded"] and r["truncated"] is False for r in rows)
    fp = json.loads(run.read_text().splitlines()[0])["fingerprint"]
    weights = hashlib.sha256((bert / "model.safetensors").read_bytes()).hexdigest()
    assert fp["model"]["files"]["model.safetensors"] == weights
    assert {"config.json", "tokenizer.json"} <= set(fp["model"]["files"])
    assert (fp["model"]["head"], fp["model"]["dtype"]) == ("sigmoid", "float32")
    assert fp["mapping"]["name"] == "detoxify-original"
    assert fp["runtime"].startswith("transformers ") and ", torch " in fp["runtime"]


@needs_hf
def test_single_label_roberta_is_a_softmax(tmp_path: Path) -> None:
    from toxeval.llm import predict

    labels = ("hate", "harassment", "violence")  # taxonomy ids: the identity mapping
    d = _build(tmp_path / "roberta", labels, model_type="roberta", problem_type=None, seed=3)
    run = tmp_path / "run.jsonl"
    predict(_dataset(TEXTS), f"hf:{d}", run, batch_size=4)
    rows = _run_rows(run)
    got = np.array([[r["scores"][c] for c in labels] for r in rows])
    np.testing.assert_allclose(got, _forward(d, TEXTS, softmax=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-9)
    fp = json.loads(run.read_text().splitlines()[0])["fingerprint"]
    assert fp["model"]["head"] == "softmax" and fp["model"]["max_length"] == MAX_POSITIONS
    assert fp["mapping"]["name"] == "taxonomy:toxeval-15"


@needs_hf
def test_long_texts_are_truncated_and_counted(bert: Path, tmp_path: Path) -> None:
    from toxeval.llm import predict

    long = "you are an idiot " * 20  # 80 words, the model keeps 16 tokens
    texts = [long, "hello world", long + "kill"]
    run = tmp_path / "run.jsonl"
    summary = predict(_dataset(texts), f"hf:{bert}", run)
    assert summary.truncated == 2 and "2 truncated" in summary.line()
    rows = _run_rows(run)
    assert [r["truncated"] for r in rows] == [True, False, True]
    assert rows[0]["parse_reason"] == f"truncated to the model's {MAX_POSITIONS} tokens"
    expected = _expected(_forward(bert, texts), ORIGINAL, "detoxify-original")
    got = np.array([r["scores"]["profanity"] for r in rows])
    np.testing.assert_allclose(got, expected[:, load_taxonomy().index("profanity")], rtol=1e-5)


@needs_hf
def test_batches_do_not_change_scores_and_reruns_resume(bert: Path, tmp_path: Path) -> None:
    from toxeval.llm import predict
    from toxeval.llm.runfile import read_run

    texts = [" ".join(["hate"] * (i % 9 + 1)) + " you" for i in range(40)]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    predict(_dataset(texts), f"hf:{bert}", a, batch_size=1)
    predict(_dataset(texts), f"hf:{bert}", b, batch_size=32, batch_tokens=64)
    for ra, rb in zip(_run_rows(a), _run_rows(b), strict=True):
        assert ra["request_hash"] == rb["request_hash"]  # the batch size is not in it
        assert ra["scores"]["hate"] == pytest.approx(rb["scores"]["hate"], rel=1e-5)
    again = predict(_dataset(texts), f"hf:{bert}", b)
    assert (again.written, again.skipped) == (0, len(texts))
    assert read_run(b).rows == len(texts)


@needs_hf
def test_evaluate_on_the_demo_set(bert: Path, tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    out = tmp_path / "out"
    got = cli("evaluate", "--detector", f"hf:{bert}", "--out", str(out), "-q", "--bootstrap", "0")
    assert got.returncode == 0, got.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["system"]["detector"] == f"hf:{bert}"
    assert res["system"]["fingerprint"]["mapping"]["name"] == "detoxify-original"
    assert res["system"]["rows"]["scored"] == 362
    assert res["binary_scores"] is False  # graded scores reach the report
    assert "self_harm" in res["excluded_categories"]  # unknown on every row: not in mAP
    again = cli(
        "predict", "--dataset", "demo", "--detector", f"hf:{bert}",
        "--out", str(out / "run.jsonl"), "-q",
    )  # fmt: skip
    assert again.returncode == 0 and "(362 already done)" in again.stdout


@needs_hf
def test_moderation_set(
    bert: Path, shared_data: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    out = tmp_path / "out"
    got = cli(
        "evaluate", "--dataset", "openai-moderation", "--data-dir", str(shared_data),
        "--detector", f"hf:{bert}", "--out", str(out), "-q", "--bootstrap", "0",
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["system"]["fingerprint"]["mapping"]["name"] == (
        "detoxify-original-openai-moderation-8"
    )
    assert res["system"]["rows"]["scored"] == 1680
    assert res["binary_scores"] is False


@needs_hf
def test_cuda_and_half_precision_on_a_cpu_are_refused(
    bert: Path, cli: Callable[..., CliRun]
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    err = _fails(cli, "--detector", f"hf:{bert}", "--device", "cuda")
    assert "--device cuda: torch sees no CUDA device" in err
    for dtype in ("float16", "bfloat16"):
        err = _fails(cli, "--detector", f"hf:{bert}", "--dtype", dtype)
        assert f"--dtype {dtype} needs a CUDA device" in err
    err = _fails(cli, "--detector", f"hf:{bert}", "--device", "cpu", "--dtype", "float16")
    assert "needs a CUDA device" in err


@needs_hf
def test_unmappable_labels(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    d = _build(tmp_path / "m", ("spam", "ham"))
    err = _fails(cli, "--detector", f"hf:{d}")
    assert "no shipped mapping" in err and "spam, ham" in err


@needs_hf
def test_missing_tokenizer(bert: Path, tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    import shutil

    d = tmp_path / "m"
    shutil.copytree(bert, d)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (d / name).unlink(missing_ok=True)
    err = _fails(cli, "--detector", f"hf:{d}")
    assert str(d) in err and "no tokenizer.json" in err


@needs_hf
def test_id2label_disagrees_with_the_weights(
    bert: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    import shutil

    d = tmp_path / "m"
    shutil.copytree(bert, d)
    config = json.loads((d / "config.json").read_text())
    config["id2label"] = {str(i): lab for i, lab in enumerate(ORIGINAL[:4])}
    config["label2id"] = {lab: i for i, lab in enumerate(ORIGINAL[:4])}
    (d / "config.json").write_text(json.dumps(config))
    err = _fails(cli, "--detector", f"hf:{d}")
    assert "the weights do not fit config.json" in err
    assert "classifier.weight is [6, 32] in the weights and [4, 32] by config.json" in err


@needs_hf
def test_a_checkpoint_without_its_classifier_head(
    tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    import shutil

    import transformers

    d = _build(tmp_path / "m")
    base = transformers.BertModel.from_pretrained(d, local_files_only=True)
    (d / "model.safetensors").unlink()
    base.save_pretrained(tmp_path / "base")  # the encoder only, as AutoModel saves it
    shutil.copy(tmp_path / "base" / "model.safetensors", d / "model.safetensors")
    err = _fails(cli, "--detector", f"hf:{d}")
    assert "the weights hold no classifier.bias, classifier.weight" in err


@needs_hf
def test_not_a_model_directory(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    assert "does not exist" in _fails(cli, "--detector", f"hf:{tmp_path / 'nope'}")
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"id2label": {"0": "toxic"}}))
    assert "no tokenizer.json" in _fails(cli, "--detector", f"hf:{d}")
    from tiny_models import write_tokenizer

    write_tokenizer(d / "tokenizer.json", {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2})
    err = _fails(cli, "--detector", f"hf:{d}")  # no model_type, no weights
    assert f"{d}: transformers cannot load the model: " in err
