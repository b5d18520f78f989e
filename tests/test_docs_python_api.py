"""docs/python-api.md stays true.

* Every ```python block runs, from the repository root, in a fresh namespace, and prints
  exactly the lines its ``# -> ...`` comments show, in order (a block that prints must
  show all of it).
* Every public name (``__all__``) of toxeval and of its evaluation modules is documented,
  as are the fields of the dataclasses the API returns.
* The signatures the page states are the code's (``inspect.signature``).
* Its links to other files and headings resolve.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import io
import re
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python-api.md"
if not DOC.is_file():  # tests run against an installed package, away from the repository
    pytest.skip("docs/python-api.md is not beside the tests", allow_module_level=True)
TEXT = DOC.read_text(encoding="utf-8")

PUBLIC_MODULES = (
    "toxeval",
    "toxeval.llm",
    "toxeval.scoring",
    "toxeval.predictions",
    "toxeval.detectors",
    "toxeval.datasets",
    "toxeval.plots",
    "toxeval.stats",
)
PYTHON_INFO = {"python", "py", "python3"}
_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_OUTPUT = "# ->"


def _fenced_blocks() -> list[tuple[str, int, str]]:
    """(info string, line number of the first code line, code) of every fenced block."""
    return [
        (m["info"].strip().lower(), TEXT.count("\n", 0, m.start("body")) + 1, m["body"])
        for m in _FENCE.finditer(TEXT)
    ]


PYTHON_BLOCKS = [(line, code) for info, line, code in _fenced_blocks() if info in PYTHON_INFO]


def _expected_output(code: str) -> list[str]:
    """The ``# -> text`` comments of ``code``, in source order (real comments only)."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT and tok.string.startswith(_OUTPUT):
            out.append(tok.string[len(_OUTPUT) :].strip())
    return out


def _code_identifiers() -> set[str]:
    """Identifiers that appear in code on the page: fenced blocks and inline code spans."""
    without_fences = _FENCE.sub("", TEXT)
    code = [body for _, _, body in _fenced_blocks()]
    code += re.findall(r"`([^`\n]+)`", without_fences)
    return {ident for chunk in code for ident in re.findall(r"[A-Za-z_]\w*", chunk)}


def test_the_page_has_runnable_blocks_with_checked_output() -> None:
    # guards the extraction itself: a broken fence regex would make every test vacuous
    assert len(PYTHON_BLOCKS) >= 10
    assert sum(len(_expected_output(code)) for _, code in PYTHON_BLOCKS) >= 30
    # a block in another spelling of Python would silently not run
    infos = {info for info, _, _ in _fenced_blocks()}
    assert not {i for i in infos if "py" in i} - PYTHON_INFO


def test_output_comments_are_parsed_from_comments_only() -> None:
    code = 's = "# -> not output"\nprint(s)  # -> # -> not output\n# -> second\n'
    assert _expected_output(code) == ["# -> not output", "second"]


@pytest.mark.parametrize(
    ("line", "code"), PYTHON_BLOCKS, ids=[f"line-{line}" for line, _ in PYTHON_BLOCKS]
)
def test_python_block_runs_and_prints_what_it_shows(
    line: int, code: str, monkeypatch: pytest.MonkeyPatch, fake_openai: Any
) -> None:
    monkeypatch.chdir(ROOT)
    # the registry listing depends on it: the page describes a plain environment
    monkeypatch.delenv("TOXEVAL_DATA_DIR", raising=False)
    # the LLM examples talk to $OPENAI_BASE_URL: the fake server of tests/fake_openai.py
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # pad so that a traceback names the line of docs/python-api.md
    compiled = compile("\n" * (line - 1) + code, str(DOC), "exec")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compiled, {"__name__": "__docs__"})
    printed = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    assert printed == _expected_output(code), f"block at {DOC.name}:{line}"


def _public_names() -> list[tuple[str, str]]:
    out = []
    for mod_name in PUBLIC_MODULES:
        module = importlib.import_module(mod_name)
        names = getattr(module, "__all__", None)
        assert names, f"{mod_name} has no __all__"
        out += [(mod_name, name) for name in names]
    return out


@pytest.mark.parametrize(("module", "name"), _public_names())
def test_public_name_is_documented(module: str, name: str) -> None:
    assert name in _code_identifiers(), (
        f"{module}.{name} is public (in __all__) but docs/python-api.md never mentions it "
        f"as code; document it"
    )


def test_documented_name_check_is_not_vacuous() -> None:
    idents = _code_identifiers()
    assert "read_predictions" in idents
    assert "not_a_toxeval_name" not in idents
    assert "Dataset" in idents and "Datasets" not in idents  # the heading word is prose


