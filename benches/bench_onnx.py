"""The ``onnx:`` detector's throughput against plain transformers and ONNX Runtime loops.

The references: a plain transformers pipeline loop over the same weights (where torch and
transformers are installed) and a plain one-row-at-a-time ONNX Runtime loop.

    python benches/bench_onnx.py [--rows 512] [--repeats 3] [--layers 4] [--hidden 256]
                                 [--threads 2] [--no-pipeline-batch]

The bench builds a BERT classifier graph with ``onnx.helper`` (word and position
embeddings, no token types, embedding LayerNorm, ``--layers`` post-LayerNorm encoder
layers of ``--hidden`` units and hidden/64 attention heads with a 4x feed-forward block
and exact (erf) GELU, a tanh pooler on the first token, a 6-label head; LayerNorm epsilon
1e-5; random weights, vocabulary 30,522) and a WordLevel tokenizer, and ``--rows`` texts of
5 to 200 words (log-normal, median ~40: short comments and a few long ones; 512 tokens at
most). Where torch and transformers import, the graph's weights are loaded into a
transformers ``BertForSequenceClassification`` (same configuration, token-type embeddings
zero, multi-label problem type), saved with a ``PreTrainedTokenizerFast`` over the same
tokenizer.json, and the pipeline paths are timed too.

Timed with ``--threads`` intra-op threads and one inter-op thread everywhere (ONNX Runtime
sessions and torch). Every path is timed whole: session creation or model loading (and,
for predict, the model's sha256 and the run file) included.

1. **reference**: for each text, ``tokenizer.encode`` and one ``session.run`` of batch 1
   (no padding at all), what a plain ONNX Runtime loop does;
2. **transformers pipeline, one call per text**: ``pipeline("text-classification",
   top_k=None, function_to_apply="sigmoid", device=-1)`` called once per text, what a
   plain transformers loop does (torch and transformers only);
3. **transformers pipeline, batch_size**: the same pipeline called once over the list with
   ``batch_size=--batch-size`` (skipped with ``--no-pipeline-batch``);
4. **toxeval classifier**: a new ``OnnxClassifier`` and ``predict`` over all texts, batch
   32 grouped by token length (the detector's engine, without the run file);
5. **rows only**: as 4 without the padded-token cap (32 rows per batch whatever their
   length), to show what the cap buys;
6. **toxeval predict**: ``toxeval.llm.predict`` with ``onnx:DIR``, batch 32, writing the
   run file (everything a user's run does, the model's sha256 included).

Each path runs ``--repeats`` times, alternating; the best wall time and the best CPU time
(this process, all its threads: less sensitive to other load on the machine) are shown,
as ratios to the one-call-per-text pipeline where it runs, else to the reference. Every
path's scores are checked against the reference's (max abs difference printed: ~1e-7 for
the pipeline, whose float32 kernels differ from ONNX Runtime's). ``OMP_WAIT_POLICY`` is
``PASSIVE`` unless set: spinning OpenMP workers make torch more than 10x slower on a machine
whose cores are busy with other work; ONNX Runtime's threads do not spin either (the
``session.intra_op.allow_spinning`` setting, as in ``OnnxClassifier``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

LABELS = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")
VOCAB = 30522
MAX_POS = 512


def bert_graph(layers: int, hidden: int, vocab: int, rng: np.random.Generator) -> Any:
    """A BERT-shaped classifier graph (see the module docstring)."""
    from onnx import TensorProto, helper, numpy_helper

    heads, inter = max(1, hidden // 64), 4 * hidden
    nodes: list[Any] = []
    inits: list[Any] = []

    def w(name: str, *shape: int, scale: float = 0.02) -> str:
        inits.append(numpy_helper.from_array(rng.normal(0, scale, shape).astype(np.float32), name))
        return name

    def const(name: str, value: Any, dtype: Any = np.int64) -> str:
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def node(op: str, ins: list[str], out: str, **kw: Any) -> str:
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    def dense(x: str, name: str, n_in: int, n_out: int) -> str:
        y = node("MatMul", [x, w(f"{name}.w", n_in, n_out)], f"{name}.mm")
        return node("Add", [y, w(f"{name}.b", n_out)], f"{name}.out")

    def layer_norm(x: str, name: str) -> str:
        inits.append(numpy_helper.from_array(np.ones(hidden, np.float32), f"{name}.g"))
        inits.append(numpy_helper.from_array(np.zeros(hidden, np.float32), f"{name}.beta"))
        return node("LayerNormalization", [x, f"{name}.g", f"{name}.beta"], f"{name}.ln", axis=-1)

    const("zero", 0)
    const("one", 1)
    shape = node("Shape", ["input_ids"], "ids_shape")
    t = node("Gather", [shape, const("i1", 1)], "t", axis=0)
    pos = node("Range", ["zero", t, "one"], "pos")
    we = node("Gather", [w("word_emb", vocab, hidden), "input_ids"], "we", axis=0)
    pe = node("Gather", [w("pos_emb", MAX_POS, hidden), pos], "pe", axis=0)
    x = layer_norm(node("Add", [we, pe], "emb"), "emb_ln")
    # attention bias: 0 where the mask is 1, -10000 where it is 0; shape (b, 1, 1, t)
    mf = node("Cast", ["attention_mask"], "mf", to=TensorProto.FLOAT)
    inv = node("Sub", [const("onef", 1.0, np.float32), mf], "inv")
    bias = node("Mul", [inv, const("neg", -10000.0, np.float32)], "bias2")
    bias = node("Unsqueeze", [bias, const("ax12", [1, 2])], "bias")
    scale = const("scale", 1.0 / np.sqrt(hidden // heads), np.float32)
    split = const("split_shape", [0, 0, heads, hidden // heads])
    merge = const("merge_shape", [0, 0, hidden])
    for i in range(layers):
        p = f"l{i}"

        def split_heads(y: str, name: str, perm: list[int]) -> str:
            r = node("Reshape", [y, split], f"{name}.r")
            return node("Transpose", [r], f"{name}.t", perm=perm)

        q = split_heads(dense(x, f"{p}.q", hidden, hidden), f"{p}.q", [0, 2, 1, 3])
        k = split_heads(dense(x, f"{p}.k", hidden, hidden), f"{p}.k", [0, 2, 3, 1])
        v = split_heads(dense(x, f"{p}.v", hidden, hidden), f"{p}.v", [0, 2, 1, 3])
        s = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), scale], f"{p}.s")
        a = node("Softmax", [node("Add", [s, bias], f"{p}.sb")], f"{p}.a", axis=-1)
        ctx = node(
            "Transpose", [node("MatMul", [a, v], f"{p}.ctx")], f"{p}.ctxt", perm=[0, 2, 1, 3]
        )
        ctx = node("Reshape", [ctx, merge], f"{p}.ctxr")
        x = layer_norm(
            node("Add", [x, dense(ctx, f"{p}.o", hidden, hidden)], f"{p}.res1"), f"{p}.ln1"
        )
        h = dense(x, f"{p}.ff1", hidden, inter)
        erf = node(
            "Erf",
            [node("Mul", [h, const(f"{p}.rs2", 1 / np.sqrt(2), np.float32)], f"{p}.hs")],
            f"{p}.erf",
        )
        g = node("Add", [erf, "onef"], f"{p}.erf1")
        g = node(
            "Mul",
            [node("Mul", [h, g], f"{p}.hg"), const(f"{p}.half", 0.5, np.float32)],
            f"{p}.gelu",
        )
        x = layer_norm(
            node("Add", [x, dense(g, f"{p}.ff2", inter, hidden)], f"{p}.res2"), f"{p}.ln2"
        )
    first = node("Gather", [x, const("i0", 0)], "cls", axis=1)
    pooled = node("Tanh", [dense(first, "pool", hidden, hidden)], "pooled")
    dense(pooled, "cls_head", hidden, len(LABELS))
    nodes[-1].output[0] = "logits"
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
        for n in ("input_ids", "attention_mask")
    ]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", len(LABELS)])
    graph = helper.make_graph(nodes, "bert_classifier", inputs, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def build(folder: Path, layers: int, hidden: int, seed: int, vocab_size: int = VOCAB) -> list[str]:
    """Write the model directory; return the vocabulary's words."""
    import onnx
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(bert_graph(layers, hidden, vocab_size, rng), folder / "model.onnx")
    words = [f"w{i}" for i in range(vocab_size - 4)]
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    vocab.update({wd: i + 4 for i, wd in enumerate(words)})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.save(str(folder / "tokenizer.json"))
    config = {
        "model_type": "bert",
        "problem_type": "multi_label_classification",
        "id2label": {str(i): lab for i, lab in enumerate(LABELS)},
        "max_position_embeddings": MAX_POS,
        "pad_token_id": 0,
    }
    (folder / "config.json").write_text(json.dumps(config))
    return words


