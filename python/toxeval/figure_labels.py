"""Category names broken into lines for figures (the HTML report's SVG, the PNG plots).

Names come from users' taxonomies and can be long ids without spaces
(``self_harm_and_suicide_instructions``): a figure that writes them on one line cuts them
at its edge or runs them into their neighbours. :func:`wrap_label` breaks them at their
words, ``_`` and ``-`` included, so each figure can size itself to the lines it draws.
"""

from __future__ import annotations

import re

__all__ = ["wrap_label"]


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def wrap_label(text: str, width: int, max_lines: int = 2) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after spaces,
    underscores, hyphens and slashes (ids such as ``self_harm_instructions`` wrap at
    their words), a word longer than a line cut; at most ``max_lines`` lines, the last
    ending in an ellipsis when text is left out."""
    tokens = [t for t in re.findall(r"[^\s_\-/]*[\s_\-/]?", text) if t]
    lines: list[str] = []
    line = ""
    for tok in tokens:
        while len(tok) > width:  # a word longer than a line: cut it
            if line:
                lines.append(line.rstrip())
                line = ""
            lines.append(tok[:width])
            tok = tok[width:]
        if len((line + tok).rstrip()) > width:
            lines.append(line.rstrip())
            line = tok
        else:
            line += tok
    if line.strip() or not lines:
        lines.append(line.rstrip())
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = _short(lines[-1] + "\u2026", width)
    return lines
