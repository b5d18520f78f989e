"""How ``toxeval compare``'s tables show text in each output format: escaping of user
names (systems, datasets) and bold per format, and CSV cells a spreadsheet will not run
as formulas (:func:`csv_cell`, also used for the report's ``per_category.csv``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: First characters that make a spreadsheet read a CSV cell as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Markup:
    """How one output format shows text (user names included, so escaped) and bold."""

    text: Callable[[str], str]
    bold: Callable[[str], str]
    star: str


def escape_chars(special: Mapping[str, str]) -> Callable[[str], str]:
    return lambda t: "".join(special.get(ch, ch) for ch in t)


def escape_rich(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def escape_html(text: str) -> str:
    import html

    return html.escape(text)


#: Markdown: characters that start emphasis, code, links or HTML, and the cell separator;
#: line ends as spaces (a table row is one line).
MARKDOWN = Markup(
    text=escape_chars({"\n": " ", "\r": " ", **{ch: "\\" + ch for ch in "\\`*_[]<>|"}}),
    bold=lambda t: f"**{t}**",
    star=" (*)",
)
#: LaTeX: every character special to LaTeX; "[" and "*" braced, since a row that starts
#: with them after the previous row's "\\" is read as the line break's optional length or
#: star form; "<", ">", "|" by name (other glyphs in the default font encoding); line ends
#: as spaces; the arrows of the metric labels.
LATEX = Markup(
    text=escape_chars(
        {
            "[": "{[}",
            "]": "{]}",
            "*": "{*}",
            "<": r"\textless{}",
            ">": r"\textgreater{}",
            "|": r"\textbar{}",
            "\n": " ",
            "\r": " ",
            "\\": r"\textbackslash{}",
            "&": r"\&",
            "%": r"\%",
            "$": r"\$",
            "#": r"\#",
            "_": r"\_",
            "{": r"\{",
            "}": r"\}",
            "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}",
            "↑": r"$\uparrow$",
            "↓": r"$\downarrow$",
        }
    ),
    bold=lambda t: rf"\textbf{{{t}}}",
    star=r"$^{*}$",
)
HTML = Markup(text=escape_html, bold=lambda t: f"<b>{t}</b>", star=" (*)")
RICH = Markup(text=escape_rich, bold=lambda t: f"[bold]{t}[/bold]", star=" (*)")


def csv_cell(value: Any) -> Any:
    """A CSV cell: empty for None; user text (system and dataset names) that a
    spreadsheet would run as a formula gets a leading ``'`` so it is shown as text."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def markdown_table(
    caption: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    text_columns: int,
    text: Callable[[str], str] = str,
) -> list[str]:
    """A caption, then a Markdown table of text cells (the first ``text_columns``
    left-aligned, the rest right-aligned), every caption and cell through ``text``."""
    align = "| " + " | ".join("---" if i < text_columns else "---:" for i in range(len(header)))
    lines = [text(caption), "", "| " + " | ".join(header) + " |", align + " |"]
    lines += ["| " + " | ".join(text(c) for c in r) + " |" for r in rows]
    return lines
