"""Tiny sequence-classification model directories built in the tests (no download): a
WordLevel ``tokenizer.json`` made with ``tokenizers``, an ONNX graph made with
``onnx.helper`` (embedding lookup, mean over the attention mask, a linear head) and the
``config.json`` transformers writes, plus the NumPy forward pass the scores must equal.

Needs onnx and tokenizers (the ``onnx`` extra); test modules skip when they are absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

PAD, UNK, CLS, SEP = "[PAD]", "[UNK]", "[CLS]", "[SEP]"
WORDS = (
    "you are an idiot i will hurt kill hate them all nice day the weather is "
    "lovely stupid people should die sex explicit hello world a of and"
).split()


@dataclass
class TinyModel:
    """A model directory and its weights (for :meth:`forward`)."""

    path: Path
    vocab: dict[str, int]
    emb: np.ndarray
    weight: np.ndarray
    bias: np.ndarray
    labels: tuple[str, ...]
    head: str
    max_length: int

    def token_ids(self, text: str) -> list[int]:
        """What the WordLevel tokenizer gives: [CLS] words [SEP], cut to max_length."""
        words = [self.vocab.get(w, self.vocab[UNK]) for w in text.split()]
        words = words[: self.max_length - 2]
        return [self.vocab[CLS], *words, self.vocab[SEP]]

    def logits(self, texts: list[str]) -> np.ndarray:
        """The graph's computation in NumPy (float64 from the float32 weights)."""
        rows = []
        for t in texts:
            ids = self.token_ids(t)
            mean = self.emb[ids].astype(np.float64).mean(axis=0)
            rows.append(mean @ self.weight.astype(np.float64) + self.bias.astype(np.float64))
        return np.array(rows)

    def forward(self, texts: list[str]) -> np.ndarray:
        """Probabilities: sigmoid or softmax of :meth:`logits`."""
        x = self.logits(texts)
        if self.head == "sigmoid":
            return 1.0 / (1.0 + np.exp(-x))
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def write_tokenizer(path: Path, vocab: dict[str, int]) -> None:
    """A WordLevel tokenizer.json: whitespace split, [CLS] ... [SEP] added."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single=f"{CLS} $A {SEP}",
        special_tokens=[(CLS, vocab[CLS]), (SEP, vocab[SEP])],
    )
    tok.save(str(path))


def classifier_graph(
    emb: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray,
    *,
    input_names: tuple[str, str] = ("input_ids", "attention_mask"),
    token_type_ids: bool = False,
    output_name: str = "logits",
) -> Any:
    """The ONNX model: logits = mean(emb[ids] over the attention mask) @ W + b."""
    from onnx import TensorProto, helper, numpy_helper

    ids_name, mask_name = input_names
    inputs = [
        helper.make_tensor_value_info(ids_name, TensorProto.INT64, ["batch", "tokens"]),
        helper.make_tensor_value_info(mask_name, TensorProto.INT64, ["batch", "tokens"]),
    ]
    if token_type_ids:
        inputs.append(
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "tokens"])
        )
    n_out = weight.shape[1]
    nodes = [
        helper.make_node("Gather", ["emb", ids_name], ["e"], axis=0),
        helper.make_node("Cast", [mask_name], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["m", "axis2"], ["m3"]),
        helper.make_node("Mul", ["e", "m3"], ["em"]),
        helper.make_node("ReduceSum", ["em", "axis1"], ["s"], keepdims=0),
        helper.make_node("ReduceSum", ["m3", "axis1"], ["c"], keepdims=0),
        helper.make_node("Div", ["s", "c"], ["mean"]),
        helper.make_node("MatMul", ["mean", "w"], ["mw"]),
        helper.make_node("Add", ["mw", "b"], [output_name]),
    ]
    inits = [
        numpy_helper.from_array(emb.astype(np.float32), "emb"),
        numpy_helper.from_array(weight.astype(np.float32), "w"),
        numpy_helper.from_array(bias.astype(np.float32), "b"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
    ]
    out = helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["batch", n_out])
    graph = helper.make_graph(nodes, "tiny_classifier", inputs, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def build_model(
    folder: Path,
    labels: tuple[str, ...] = (
        "toxic",
        "severe_toxic",
        "obscene",
        "threat",
        "insult",
        "identity_hate",
    ),
    *,
    problem_type: str | None = "multi_label_classification",
    max_length: int = 16,
    seed: int = 0,
    dim: int = 8,
    n_out: int | None = None,
    input_names: tuple[str, str] = ("input_ids", "attention_mask"),
    tokenizer: bool = True,
) -> TinyModel:
    """Write a model directory (config.json, tokenizer.json, model.onnx) into ``folder``.
    ``n_out``: the graph's output width (default: one per label)."""
    import onnx

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {PAD: 0, UNK: 1, CLS: 2, SEP: 3}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    rng = np.random.default_rng(seed)
    emb = rng.normal(size=(len(vocab), dim)).astype(np.float32)
    width = len(labels) if n_out is None else n_out
    weight = rng.normal(size=(dim, width)).astype(np.float32)
    bias = rng.normal(size=width).astype(np.float32)
    onnx.save(classifier_graph(emb, weight, bias, input_names=input_names), folder / "model.onnx")
    if tokenizer:
        write_tokenizer(folder / "tokenizer.json", vocab)
    config: dict[str, Any] = {
        "model_type": "bert",
        "id2label": {str(i): lab for i, lab in enumerate(labels)},
        "label2id": {lab: i for i, lab in enumerate(labels)},
        "max_position_embeddings": max_length,
        "pad_token_id": 0,
    }
    if problem_type is not None:
        config["problem_type"] = problem_type
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    head = (
        "sigmoid" if problem_type == "multi_label_classification" or len(labels) == 1 else "softmax"
    )
    return TinyModel(folder, vocab, emb, weight, bias, labels, head, max_length)
