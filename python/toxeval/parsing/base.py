"""The parser's knowledge of the taxonomy: which columns a name, id, alias or mapped code
stands for (cached), the phrases that mean "no category applies", and how two readings of
one output are compared. The readers (lists, Llama Guard, JSON, the dispatcher) build on
:class:`ParserBase`."""

from __future__ import annotations

import re

from toxeval.taxonomy import LabelMapping, Taxonomy, normalize_label

from .answer import MAX_CACHE, MISS, Acc, norm_name, vector
from .result import NullPolicy
from .value_words import TAKE_BACK_RE
from .values import MARK_RE

# Whole outputs (after normalize_label) that mean "no category applies".
_NONE_PHRASES = frozenset(
    normalize_label(p)
    for p in (
        "none",
        "safe",
        "no",
        "nothing",
        "null",
        "nil",
        "n/a",
        "na",
        "empty",
        "benign",
        "harmless",
        "clean",
        "not toxic",
        "non-toxic",
        "nontoxic",
        "not harmful",
        "not unsafe",
        "no categories",
        "no category",
        "no category applies",
        "no categories apply",
        "no labels",
        "no label",
        "no toxicity",
        "no toxicity detected",
        "no toxic content",
        "no harmful content",
        "no violations",
        "no violation",
        "no issues",
        "nothing to flag",
        "nothing detected",
        "nothing found",
        "nothing flagged",
        "no issues found",
        "no issues detected",
        "no violations found",
        "no violations detected",
        "none of the above",
        "none apply",
        "none applies",
        "not applicable",
        "no toxic categories",
        "no harmful categories",
        "no unsafe content",
        "safe content",
        # other languages' "none"
        "ninguna",
        "ninguno",
        "nada",
        "ninguna categoria",
        "aucune",
        "aucun",
        "aucune categorie",
        "rien",
        "keine",
        "keine kategorie",
        "nichts",
    )
)
# "None of the categories apply", "None of these apply", "No category applies", "None of
# them", "No toxic categories found", ... (matched on the normalised text: plurals are
# singular, "applies" is "apply"). The whole answer (or list item) must be the phrase, so
# "None of the categories apply except hate" is not one and never hides "hate".
_NONE_OF_RE = re.compile(
    r"^(?:none(?: of (?:them|these|those|the above|the following"
    r"|(?:the |these |those )?(?:(?:above|following|listed|given|provided|specified|"
    r"mentioned|possible|defined) )?(?:(?:toxicity|toxic|harm|harmful|unsafe|safety|hazard) )?"
    r"(?:category|label|class|option|one)(?: listed| above| given| provided)?))?"
    r"|no (?:(?:toxicity|toxic|harm|harmful|unsafe|safety|hazard) )?(?:category|label|class))"
    r"(?: (?:apply|is applicable|are applicable|applicable|is relevant|are relevant|relevant"
    r"|found|detected|identified|flagged|present|match|matched))?"
    r"(?: here| to (?:this|the|it)(?: (?:text|content|input|message|prompt|response|output"
    r"|comment))?)?$"
)
NONE_SENTENCE_RE = re.compile(
    r"^(?:the |this )?(?:text |content |input |message |prompt |response |output |comment )?"
    r"(?:is |seem |seems |appear |appears )?(?:to be )?(?:completely |entirely )?"
    r"(?:safe|benign|harmless|clean|not toxic|non toxic|nontoxic|not harmful)$"
)

# Unknown names of one answer for which a close category is looked for.
_MAX_SUGGESTED = 16
# Characters stripped from the edges of a name: bullets, quotes, brackets, punctuation.
STRIP_CHARS = " \t-•*+·>#\"'“”‘’`()[]{}.:;!?<>"
# Separators inside one item that names several categories ("hate/harassment").
SUBSPLIT_RE = re.compile(r"\s*/\s*|\s+and\s+|\s*&\s*|\s+or\s+|\s*\+\s*", re.IGNORECASE)


