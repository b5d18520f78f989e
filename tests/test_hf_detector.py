"""The ``hf:DIR`` detector (toxeval.classifiers.hf_runner): without transformers or torch
it is one clear error naming ``toxeval[hf]`` (exit 2); with both, a BERT config with
random weights saved in the test scores as the model's own direct forward pass (CI does
not install torch, so that test is skipped there and says so)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers import CliRun, make_dataset
from toxeval.taxonomy import load_taxonomy

HAVE_HF = all(importlib.util.find_spec(m) is not None for m in ("transformers", "torch"))


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


@pytest.mark.skipif(not HAVE_HF, reason="transformers and torch are not installed (toxeval[hf])")
def test_scores_equal_the_direct_forward_pass(tmp_path: Path) -> None:  # pragma: no cover
    import torch
    import transformers
    from tiny_models import WORDS, write_tokenizer
    from toxeval.llm import predict

    labels = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={lab: i for i, lab in enumerate(labels)},
        problem_type="multi_label_classification",
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config).eval()
    d = tmp_path / "bert"
    model.save_pretrained(d)
    write_tokenizer(d / "tokenizer.json", vocab)
    transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(d / "tokenizer.json"), pad_token="[PAD]", unk_token="[UNK]"
    ).save_pretrained(d)
    texts = ["you are an idiot", "nice day", "i will kill them all " * 3]
    tax = load_taxonomy("toxeval-15")
    ds = dataclasses.replace(
        make_dataset(np.zeros((3, tax.k), dtype=np.int8), taxonomy=tax), texts=texts
    )
    run = tmp_path / "run.jsonl"
    predict(ds, f"hf:{d}", run, device="cpu")
    rows = [json.loads(x) for x in run.read_text().splitlines()[1:]]
    tok = transformers.AutoTokenizer.from_pretrained(d)
    with torch.inference_mode():
        for text, row in zip(texts, rows, strict=True):
            enc = tok(text, return_tensors="pt")
            probs = torch.sigmoid(model(**enc).logits)[0].numpy()
            assert row["scores"]["profanity"] == pytest.approx(float(probs[2]), rel=1e-5)
            assert row["scores"]["hate"] == pytest.approx(float(probs[5]), rel=1e-5)
