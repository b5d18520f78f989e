"""Datasets by name: the built-in registry (Q-A-MLL and the other benchmarks of
docs/datasets.md), data directories (``--data-dir``, ``$TOXEVAL_DATA_DIR``), and
:func:`load_dataset` / :func:`list_datasets`, which find a file and hand it to its reader.
"""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from pathlib import Path

from toxeval.datasets.labels import LabelReader, build_dataset, dataset_mapping, dataset_taxonomy
from toxeval.datasets.openai_moderation import (
    OPENAI_FILE,
    check_openai_options,
    is_openai_moderation,
    read_openai_moderation,
)
from toxeval.datasets.readers import dataset_stem, json_lines, read_dataset_file
from toxeval.datasets.records import records_to_rows
from toxeval.datasets.schema import (
    RULES,
    SCHEMA_SUMMARY,
    Dataset,
    DatasetError,
    DatasetInfo,
    Level,
    Rule,
)
from toxeval.taxonomy import LabelMapping, Taxonomy

ENV_DATA_DIR = "TOXEVAL_DATA_DIR"


_EXTENSIONS = (".jsonl", ".jsonl.gz", ".csv", ".parquet")


_REGISTRY: dict[str, tuple[Level, str]] = {
    "Q-A-MLL": (
        "prompt",
        "prompt-level multi-label benchmark (Kou et al., 2025); not public, bring your own file",
    ),
    "H-X-MLL": (
        "prompt",
        "prompt-level multi-label benchmark (Kou et al., 2025); not public, bring your own file",
    ),
    "R-A-MLL": (
        "response",
        "response-level multi-label benchmark (Kou et al., 2025); not public, bring your own file",
    ),
    "openai-moderation": (
        "prompt",
        "OpenAI moderation evaluation set (Markov et al., 2022), samples-1680.jsonl.gz; "
        "absent keys = unknown",
    ),
}


def _data_dirs(data_dir: str | Path | None) -> list[Path]:
    out: list[Path] = []
    if data_dir is not None:
        out.append(Path(data_dir))
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        out.append(Path(env))
    return out


def _candidates(name: str, data_dir: str | Path | None) -> list[Path]:
    paths: list[Path] = []
    for d in _data_dirs(data_dir):
        if name == "openai-moderation":
            for base in (d, d / "openai-moderation"):
                paths += [base / OPENAI_FILE, base / OPENAI_FILE.removesuffix(".gz")]
        else:
            for base in (d, d / name):
                paths += [base / f"{name}{ext}" for ext in _EXTENSIONS]
    return paths


def _find(path: Path) -> Path | None:
    """``path`` itself, or a file in its directory whose name matches case-insensitively."""
    if path.is_file():
        return path
    parent = path.parent
    if not parent.is_dir():
        return None
    want = path.name.lower()
    for p in sorted(parent.iterdir()):
        if p.name.lower() == want and p.is_file():
            return p
    return None


def _registry_name(name: str) -> str | None:
    for key in _REGISTRY:
        if key.lower() == name.lower():
            return key
    return None


def _missing_message(name: str, tried: list[Path]) -> str:
    where = "\n".join(f"  {p}" for p in tried) or (
        f"  (nowhere: pass data_dir= / --data-dir, or set ${ENV_DATA_DIR})"
    )
    return (
        f"dataset {name!r} not found. toxeval looked at:\n{where}\n"
        f"Point toxeval at the directory that holds it with data_dir= (--data-dir DIR) "
        f"or ${ENV_DATA_DIR}, or pass the file's path.\n{SCHEMA_SUMMARY}"
    )


def list_datasets(data_dir: str | Path | None = None) -> list[DatasetInfo]:
    """Known datasets: the embedded demo set and the registry, with where each is looked for."""
    out = [
        DatasetInfo(
            name="demo",
            level="prompt",
            description="embedded demo set written for toxeval (a demo, not a benchmark)",
            looked_at=("built-in:demo",),
            path="built-in:demo",
        )
    ]
    for name, (level, desc) in _REGISTRY.items():
        tried = _candidates(name, data_dir)
        found = next((f for f in (_find(p) for p in tried) if f is not None), None)
        out.append(
            DatasetInfo(
                name=name,
                level=level,
                description=desc,
                looked_at=tuple(str(p) for p in tried),
                path=None if found is None else str(found),
            )
        )
    return out