def texts_of(words: list[str], n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed + 1)
    lengths = np.clip(rng.lognormal(np.log(40), 0.7, n).astype(int), 5, 200)
    return [" ".join(rng.choice(words, size=int(k))) for k in lengths]


def reference(folder: Path, texts: list[str], threads: int) -> tuple[np.ndarray, float]:
    """One ``session.run`` per text: the plain ONNX Runtime loop; (probabilities, seconds
    of the loop alone). The bench times the whole call, session creation included, as it
    times the other paths."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.enable_truncation(MAX_POS)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")  # as OnnxClassifier
    sess = ort.InferenceSession(str(folder / "model.onnx"), so, providers=["CPUExecutionProvider"])
    out = np.empty((len(texts), len(LABELS)))
    warm = np.array([tok.encode(texts[0]).ids], dtype=np.int64)
    sess.run(["logits"], {"input_ids": warm, "attention_mask": np.ones_like(warm)})
    t0 = time.perf_counter()
    for i, text in enumerate(texts):
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        out[i] = sess.run(["logits"], {"input_ids": ids, "attention_mask": mask})[0][0]
    return 1 / (1 + np.exp(-out)), time.perf_counter() - t0


def hf_state_dict(folder: Path, layers: int) -> dict[str, np.ndarray]:
    """The ONNX graph's initializers under ``BertForSequenceClassification``'s names.

    The graph computes exactly a BERT classifier: MatMul weights are (in, out), torch's
    Linear keeps (out, in), hence the transposes; the graph has no token-type embeddings,
    so they are zero in the transformers model (BERT adds them, a zero row adds nothing).
    """
    import onnx
    from onnx import numpy_helper

    w = {
        i.name: numpy_helper.to_array(i)
        for i in onnx.load(str(folder / "model.onnx")).graph.initializer
    }
    hidden = w["word_emb"].shape[1]

    def linear(dst: str, src: str) -> dict[str, np.ndarray]:
        return {f"{dst}.weight": w[f"{src}.w"].T.copy(), f"{dst}.bias": w[f"{src}.b"]}

    def norm(dst: str, src: str) -> dict[str, np.ndarray]:
        return {f"{dst}.weight": w[f"{src}.g"], f"{dst}.bias": w[f"{src}.beta"]}

    sd: dict[str, np.ndarray] = {
        "bert.embeddings.word_embeddings.weight": w["word_emb"],
        "bert.embeddings.position_embeddings.weight": w["pos_emb"],
        "bert.embeddings.token_type_embeddings.weight": np.zeros((2, hidden), np.float32),
        **norm("bert.embeddings.LayerNorm", "emb_ln"),
        **linear("bert.pooler.dense", "pool"),
        **linear("classifier", "cls_head"),
    }
    for i in range(layers):
        p, q = f"bert.encoder.layer.{i}", f"l{i}"
        sd.update(linear(f"{p}.attention.self.query", f"{q}.q"))
        sd.update(linear(f"{p}.attention.self.key", f"{q}.k"))
        sd.update(linear(f"{p}.attention.self.value", f"{q}.v"))
        sd.update(linear(f"{p}.attention.output.dense", f"{q}.o"))
        sd.update(norm(f"{p}.attention.output.LayerNorm", f"{q}.ln1"))
        sd.update(linear(f"{p}.intermediate.dense", f"{q}.ff1"))
        sd.update(linear(f"{p}.output.dense", f"{q}.ff2"))
        sd.update(norm(f"{p}.output.LayerNorm", f"{q}.ln2"))
    return sd


def build_hf(folder: Path, hf_dir: Path, layers: int, hidden: int, vocab: int) -> None:
    """Save the ONNX graph's weights as a transformers ``BertForSequenceClassification``
    (exact GELU, LayerNorm epsilon 1e-5 as ONNX's LayerNormalization, no dropout at
    inference) with a ``PreTrainedTokenizerFast`` over the same tokenizer.json."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    config = BertConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=4 * hidden,
        hidden_act="gelu",
        max_position_embeddings=MAX_POS,
        type_vocab_size=2,
        layer_norm_eps=1e-5,
        pad_token_id=0,
        problem_type="multi_label_classification",
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={lab: i for i, lab in enumerate(LABELS)},
    )
    model = BertForSequenceClassification(config).eval()
    sd = {k: torch.from_numpy(np.array(v)) for k, v in hf_state_dict(folder, layers).items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise SystemExit(f"weight mapping: missing {missing}, unexpected {unexpected}")
    model.save_pretrained(hf_dir)
    tok = PreTrainedTokenizerFast(
        tokenizer_file=str(folder / "tokenizer.json"),
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=MAX_POS,
    )
    tok.save_pretrained(hf_dir)


def hf_pipeline(hf_dir: Path, texts: list[str], batch_size: int | None) -> np.ndarray:
    """A plain transformers ``text-classification`` pipeline, sigmoid scores of every label:
    one call per text when ``batch_size`` is None (what a plain loop does), else one call
    over the list with that batch size. Loading the model is timed too, as the other paths'
    session creation is."""
    from transformers import pipeline

    pipe = pipeline(
        "text-classification",
        model=str(hf_dir),
        tokenizer=str(hf_dir),
        top_k=None,
        function_to_apply="sigmoid",
        device=-1,
    )
    if batch_size is None:
        outs = [pipe(text) for text in texts]
    else:
        outs = list(pipe(texts, batch_size=batch_size))
    col = {lab: j for j, lab in enumerate(LABELS)}
    probs = np.empty((len(texts), len(LABELS)))
    for i, row in enumerate(outs):
        if row and isinstance(row[0], list):  # one text in, a one-element list out
            row = row[0]
        for d in row:
            probs[i, col[d["label"]]] = d["score"]
    return probs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3, help="best of R runs of each path")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab", type=int, default=VOCAB, help="vocabulary size (30522)")
    ap.add_argument("--out", type=Path, help="also write bench_onnx.json here")
    ap.add_argument(
        "--no-pipeline-batch", action="store_true", help="skip the batched transformers pipeline"
    )
    args = ap.parse_args()
    # torch's OpenMP workers spin while they wait; on a loaded machine two spinning threads
    # make torch >10x slower. Passive waiting is torch's best setting there (ONNX Runtime has
    # its own thread pool and does not read this), so the pipeline is not handicapped.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
        import transformers
    except ImportError:
        torch = transformers = None
    if torch is not None:
        torch.set_num_threads(args.threads)
        torch.set_num_interop_threads(1)
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
    import onnxruntime
    from toxeval.classifiers import ModelOptions
    from toxeval.classifiers.onnx_runner import OnnxClassifier
    from toxeval.datasets import Dataset
    from toxeval.llm import predict
    from toxeval.taxonomy import load_taxonomy

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "bert"
        words = build(folder, args.layers, args.hidden, args.seed, args.vocab)
        texts = texts_of(words, args.rows, args.seed)
        size_mb = (folder / "model.onnx").stat().st_size / 1e6
        hf_dir = Path(tmp) / "hf"
        if torch is not None:
            build_hf(folder, hf_dir, args.layers, args.hidden, args.vocab)
        opts = ModelOptions(batch_size=args.batch_size, threads=args.threads)
        tax = load_taxonomy("toxeval-15")
        ds = Dataset(
            name="bench",
            level="prompt",
            taxonomy=tax,
            ids=[f"r{i}" for i in range(len(texts))],
            texts=texts,
            responses=None,
            y_true=np.zeros((len(texts), tax.k), dtype=np.int8),
            mask=np.ones((len(texts), tax.k), dtype=bool),
            soft=None,
            n_annotators=None,
            source="bench",
            sha256="0" * 64,
        )
        best: dict[str, tuple[float, float]] = {}  # path -> (wall s, CPU s), best of R

        def timed(name: str, fn: Any) -> Any:
            t0, c0 = time.perf_counter(), time.process_time()
            out = fn()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            old = best.get(name, (math.inf, math.inf))
            best[name] = (min(old[0], wall), min(old[1], cpu))
            return out

        uncapped = ModelOptions(
            batch_size=args.batch_size, threads=args.threads, batch_tokens=10**9
        )
        for r in range(args.repeats):  # the paths alternate, so load on the machine is shared
            ref = timed("reference", lambda: reference(folder, texts, args.threads))[0]
            if torch is not None:
                hf_probs = timed("pipeline", lambda: hf_pipeline(hf_dir, texts, None))
                if not args.no_pipeline_batch:
                    hf_batch = timed(
                        "pipeline_batch", lambda: hf_pipeline(hf_dir, texts, args.batch_size)
                    )
            probs, _ = timed(
                "classifier", lambda: OnnxClassifier(folder, opts, "onnx:bench").predict(texts)
            )
            timed(
                "rows_only", lambda: OnnxClassifier(folder, uncapped, "onnx:bench").predict(texts)
            )
            run = Path(tmp) / f"run{r}.jsonl"
            timed(
                "predict",
                lambda run=run: predict(
                    ds, f"onnx:{folder}", run, batch_size=args.batch_size, threads=args.threads
                ),
            )
        rows = [json.loads(x) for x in run.read_text().splitlines()[1:]]
        run_profanity = np.array([r["scores"]["profanity"] for r in rows])
    diff_clf = float(np.abs(probs - ref).max())
    diff_run = float(np.abs(run_profanity - ref[:, 2]).max())
    diffs = {"classifier": diff_clf, "predict": diff_run}
    if torch is not None:
        diffs["pipeline"] = float(np.abs(hf_probs - ref).max())
        if not args.no_pipeline_batch:
            diffs["pipeline_batch"] = float(np.abs(hf_batch - ref).max())
    n = len(texts)
    tokens = sum(min(len(t.split()) + 2, MAX_POS) for t in texts)
    result: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "onnxruntime": onnxruntime.__version__,
            "torch": torch and torch.__version__,
            "transformers": transformers and transformers.__version__,
            "loadavg": os.getloadavg(),
        },
        "model": {"layers": args.layers, "hidden": args.hidden, "onnx_mb": round(size_mb, 1)},
        "rows": n,
        "mean_tokens": tokens / n,
        "threads": args.threads,
        "batch_size": args.batch_size,
        "paths": {
            k: {"wall_rows_per_s": n / w, "cpu_rows_per_s": n / c} for k, (w, c) in best.items()
        },
        **{f"max_abs_diff_{k}": v for k, v in diffs.items()},
    }
    labels = {
        "reference": "one row per session.run (reference)",
        "pipeline": "transformers pipeline, one call per text",
        "pipeline_batch": f"transformers pipeline, batch_size={args.batch_size}",
        "classifier": f"OnnxClassifier, batch {args.batch_size} by length, <= 512 padded tokens",
        "rows_only": f"OnnxClassifier, batch {args.batch_size} by length, no token cap",
        "predict": "toxeval.llm.predict onnx:DIR (session, sha256, run file)",
    }
    base = "pipeline" if "pipeline" in best else "reference"
    ref_w, ref_c = best[base]
    print(
        f"# onnx: detector, {args.layers} layers x {args.hidden} ({size_mb:.0f} MB), "
        f"{n} texts, {tokens / n:.0f} tokens mean, {args.threads} threads, best of "
        f"{args.repeats}"
    )
    if torch is None:
        print("torch/transformers not installed: compared with the plain ONNX Runtime loop")
    else:
        print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    vs = "vs pipeline" if base == "pipeline" else "vs reference"
    print(f"| path | rows/s (wall) | {vs} | rows per CPU s | {vs} |")
    print("|---|---:|---:|---:|---:|")
    for k, label in labels.items():
        if k not in best:
            continue
        w, c = best[k]
        print(f"| {label} | {n / w:.1f} | {ref_w / w:.2f}x | {n / c:.1f} | {ref_c / c:.2f}x |")
    print(
        "max abs diff of the scores vs the reference: "
        + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
    )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_onnx.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
