"""Local sequence-classification models as detectors: ``onnx:DIR`` (ONNX Runtime +
``tokenizers``, no torch) and ``hf:DIR`` (transformers).

A model directory is what optimum's ``ORTModelForSequenceClassification`` or
transformers' ``AutoModelForSequenceClassification`` reads: ``config.json`` (``id2label``,
``problem_type``), ``tokenizer.json`` and the weights (``model.onnx``, or the
transformers weights). What each module holds:

- ``model_dir``: ``config.json`` / ``tokenizer_config.json`` read and checked (labels,
  head activation, token limit, padding id);
- ``heads``: logits to probabilities (sigmoid for multi-label heads, softmax for
  single-label ones);
- ``label_map``: model labels onto taxonomy columns through a shipped or user mapping;
  categories no label maps to stay unknown (NaN), never 0;
- ``batching``: texts to padded batches grouped by token length, truncation counted;
- ``onnx_runner`` / ``hf_runner``: the two runtimes;
- ``options``: the options a local model takes (mapping, threads, batch size, ...).
"""

from __future__ import annotations

from toxeval.classifiers.options import ModelOptions

__all__ = ["ModelOptions"]
