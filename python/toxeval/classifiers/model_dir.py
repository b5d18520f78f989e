"""A sequence-classification model directory as transformers and optimum write it: its
``config.json`` (labels, head, token limit) and ``tokenizer_config.json`` (token limit),
read and checked with one clear error per mistake.

Head activation, as transformers' text-classification pipeline decides it:
``problem_type = "multi_label_classification"`` or a single label: sigmoid per label;
``"single_label_classification"`` or, without ``problem_type``, several labels: softmax
over the labels; ``"regression"`` has no probabilities and is refused.

Token limit, first found: the ``max_length`` option; ``model_max_length`` of
``tokenizer_config.json`` (unless it is transformers' "no limit" placeholder);
``max_position_embeddings`` of ``config.json`` (minus the two padding positions of the
RoBERTa family, whose position ids start after the padding id); 512.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["Head", "ModelConfig", "ModelDirError", "read_model_config"]

Head = Literal["sigmoid", "softmax"]
DEFAULT_MAX_LENGTH = 512
#: transformers' ``model_max_length`` when a tokenizer declares no limit (int(1e30))
_NO_LIMIT = 1_000_000
#: models whose position ids start at padding_idx + 1 (two positions unusable)
_OFFSET_POSITIONS = frozenset({"roberta", "xlm-roberta", "camembert", "longformer"})


class ModelDirError(ValueError):
    """A model directory that cannot be used: a missing or malformed file."""


@dataclass(frozen=True)
class ModelConfig:
    """What ``config.json`` says: ``labels`` in output order, the ``head`` activation,
    the token ``max_length``, the ``pad_id`` and ``model_type``."""

    labels: tuple[str, ...]
    head: Head
    max_length: int
    pad_id: int
    model_type: str


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ModelDirError(f"{path}: cannot read the {what}: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ModelDirError(f"{path}: the {what} is not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ModelDirError(f"{path}: the {what} is not a JSON object")
    return doc


def model_file(directory: Path, name: str, what: str) -> Path:
    """``directory / name``, or a :class:`ModelDirError` saying it is missing."""
    path = directory / name
    if not path.is_file():
        raise ModelDirError(
            f"{directory}: no {name} ({what}); a sequence-classification model directory "
            "holds config.json, tokenizer.json and the weights"
        )
    return path


def _labels(path: Path, config: dict[str, Any]) -> tuple[str, ...]:
    raw = config.get("id2label")
    if not isinstance(raw, dict) or not raw:
        raise ModelDirError(f"{path}: no id2label: the model's labels are not named")
    try:
        pairs = sorted((int(k), v) for k, v in raw.items())
    except (TypeError, ValueError):
        raise ModelDirError(f"{path}: id2label keys must be integers 0..n-1") from None
    if [k for k, _ in pairs] != list(range(len(pairs))):
        raise ModelDirError(f"{path}: id2label keys must be 0..{len(pairs) - 1}, each once")
    labels = tuple(str(v) for _, v in pairs)
    if len(set(labels)) != len(labels):
        raise ModelDirError(f"{path}: id2label names a label twice")
    n = config.get("num_labels")
    if n is not None and n != len(labels):
        raise ModelDirError(f"{path}: num_labels is {n} but id2label has {len(labels)} labels")
    return labels


def _head(path: Path, config: dict[str, Any], n_labels: int) -> Head:
    problem = config.get("problem_type")
    if problem == "multi_label_classification":
        return "sigmoid"
    if problem == "single_label_classification":
        return "softmax"
    if problem is None:
        return "sigmoid" if n_labels == 1 else "softmax"
    raise ModelDirError(
        f"{path}: problem_type {problem!r} gives no probabilities; toxeval reads "
        "multi_label_classification (sigmoid) or single_label_classification (softmax) heads"
    )


def _max_length(directory: Path, config: dict[str, Any], given: int | None) -> int:
    if given is not None:
        return given
    tok_cfg = directory / "tokenizer_config.json"
    if tok_cfg.is_file():
        limit = _read_json(tok_cfg, "tokenizer config").get("model_max_length")
        if isinstance(limit, int | float) and not isinstance(limit, bool) and 2 <= limit:
            if limit < _NO_LIMIT:
                return int(limit)
    positions = config.get("max_position_embeddings")
    if isinstance(positions, int) and not isinstance(positions, bool) and positions > 2:
        offset = 2 if config.get("model_type") in _OFFSET_POSITIONS else 0
        return positions - offset
    return DEFAULT_MAX_LENGTH


def read_model_config(directory: str | Path, max_length: int | None = None) -> ModelConfig:
    """Read and check ``directory/config.json`` (see the module docstring)."""
    d = Path(directory)
    if not d.is_dir():
        what = "does not exist" if not d.exists() else "is not a directory"
        raise ModelDirError(f"{d}: {what}; give a model directory (config.json, tokenizer.json)")
    path = model_file(d, "config.json", "the model's labels and head")
    config = _read_json(path, "model config")
    labels = _labels(path, config)
    pad = config.get("pad_token_id")
    return ModelConfig(
        labels=labels,
        head=_head(path, config, len(labels)),
        max_length=_max_length(d, config, max_length),
        pad_id=pad if isinstance(pad, int) and not isinstance(pad, bool) and pad >= 0 else 0,
        model_type=str(config.get("model_type", "")),
    )
