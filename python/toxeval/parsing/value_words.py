"""The vocabulary of the value grammar (:mod:`toxeval.parsing.values`): negation,
presence and severity words with their scores, check marks, and the words that introduce
a score or qualify a value. docs/parsing.md lists the same tables for users."""

from __future__ import annotations

import re
from typing import Final

# Plain negations: the category does not apply (0.0, not graded).
_NEGATIVE_WORDS = (
    "no",
    "n",
    "false",
    "f",
    "none",
    "nil",
    "nothing",
    "zero",
    "absent",
    "negative",
    "nope",
    "safe",
    "clean",
    "benign",
    "not toxic",
    "not harmful",
    "not unsafe",
    "n/a",
    "na",
    "not applicable",
    "inapplicable",
    "does not apply",
    "doesn't apply",
    "doesnt apply",
    "not at all",
    "absolutely not",
    "definitely not",
    "certainly not",
    "clearly not",
    "no evidence",
    "no sign",
    "no signs",
    "no indication",
    "no indications",
    "no instance",
    "no instances",
    "no issue",
    "no issues",
    "no violation",
    "no violations",
    "no concern",
    "no concerns",
    "no risk",
    "no match",
    "none at all",
    "not the case",
    "not an issue",
    "not a concern",
    "not really",
    "excluded",
    "ruled out",
    "not included",
    "not involved",
    "not met",
    "free",
    "clear",
    "nein",
    "non",
    "ninguno",
    "ninguna",
    "aucun",
    "aucune",
    "keine",
    "kein",
)
# Words that say a category is there; "not <word>" / "none <word>" / "no <word>" negate.
PRESENCE_WORDS = (
    "present",
    "detected",
    "found",
    "flagged",
    "violated",
    "identified",
    "observed",
    "indicated",
    "evident",
    "apparent",
    "triggered",
    "applicable",
    "relevant",
    "noted",
    "seen",
)
_POSITIVE_WORDS = (
    "yes",
    "y",
    "true",
    "t",
    "positive",
    "applies",
    "unsafe",
    "toxic",
    "harmful",
    "confirmed",
    "yes present",
    "yes detected",
    "si",
    "sí",
    "oui",
    "ja",
    *PRESENCE_WORDS,
)

NEGATIVE_PHRASES: Final[frozenset[str]] = frozenset(
    (
        *_NEGATIVE_WORDS,
        *(f"not {w}" for w in PRESENCE_WORDS),
        *(f"none {w}" for w in PRESENCE_WORDS),
        *(f"nothing {w}" for w in PRESENCE_WORDS),
        *(f"no {w}" for w in ("evidence", "sign", "signs", "indication", "issue", "issues")),
        *(f"no evidence {w}" for w in PRESENCE_WORDS),
        *(f"no {w} {p}" for w in ("issue", "issues", "violation") for p in PRESENCE_WORDS),
    )
)
POSITIVE_PHRASES: Final[frozenset[str]] = frozenset(_POSITIVE_WORDS)

# Check marks and crosses. A mark is a value wherever it stands ("hate ✅", "❌ violence",
# a table cell "✔"), never part of a name: "hate ✘" is a "no", not a mention of hate.
MARKS: Final[dict[str, str]] = {
    **dict.fromkeys("\u2705\u2714\u2713\u2611\U0001f5f8", "yes"),  # ✅ ✔ ✓ ☑ 🗸
    **dict.fromkeys("\u274c\u2718\u2717\u2716\u274e\u2612", "no"),  # ❌ ✘ ✗ ✖ ❎ ☒
}
MARK_RE: Final = re.compile("[" + "".join(MARKS) + "]")

# Severity and likelihood words and their scores. The table is symmetric around 0.5 and
# never reaches 0 or 1: a word grades, only a yes/no (or a number) decides.
DEGREE_WORDS: Final[dict[str, float]] = {
    **dict.fromkeys(
        (
            "very low",
            "extremely low",
            "negligible",
            "minimal",
            "remote",
            "very unlikely",
            "highly unlikely",
            "extremely unlikely",
            "very improbable",
        ),
        0.05,
    ),
    **dict.fromkeys(
        (
            "low",
            "unlikely",
            "not likely",
            "improbable",
            "doubtful",
            "slight",
            "minor",
            "mild",
            "limited",
            "low to moderate",
        ),
        0.2,
    ),
    **dict.fromkeys(
        (
            "possible",
            "possibly",
            "maybe",
            "perhaps",
            "plausible",
            "medium",
            "moderate",
            "borderline",
            "somewhat",
            "some",
        ),
        0.5,
    ),
    **dict.fromkeys(
        (
            "likely",
            "probable",
            "probably",
            "high",
            "significant",
            "strong",
            "considerable",
            "substantial",
            "serious",
            "major",
            "elevated",
            "moderate to high",
        ),
        0.8,
    ),
    **dict.fromkeys(
        (
            "very likely",
            "highly likely",
            "extremely likely",
            "very high",
            "extremely high",
            "severe",
            "extreme",
            "critical",
            "certain",
            "almost certain",
            "definite",
            "definitely",
            "certainly",
        ),
        0.95,
    ),
}
# A degree word may be followed by what it grades: "low risk", "high likelihood".
DEGREE_NOUNS = (
    "risk",
    "likelihood",
    "probability",
    "chance",
    "severity",
    "confidence",
    "level",
    "concern",
    "degree",
    "intensity",
)
# Words that introduce a score: "score 0.2", "confidence: 70%", "likelihood of low".
SCORE_WORDS = (
    "score",
    "scored",
    "probability",
    "prob",
    "p",
    "likelihood",
    "confidence",
    "risk",
    "severity",
    "level",
    "rating",
    "value",
    "toxicity",
    "toxicity score",
    "risk score",
    "risk level",
    "severity level",
    "confidence score",
    "probability score",
)

# Cue words of a negation or a hedge: a gloss that contains one is not a description.
CUE_WORDS = frozenset(
    (
        "no",
        "not",
        "none",
        "nothing",
        "never",
        "without",
        "absent",
        "negative",
        "unlikely",
        "low",
        "n/a",
        "na",
        "false",
        "zero",
        "isn't",
        "isnt",
        "doesn't",
        "doesnt",
        "nor",
        "maybe",
        "possibly",
        "unclear",
        "uncertain",
        "unsure",
        "unknown",
        "excluded",
        "exclude",
        "free",
        "lacks",
        "lacking",
        "ruled",
        "neither",
        "without",
        "ni",
        "sin",
        "sans",
        "kein",
        "keine",
        "nicht",
        "ohne",
        "aucun",
        "aucune",
        "pas",
        "non",
        "nein",
    )
)


# Words with which prose beside an answer takes part of it back or adds to it
# ("Actually, violence also applies", "wait, remove hate", "Correction: only violence").
TAKE_BACK_RE: Final = re.compile(
    r"\b(?:actually|correction|corrected|on (?:second thought|reflection)|also|either|"
    r"instead|rather|however|but|except|retract|revise|revised|mistake|wrong|wait|"
    r"remove|drop|delete|scratch|exclude|only)\b",
    re.IGNORECASE,
)