# An unrecognised item of this many words that mentions a category is a sentence.
_SENTENCE_WORDS = 4
# An unrecognised item of at most this many words that suggests no category is a name
# of something the taxonomy may hold under another word ("haine", "Hass", "spam"),
# unless a word of it belongs to the prose or the headings around an answer
# ("After careful review", "Confidence: high", "### Present").
_UNPLACED_WORDS = 3
_PROSE_WORDS = frozenset(
    (
        "a an the of in on to for from by with and or not no this that these those here "
        "there it is are was be been i we my our your after before under following based "
        "careful carefully review reviewed analysis analyzing analysing analyzed analysed "
        "conclusion conclude final answer output result results verdict assessment label "
        "labels category categories present absent detected other others none confidence "
        "score scores severity level risk reason reasoning rationale explanation note "
        "notes summary overall content text message"
    ).split()
)


class ParserBase:
    """A parser's taxonomy, mapping and threshold, and the columns each name stands for."""

    def __init__(
        self,
        taxonomy: Taxonomy,
        mapping: LabelMapping | None,
        threshold: float,
        null: NullPolicy = "unparseable",
    ) -> None:
        self.taxonomy = taxonomy
        self.mapping = mapping
        self.threshold = threshold
        self.omit_nulls = null == "omit"
        self.ids = taxonomy.ids
        self.col = {cid: i for i, cid in enumerate(self.ids)}
        # ``norm`` below is already normalised: look it up without normalising again
        self._resolve_norm = taxonomy.resolve_normalized
        self._names: dict[str, tuple[int, ...] | None] = {}
        self._labelsets: dict[tuple[int, ...], frozenset[str]] = {}
        self._suggestions: dict[str, tuple[tuple[int, ...], str]] = {}
        # True while text is read only to compare it with the answer (the words around a
        # code fence): only its values and errors are looked at, so the categories its
        # unknown names may stand for (notes for the row's reason) are not looked for
        self._comparing = False

    # ---- names

    def resolve(self, name: str) -> tuple[int, ...] | None:
        """Columns named by ``name`` (id, name, alias, mapped code); () for "none"; None if unknown."""
        hit = self._names.get(name, MISS)
        if hit is not MISS:
            return hit  # type: ignore[return-value]
        res = self._resolve_uncached(name)
        if len(self._names) >= MAX_CACHE:
            self._names.clear()
        self._names[name] = res
        return res

    def _resolve_uncached(self, name: str) -> tuple[int, ...] | None:
        cid = self.col.get(name)
        if cid is not None:
            return (cid,)
        if not name.isascii() and MARK_RE.search(name):
            return None  # "hate ✘" is a name and a value, not a name
        norm = norm_name(name)
        if not norm:
            return None
        hit = self._resolve_norm(norm)
        if hit is not None:
            return (self.col[hit],)
        if self.mapping is not None:
            mapped = self.mapping.map(name.strip())
            if mapped is not None:
                cols = tuple(self.col[i] for i in mapped if i in self.col)
                if len(cols) == len(mapped):
                    return cols
        if norm in _NONE_PHRASES or NONE_SENTENCE_RE.match(norm) or _NONE_OF_RE.match(norm):
            return ()
        return None

    def unknown_name(self, acc: Acc, name: str) -> None:
        """Record ``name``, which matches no category, on ``acc``. When it looks like a
        category (a misspelling, ``violance``; an abbreviation, ``misinfo``; a phrase
        that names one, ``hate-adjacent remarks``), that category is unknown on this row,
        never a 0, and the reason says which category was meant."""
        acc.add_unknown(name)
        if len(acc.unknown) > _MAX_SUGGESTED or self._comparing:
            acc.unplaced.append(name)
            return  # a flood of unknown names: the row is partial, suggestions cost time
        cols, how = self.suggest(name)
        words = norm_name(name).split()
        if not cols and 0 < len(words) <= _UNPLACED_WORDS and _PROSE_WORDS.isdisjoint(words):
            # a short name that stands for no category in particular ("haine", "spam"):
            # the category it means, if any, is not known
            acc.unplaced.append(name)
        for c in cols:
            if c not in acc.unsure:
                acc.unsure[c] = None
        if cols:
            short = name.strip()
            short = short if len(short) <= 40 else short[:37] + "..."
            meant = ", ".join(self.ids[c] for c in cols)
            if how == "it mentions" and len(norm_name(name).split()) >= _SENTENCE_WORDS:
                # "Nothing here is violent, hateful, or sexual", "I cannot determine hate,
                # violence, or fraud": a sentence split at its commas is not a label list,
                # so the names between its pieces are not positives
                acc.sentences.append(
                    f"{short!r} is a sentence that mentions {meant}: the answer is prose, "
                    "not a list of categories"
                )
            acc.notes.append(f"{short!r} is not a category ({how} {meant}?): {meant} unknown")
            if how == "it mentions" and TAKE_BACK_RE.search(name):
                # "hate, violence\nCorrection: only violence": the answer changes itself
                acc.sentences.append(f"contradictory: {short!r} takes part of the answer back")

    def suggest(self, name: str) -> tuple[tuple[int, ...], str]:
        """The columns an unrecognised ``name`` may stand for, and how it names them."""
        hit = self._suggestions.get(name)
        if hit is None:
            hit = self._suggest_uncached(name)
            if len(self._suggestions) >= MAX_CACHE:
                self._suggestions.clear()
            self._suggestions[name] = hit
        return hit

    def _suggest_uncached(self, name: str) -> tuple[tuple[int, ...], str]:
        norm = norm_name(name)
        if not norm or len(norm) > 200:
            return (), ""
        if len(norm) <= 40:
            close = self.taxonomy.suggest(name.strip(STRIP_CHARS))
            if close is not None:
                return (self.col[close],), "did you mean"
            if len(norm) >= 4 and " " not in norm:
                # an abbreviation: the start of exactly one category's id, name or alias
                starts = {
                    cid
                    for key, cid in self.taxonomy.labels().items()
                    if any(w.startswith(norm) for w in key.split())
                }
                if len(starts) == 1:
                    return (self.col[starts.pop()],), "short for"
        found = self.mentions(norm)
        return tuple(sorted(found)), "it mentions"

    def mentions(self, norm: str) -> set[int]:
        """Columns of the categories named by a run of up to four words of ``norm`` (a
        normalised text): "hate speech is present" mentions hate."""
        words = norm.split()
        found: set[int] = set()
        for n in (4, 3, 2, 1):
            for i in range(len(words) - n + 1):
                cid = self._resolve_norm(" ".join(words[i : i + n]))
                if cid is not None:
                    found.add(self.col[cid])
        return found

    def labelset(self, cols: tuple[int, ...]) -> frozenset[str]:
        hit = self._labelsets.get(cols)
        if hit is None:
            hit = frozenset(self.ids[c] for c in cols)
            self._labelsets[cols] = hit
        return hit

    def resolve_name(self, name: str) -> tuple[int, ...] | None:
        """Columns of a category name, or of every part of "hate/harassment"; None if not."""
        hit = self.resolve(name)
        if hit is not None or len(name) > 120:
            return hit
        parts = [x.strip(STRIP_CHARS) for x in SUBSPLIT_RE.split(name)]
        parts = [x for x in parts if x]
        if len(parts) < 2:
            return None
        cols: list[int] = []
        for x in parts:
            h = self.resolve(x)
            if not h:
                return None  # "none/hate" names no pair of categories
            cols.extend(h)
        return tuple(cols)

    def agree(self, first: Acc, other: Acc, what: str) -> None:
        """Record an error on ``first`` if ``other`` (a second answer) reads differently."""
        a, b = vector(first), vector(other)
        if a != b and not first.errors:
            first.errors.append(
                f"contradictory: two {what} disagree ({self._describe(a)} vs {self._describe(b)})"
            )

    def _describe(self, vec: tuple[tuple[int, float], ...]) -> str:
        if not vec:
            return "no category"
        return ", ".join(f"{self.ids[c]}={v:g}" for c, v in vec)