def _dataclasses() -> list[type]:
    from toxeval.datasets import Dataset, DatasetInfo
    from toxeval.predictions import Predictions
    from toxeval.scoring import EvaluationResult
    from toxeval.stats import BootstrapResult, CompareResult

    return [Dataset, DatasetInfo, Predictions, EvaluationResult, BootstrapResult, CompareResult]


@pytest.mark.parametrize("cls", _dataclasses(), ids=lambda c: c.__name__)
def test_dataclass_fields_are_documented(cls: type) -> None:
    idents = _code_identifiers()
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in idents]
    assert not missing, f"{cls.__name__} fields not documented: {missing}"


class _Annotation:
    """A string annotation shown as written (inspect would quote it)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _render(obj: Callable[..., Any], *, drop_self: bool = False, drop_return: bool = False) -> str:
    sig = inspect.signature(obj)

    def ann(a: Any) -> Any:
        return _Annotation(a) if isinstance(a, str) else a

    params = [p.replace(annotation=ann(p.annotation)) for p in sig.parameters.values()]
    if drop_self:
        params = params[1:]
    ret = inspect.Signature.empty if drop_return else ann(sig.return_annotation)
    return str(sig.replace(parameters=params, return_annotation=ret))


def _signatures() -> list[tuple[str, Callable[..., Any], dict[str, bool]]]:
    from toxeval import datasets, detectors, llm, parsing, plots, predictions, scoring
    from toxeval.predictions import Predictions
    from toxeval.scoring import EvaluationResult

    lexicon = detectors.LexiconDetector
    method = {"drop_self": True}
    return [
        ("toxeval.evaluate", scoring.evaluate, {}),
        ("toxeval.llm.predict", llm.predict, {}),
        ("toxeval.score", scoring.score, {}),
        ("toxeval.scoring.score_predictions", scoring.score_predictions, {}),
        ("toxeval.scoring.add_intervals", scoring.add_intervals, {}),
        ("toxeval.load_dataset", datasets.load_dataset, {}),
        ("toxeval.datasets.list_datasets", datasets.list_datasets, {}),
        ("toxeval.datasets.read_openai_moderation", datasets.read_openai_moderation, {}),
        ("toxeval.parse_output", parsing.parse_output, {}),
        ("toxeval.predictions.read_predictions", predictions.read_predictions, {}),
        ("toxeval.predictions.predictions_from_array", predictions.predictions_from_array, {}),
        ("toxeval.predictions.predictions_from_texts", predictions.predictions_from_texts, {}),
        ("toxeval.predictions.detect_format", predictions.detect_format, {}),
        ("get_detector", detectors.get_detector, {}),
        ("list_detectors", detectors.list_detectors, {}),
        ("LexiconDetector", lexicon, {"drop_return": True}),
        ("predict_scores", lexicon.predict_scores, method),
        ("toxeval.plots.plot_pr_curves", plots.plot_pr_curves, {}),
        ("toxeval.plots.pr_curves_figure", plots.pr_curves_figure, {}),
        ("toxeval.plots.plot_ap_by_category", plots.plot_ap_by_category, {}),
        ("toxeval.plots.ap_by_category_figure", plots.ap_by_category_figure, {}),
        ("to_dict", EvaluationResult.to_dict, method),
        ("summary", Predictions.summary, method),
    ]


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("( ", "(").replace(" )", ")")


@pytest.mark.parametrize(("shown", "obj", "how"), _signatures(), ids=[s[0] for s in _signatures()])
def test_documented_signature_is_the_codes(
    shown: str, obj: Callable[..., Any], how: dict[str, bool]
) -> None:
    expected = shown + _render(obj, **how)
    assert expected in _normalised(TEXT), f"docs/python-api.md should state {expected}"


def test_lazy_top_level_names_are_the_module_functions() -> None:
    import toxeval
    from toxeval import datasets, parsing, scoring

    assert toxeval.evaluate is scoring.evaluate
    assert toxeval.score is scoring.score
    assert toxeval.load_dataset is datasets.load_dataset
    assert toxeval.parse_output is parsing.parse_output


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_links_resolve() -> None:
    prose = _FENCE.sub("", TEXT)
    links = re.findall(r"\]\(([^)\s]+)\)", prose)
    assert len(links) >= 10
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        target, _, anchor = link.partition("#")
        path = (DOC.parent / target).resolve() if target else DOC
        assert path.is_file(), f"{link}: no file {path}"
        if anchor:
            text = path.read_text(encoding="utf-8")
            headings = re.findall(r"^#{1,6} (.+)$", _FENCE.sub("", text), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{link}: no such heading"
