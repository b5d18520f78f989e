"""The plain form of an answer with non-ASCII characters, before the parser reads it:
NFKC, invisible characters removed, and Latin lookalikes in mixed-script words made
Latin (docs/parsing.md, "Values after a category name"). Kept apart so that the parser's
reading rules and this one normalisation step stay small."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["plain_unicode"]

# Characters that change nothing a reader sees: zero-width spaces and joiners, the word
# joiner, the byte-order mark, the emoji variation selector, the soft hyphen.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\ufe0f\u00ad"))


def plain_unicode(s: str) -> str:
    """NFKC (full-width letters, digits and colons, non-breaking spaces become their
    plain forms) without invisible characters, so that "ha\u200bte：０.９" reads as
    "hate:0.9"; in a word that mixes Latin letters with Cyrillic or Greek ones that look
    the same, those are Latin ("Nоt present" with a Cyrillic "о" is "Not present", never
    an unread cue before a list read as positives); a word all in Cyrillic or Greek is
    left as it is. Only non-ASCII outputs pay for it."""
    s = unicodedata.normalize("NFKC", s).translate(_INVISIBLE).strip()
    if _LOOKALIKE_RE.search(s) is not None:
        s = _MIXED_WORD_RE.sub(_latin_word, s)
    return s


# Cyrillic and Greek letters drawn like Latin ones (the confusables a model's answer or a
# hostile one may hold), and the Latin letter each stands for.
_LOOKALIKES = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u051b\u051d"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0406"
    "\u0408\u0405\u03bf\u03b1\u03b9\u03ba\u03bd\u03c1\u03c5\u0391\u0392\u0395\u0396"
    "\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
    "aeopcyxijsdqwABEKMHOPCTYXIJSoaikvpuABEZHIKMNOPTYX",
)
_LOOKALIKE_RE = re.compile("[" + "".join(map(chr, _LOOKALIKES)) + "]")
_MIXED_WORD_RE = re.compile(r"\w+")


def _latin_word(m: re.Match[str]) -> str:
    word = m.group()
    if word.isascii() or not any("a" <= c.lower() <= "z" for c in word):
        return word
    return word.translate(_LOOKALIKES)