def load_dataset(
    name_or_path: str | Path | None = None,
    *,
    taxonomy: str | Path | Taxonomy | None = None,
    data_dir: str | Path | None = None,
    rule: Rule = "majority",
    min_annotators: int = 1,
    label_map: str | Path | LabelMapping | None = None,
) -> Dataset:
    """Load a dataset: the embedded demo set (``None`` or ``"demo"``), a registry name, or a file.

    Registry names ``Q-A-MLL``, ``H-X-MLL`` (prompt level) and ``R-A-MLL`` (response level)
    are looked for in ``data_dir`` and then ``$TOXEVAL_DATA_DIR`` as
    ``<name>.{jsonl,jsonl.gz,csv,parquet}`` (case-insensitive, also inside ``<name>/``);
    ``openai-moderation`` as ``samples-1680.jsonl.gz``. A missing dataset raises
    :class:`DatasetError` listing every path looked at and the expected schema.

    Rows with per-annotator ``annotations`` and no ``labels`` get their targets by ``rule``:
    ``majority`` (more than half of the annotators), ``union`` (at least one) or
    ``at_least`` (at least ``min_annotators``). When a row has both, ``labels`` wins for the
    targets and the annotations only give the soft labels. ``label_map`` translates label
    codes of another scheme (e.g. ``llama-guard-3``) into the taxonomy; categories no code
    maps to are unknown.
    """
    if not isinstance(rule, str) or rule not in RULES:
        raise DatasetError(
            f"unknown annotator rule {rule!r}; pass rule= (--rule) majority, union or at_least"
        )
    if (
        isinstance(min_annotators, bool)
        or not isinstance(min_annotators, int)
        or min_annotators < 1
    ):
        raise DatasetError(f"min_annotators must be an integer >= 1, got {min_annotators!r}")
    if min_annotators != 1 and rule != "at_least":
        raise DatasetError(
            f"min_annotators= (--min-annotators) only applies with rule='at_least' "
            f"(--rule at_least), and the rule is {rule!r}; pass rule='at_least' or drop "
            f"min_annotators"
        )
    if name_or_path is None or (isinstance(name_or_path, str) and name_or_path.lower() == "demo"):
        tax = dataset_taxonomy(taxonomy)
        labels = LabelReader(tax, dataset_mapping(label_map, tax))
        if tax.name != "toxeval-15" and label_map is None:
            raise DatasetError(
                f"the demo set is labelled with toxeval-15; taxonomy {tax.name!r} needs a "
                "label_map from toxeval-15 ids"
            )
        res = resources.files("toxeval") / "data" / "datasets" / "demo.jsonl"
        data = res.read_bytes()
        raw = records_to_rows(json_lines(data, "built-in:demo"), labels, "built-in:demo")
        return build_dataset(
            raw,
            name="demo",
            level="prompt",
            tax=tax,
            labels=labels,
            rule=rule,
            min_annotators=min_annotators,
            source="built-in:demo",
            sha=hashlib.sha256(data).hexdigest(),
        )
    reg = _registry_name(str(name_or_path)) if isinstance(name_or_path, str) else None
    if reg is not None and not Path(str(name_or_path)).is_file():
        tried = _candidates(reg, data_dir)
        found = next((f for f in (_find(p) for p in tried) if f is not None), None)
        if found is None:
            raise DatasetError(_missing_message(reg, tried))
        if reg == "openai-moderation":
            check_openai_options(found, rule, min_annotators, label_map)
            return read_openai_moderation(found, taxonomy=taxonomy or "openai-moderation-8")
        path, name, level = found, reg, _REGISTRY[reg][0]
    else:
        path = Path(name_or_path)
        if not path.exists():
            raise DatasetError(
                f"{str(name_or_path)!r} is neither a file nor a known dataset "
                f"(known: demo, {', '.join(_REGISTRY)})"
            )
        if is_openai_moderation(path):
            check_openai_options(path, rule, min_annotators, label_map)
            return read_openai_moderation(path, taxonomy=taxonomy or "openai-moderation-8")
        name, level = dataset_stem(path), "prompt"
    tax = dataset_taxonomy(taxonomy)
    labels = LabelReader(tax, dataset_mapping(label_map, tax))
    raw, sha = read_dataset_file(path, labels)
    return build_dataset(
        raw,
        name=name,
        level=level,
        tax=tax,
        labels=labels,
        rule=rule,
        min_annotators=min_annotators,
        source=str(path),
        sha=sha,
    )
