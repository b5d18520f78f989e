"""Write tests/data/chat_answers.jsonl: a held-out corpus of chat-model answers to a
toxicity-classification prompt, each with the reading a careful human gives it.

Run from the repository root: ``python tests/data/make_chat_answers.py`` (deterministic).

Nothing here comes from the parser. The answers are written by hand in the habits of
several model families (GPT-style prose, Claude-style hedged prose, Llama / Mistral lists,
markdown tables, YAML, JSON in prose and code fences, check marks, negations, Spanish,
French and German phrasing, typos, refusals): ``HAND`` lists whole answers; ``TEMPLATES``
are hand-written answer shapes that render a hand-chosen reading (the label sets of
``READINGS``) with the names a model would use. The reading of each answer follows the
rule of docs/parsing.md ("What an answer says about each category"):

- a label list ("Categories: x, y", "none", "safe") is complete: what it does not list
  is negative;
- "name: value" pairs, a table, a JSON object speak only for the categories they name;
  the others are unknown;
- a negated list ("Not present: x, y", "No x or y") makes x, y negative; the others are
  unknown unless a complete positive list stands beside it;
- a name that is not a category but close to one leaves that category unknown;
- an answer with no reading (a refusal, a hedge, a question back) is expected
  unparseable.

One JSON object per line::

    {"text": ..., "style": ..., "note": ...,
     "reading": null | {"positive": [...], "negative": [...], "unknown": [...],
                        "any": [...]}}

``reading`` null: the answer says nothing readable; the parser should refuse it.
``any``: a category whose value is a hedge ("possibly") that may be read either way.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).with_name("chat_answers.jsonl")
IDS = (
    "hate harassment violence self_harm sexual sexual_minors weapons drugs fraud "
    "cybercrime privacy crime extremism misinformation profanity"
).split()

# Names a model writes for each category (id, display name, aliases it would use).
NAMES = {
    "hate": ["hate", "Hate", "hate speech", "Hate speech", "hateful content", "racism"],
    "harassment": ["harassment", "Harassment", "bullying", "insults", "Harassment/bullying"],
    "violence": ["violence", "Violence", "threats", "violent content", "graphic violence"],
    "self_harm": ["self_harm", "Self-harm", "self harm", "suicide", "self-injury"],
    "sexual": ["sexual", "Sexual content", "sexual content", "adult content", "NSFW"],
    "sexual_minors": [
        "sexual_minors",
        "Sexual content involving minors",
        "CSAM",
        "child sexual content",
    ],
    "weapons": ["weapons", "Weapons", "firearms", "explosives", "guns"],
    "drugs": ["drugs", "Drugs", "illegal drugs", "narcotics", "drug trafficking"],
    "fraud": ["fraud", "Fraud", "Fraud and scams", "scams", "phishing"],
    "cybercrime": ["cybercrime", "Cybercrime", "hacking", "malware", "cyber crime"],
    "privacy": ["privacy", "Privacy violations", "doxxing", "personal information", "PII"],
    "crime": ["crime", "Other non-violent crime", "theft", "illegal activity", "non-violent crime"],
    "extremism": [
        "extremism",
        "Violent extremism",
        "terrorism",
        "extremist propaganda",
        "radicalization",
    ],
    "misinformation": [
        "misinformation",
        "Misinformation",
        "disinformation",
        "fake news",
        "conspiracy theory",
    ],
    "profanity": ["profanity", "Profanity", "swearing", "vulgarity", "foul language"],
}


def R(pos: str = "", neg: str = "", rest: str = "unknown", any_: str = "") -> dict[str, list[str]]:
    """A reading: positives, negatives, hedged categories; the rest ``rest``."""
    p, n, a = pos.split(), neg.split(), any_.split()
    for c in p + n + a:
        assert c in IDS, c
    assert not (set(p) & set(n)), (p, n)
    others = [c for c in IDS if c not in p and c not in n and c not in a]
    out = {"positive": p, "negative": list(n), "unknown": [], "any": a}
    out["negative" if rest == "negative" else "unknown"] += others
    return out


ALL = " ".join(IDS)

# (style, text, reading or None, note)
HAND: list[tuple[str, str, dict[str, list[str]] | None, str]] = [
    # -- the failures issue 33 names
    ("negation", "Not present: hate, violence", R(neg="hate violence"), "not present list"),
    (
        "negation",
        "Categories not present: hate, violence",
        R(neg="hate violence"),
        "lead + not present",
    ),
    ("negation", "Negative for: hate, violence", R(neg="hate violence"), "negative for"),
    ("negation", "None of: hate, violence", R(neg="hate violence"), "none of"),
    ("negation", "No hate, violence or harassment.", R(neg="hate violence harassment"), "no list"),
    (
        "negation",
        "Free of hate, violence, harassment.",
        R(neg="hate violence harassment"),
        "free of",
    ),
    (
        "negation",
        "Applies: fraud. Does not apply: hate, violence.",
        R("fraud", "hate violence", "negative"),
        "applies + does not apply",
    ),
    (
        "table",
        "| Hate | Violence | Fraud |\n|---|---|---|\n| no | no | yes |",
        R("fraud", "hate violence"),
        "table across",
    ),
    (
        "table",
        "| Hate | Violence |\n|------|----------|\n| ✅ | ❌ |",
        R("hate", "violence"),
        "table across marks",
    ),
    (
        "table",
        "| Hate | Violence |\n|---|---|\n| 0.1 | 0.9 |",
        R("violence", "hate"),
        "table across scores",
    ),
    ("pairs", "Hate: none, Violence: yes", R("violence", "hate"), "pairs leave the rest unknown"),
    ("pairs", "Hate: none", R(neg="hate"), "one pair"),
    ("json", '{"hate": 0.0}', R(neg="hate"), "json one key"),
    (
        "typo",
        "hate, violance",
        R("hate", rest="negative")
        | {"unknown": ["violence"], "negative": [c for c in IDS if c not in ("hate", "violence")]},
        "misspelt violence",
    ),
    (
        "typo",
        "Self harm, misinfo",
        R("self_harm", rest="negative")
        | {
            "unknown": ["misinformation"],
            "negative": [c for c in IDS if c not in ("self_harm", "misinformation")],
        },
        "abbreviation",
    ),
    # -- GPT-style prose
    (
        "gpt-prose",
        "Based on my analysis, the text contains hate speech targeting an ethnic group.\n\nCategories: hate",
        R("hate", rest="negative"),
        "prose then categories",
    ),
    (
        "gpt-prose",
        "After reviewing the message, I found no evidence of violence, self-harm or sexual content.",
        R(neg="violence self_harm sexual"),
        "no evidence of",
    ),
    (
        "gpt-prose",
        "The text does not contain hate speech or harassment.",
        R(neg="hate harassment"),
        "does not contain",
    ),
    ("gpt-prose", "This message is not hateful.", R(neg="hate"), "not hateful"),
    (
        "gpt-prose",
        "The content is safe. It contains no profanity, no threats and no personal information.",
        R(neg=ALL),
        "safe plus negations",
    ),
    (
        "gpt-prose",
        "Classification: harassment, profanity\n\nExplanation: the user insults the recipient using several curse words.",
        R("harassment profanity", rest="negative"),
        "classification + explanation",
    ),
    (
        "gpt-prose",
        "**Categories:** fraud, cybercrime\n\n**Reasoning:** The message is a phishing attempt that asks for login credentials.",
        R("fraud cybercrime", rest="negative"),
        "markdown lead",
    ),
    ("gpt-prose", "Final answer: none", R(neg=ALL), "final answer none"),
    ("gpt-prose", "The text is benign.", R(neg=ALL), "benign"),
    (
        "gpt-prose",
        "There is no hate speech, harassment or violence in this text.",
        R(neg="hate harassment violence"),
        "there is no",
    ),
    (
        "gpt-prose",
        "Detected categories: self-harm.\nNot detected: violence, weapons, drugs.",
        R("self_harm", "violence weapons drugs", "negative"),
        "detected / not detected",
    ),
    (
        "gpt-prose",
        "I'd label this as misinformation.",
        None,
        "prose verdict the parser need not read",
    ),
    ("gpt-prose", "The text contains hate speech.", None, "prose only"),
    ("gpt-prose", "It is difficult to say whether this is harassment.", None, "hedge"),
    # -- Claude-style hedged prose
    (
        "claude-prose",
        "I don't see any hate speech or harassment here. The message reads as a friendly reminder.",
        None,
        "hedged prose, not a list the parser must read",
    ),
    (
        "claude-prose",
        "Looking at this carefully, I'd say it could be harassment, but it's borderline.",
        None,
        "borderline hedge",
    ),
    ("claude-prose", "I'm not entirely sure, but this might involve self-harm.", None, "unsure"),
    (
        "claude-prose",
        "This one is tricky. Hate: possibly. Violence: no.",
        R(neg="violence", any_="hate"),
        "hedge and a no",
    ),
    (
        "claude-prose",
        "Neither hate nor harassment applies here.",
        R(neg="hate harassment"),
        "neither nor",
    ),
    ("claude-prose", "The text is free from violence and threats.", R(neg="violence"), "free from"),
    (
        "claude-prose",
        "Without any sexual content or profanity, this text seems fine to me.",
        R(neg="sexual profanity"),
        "without",
    ),
    (
        "claude-prose",
        "I'd flag this for harassment, though not for hate.",
        R("harassment", "hate"),
        "though not",
    ),
    (
        "claude-prose",
        "Categories: harassment\n\n(Not hate: the insult is personal, not about a protected group.)",
        R("harassment", rest="negative"),
        "category plus aside",
    ),
    # -- Llama / Mistral lists
    ("llama-list", "hate, harassment", R("hate harassment", rest="negative"), "plain ids"),
    ("llama-list", "- Hate\n- Harassment", R("hate harassment", rest="negative"), "bullets"),
    ("llama-list", "1. Violence\n2. Weapons", R("violence weapons", rest="negative"), "numbered"),
    ("llama-list", "unsafe\nS1", R("violence", rest="negative"), "llama guard"),
    ("llama-list", "safe", R(neg=ALL), "llama guard safe"),
    ("llama-list", "* drugs\n* crime", R("drugs crime", rest="negative"), "stars"),
    (
        "mistral-list",
        "The categories that apply are:\n- Fraud and scams\n- Privacy violations",
        R("fraud privacy", rest="negative"),
        "lead + bullets",
    ),
    ("mistral-list", "Categories: None", R(neg=ALL), "none"),
    ("mistral-list", "Output: extremism", R("extremism", rest="negative"), "output lead"),
    (
        "mistral-list",
        "Labels: misinformation; profanity",
        R("misinformation profanity", rest="negative"),
        "semicolons",
    ),
    # -- pairs, YAML
    (
        "yaml",
        "hate: false\nharassment: true\nviolence: false",
        R("harassment", "hate violence"),
        "yaml booleans",
    ),
    (
        "yaml",
        "categories:\n  - hate\n  - violence",
        R("hate violence", rest="negative"),
        "yaml list",
    ),
    (
        "yaml",
        "hate: no\nharassment: no\nviolence: no\nself_harm: no\nsexual: no\nsexual_minors: no\nweapons: no\ndrugs: no\nfraud: yes\ncybercrime: no\nprivacy: no\ncrime: no\nextremism: no\nmisinformation: no\nprofanity: no",
        R(
            "fraud",
            "hate harassment violence self_harm sexual sexual_minors weapons drugs cybercrime privacy crime extremism misinformation profanity",
        ),
        "all fifteen pairs",
    ),
    ("pairs", "Hate - no\nViolence - yes", R("violence", "hate"), "dash pairs"),
    ("pairs", "Hate: Not present\nHarassment: Present", R("harassment", "hate"), "present words"),
    ("pairs", "hate (0.92), violence (0.05)", R("hate", "violence"), "scores in parens"),
    ("pairs", "Self-harm: 3/10\nDrugs: 8/10", R("drugs", "self_harm"), "fractions"),
    ("pairs", "Hate: ✅\nViolence: ❌", R("hate", "violence"), "marks"),
    # -- JSON
    ("json", '{"hate": true, "violence": false}', R("hate", "violence"), "json booleans"),
    (
        "json",
        '{"categories": ["hate", "violence"]}',
        R("hate violence", rest="negative"),
        "json container",
    ),
    ("json", '["fraud"]', R("fraud", rest="negative"), "json list"),
    (
        "json",
        'Sure! Here is the classification:\n```json\n{"harassment": 0.8, "hate": 0.1}\n```',
        R("harassment", "hate"),
        "fenced json",
    ),
    ("json", 'My assessment: {"unsafe": false}', R(neg=ALL), "safe verdict"),
    ("json", '{"safe": true}', R(neg=ALL), "safe true"),
    ("json", '{"violance": 0.9}', None, "misspelt key only"),
    # -- refusals and junk
    ("refusal", "I'm sorry, but I can't help with classifying this content.", None, "refusal"),
    ("refusal", "As an AI language model, I cannot make that determination.", None, "refusal"),
    ("refusal", "I won't categorize this.", None, "refusal"),
    (
        "refusal",
        "Could you clarify which categories you want me to consider?",
        None,
        "question back",
    ),
    ("refusal", "", None, "empty"),
    ("refusal", "Lo siento, no puedo ayudar con eso.", None, "spanish refusal"),
    # -- mixed languages
    ("spanish", "Categorías: hate, violence", R("hate violence", rest="negative"), "spanish lead"),
    ("spanish", "No se detecta hate ni violence.", R(neg="hate violence"), "no se detecta"),
    ("spanish", "Sin hate, sin harassment.", R(neg="hate harassment"), "sin"),
    ("french", "Catégories: fraud", R("fraud", rest="negative"), "french lead"),
    (
        "french",
        "Aucune des catégories suivantes: hate, violence",
        R(neg="hate violence"),
        "aucune des",
    ),
    ("french", "Pas de hate ni de violence.", R(neg="hate violence"), "pas de"),
    ("german", "Kategorien: drugs, crime", R("drugs crime", rest="negative"), "german lead"),
    ("german", "Keine der Kategorien: hate, violence", R(neg="hate violence"), "keine der"),
    ("german", "Ohne hate oder violence.", R(neg="hate violence"), "ohne"),
    # -- negations, more
    (
        "negation",
        "None of the following apply: hate, harassment, violence",
        R(neg="hate harassment violence"),
        "none of the following apply",
    ),
    ("negation", "Excluded: hate, violence", R(neg="hate violence"), "excluded"),
    (
        "negation",
        "Not flagged: sexual, sexual_minors",
        R(neg="sexual sexual_minors"),
        "not flagged",
    ),
    ("negation", "❌ hate, violence", R(neg="hate violence"), "cross before list"),
    (
        "negation",
        "False: hate, violence\nTrue: profanity",
        R("profanity", "hate violence", "negative"),
        "true/false leads",
    ),
    ("negation", "hate, violence: not present", R(neg="hate violence"), "names then negation"),
    ("negation", "Hate and violence are not present.", R(neg="hate violence"), "copula negation"),
    (
        "negation",
        "Present: fraud; absent: hate, violence",
        R("fraud", "hate violence", "negative"),
        "present; absent",
    ),
    (
        "negation",
        "No hate. No violence. Harassment: yes.",
        R("harassment", "hate violence"),
        "sentences",
    ),
    (
        "negation",
        "The message contains no threats of violence.",
        None,
        "threats of violence: not a clean list",
    ),
    ("negation", "No issues with hate that I can see.", None, "no issues with"),
    ("negation", "hate, violence: no, fraud: yes", R("fraud", "hate violence"), "names then pairs"),
]

# A second, adversarial pass: phrasings written to break the parser after it read the
# answers above (docs/parsing.md counts what they found).
ADVERSARIAL: list[tuple[str, str, dict[str, list[str]] | None, str]] = [
    ("adv-negation", "Hate: N/A, Violence: N/A", R(neg="hate violence"), "n/a pairs"),
    (
        "adv-negation",
        "No violent content; however, there is profanity.",
        R("profanity", "violence"),
        "however positive",
    ),
    ("adv-negation", "No profanity detected.", R(neg="profanity"), "no X detected"),
    (
        "adv-negation",
        "Profanity: none detected. Harassment: none detected.",
        R(neg="profanity harassment"),
        "none detected pairs",
    ),
    (
        "adv-negation",
        "The text does not include hate speech, threats, or sexual content.",
        R(neg="hate violence sexual"),
        "does not include",
    ),
    (
        "adv-negation",
        "It doesn't contain any hate or harassment.",
        R(neg="hate harassment"),
        "doesn't contain any",
    ),
    (
        "adv-negation",
        "Contains no drugs or weapons references.",
        None,
        "references: not a clean list",
    ),
    ("adv-negation", "Not hate speech.", R(neg="hate"), "not X"),
    ("adv-negation", "Not harassment, not violence.", R(neg="harassment violence"), "not X, not Y"),
    ("adv-negation", "Neither fraud nor scams nor phishing.", R(neg="fraud"), "neither nor nor"),
    (
        "adv-negation",
        "hate - no, violence - no, fraud - yes",
        R("fraud", "hate violence"),
        "dash pairs on one line",
    ),
    ("adv-negation", "❌ Hate\n❌ Violence\n✅ Fraud", R("fraud", "hate violence"), "cross lines"),
    ("adv-negation", "✗ hate ✗ violence", None, "two crosses one line"),
    ("adv-negation", "Hate ❌ Violence ❌ Fraud ✅", None, "marks run on"),
    ("adv-negation", "No category applies.", R(neg=ALL), "no category applies"),
    ("adv-negation", "None.", R(neg=ALL), "none."),
    ("adv-negation", "Nope, nothing here.", None, "nope prose"),
    ("adv-negation", "Not toxic.", R(neg=ALL), "not toxic"),
    ("adv-negation", "Violence: not applicable", R(neg="violence"), "not applicable pair"),
    (
        "adv-negation",
        "The following categories do NOT apply: hate, violence, sexual.",
        R(neg="hate violence sexual"),
        "caps NOT",
    ),
    ("adv-negation", "NOT PRESENT: HATE, VIOLENCE", R(neg="hate violence"), "all caps"),
    ("adv-negation", "Absent: self-harm, drugs", R(neg="self_harm drugs"), "absent lead"),
    ("adv-negation", "Ruled out: extremism, terrorism", R(neg="extremism"), "ruled out"),
    ("adv-negation", "Clear of misinformation.", R(neg="misinformation"), "clear of"),
    ("adv-negation", "Lacks any profanity.", R(neg="profanity"), "lacks"),
    ("adv-negation", "Zero violence.", R(neg="violence"), "zero"),
    (
        "adv-negation",
        "hate: false, violence: false, fraud: true",
        R("fraud", "hate violence"),
        "bool pairs line",
    ),
    ("adv-negation", "hate=0 violence=0 fraud=1", None, "space-separated assignments"),
    ("adv-negation", "Hate? No. Violence? No. Fraud? Yes.", None, "question-answer prose"),
    ("adv-negation", "Is it hate? No.", None, "question"),
    (
        "adv-negation",
        "There's no harassment but there is hate.",
        R(neg="harassment", any_="hate"),
        "but there is",
    ),
    (
        "adv-negation",
        "No hate speech was found in the text.",
        R(neg="hate"),
        "was found in the text",
    ),
    ("adv-negation", "I found no evidence of fraud.", R(neg="fraud"), "I found no evidence of"),
    (
        "adv-negation",
        "The message is free from hate speech and harassment, but contains profanity.",
        R(neg="hate harassment", any_="profanity"),
        "free from but contains",
    ),
    ("adv-negation", "Not present - hate, violence", R(neg="hate violence"), "dash after cue"),
    (
        "adv-negation",
        "Not present:\n- hate\n- violence",
        R(neg="hate violence"),
        "cue then bullets",
    ),
    (
        "adv-negation",
        "Present:\n- fraud\nNot present:\n- hate\n- violence",
        R("fraud", "hate violence", "negative"),
        "present/not present sections with bullets",
    ),
    ("adv-negation", "Categories not detected: all except fraud", None, "all except"),
    ("adv-negation", "None except fraud", None, "none except"),
    ("adv-negation", "No, except for mild profanity.", None, "no except"),
    ("adv-negation", "Without doubt, this is hate speech.", None, "without doubt"),
    ("adv-negation", "No doubt: hate.", None, "no doubt"),
    ("adv-negation", "Not only hate but also violence.", None, "not only"),
    ("adv-negation", "Hate: no (the slur is quoted, not used)", R(neg="hate"), "no with gloss"),
    ("adv-negation", "Violence (no)", R(neg="violence"), "paren no"),
    ("adv-negation", "Violence - not really", R(neg="violence"), "not really"),
    ("adv-negation", "violence: nope", R(neg="violence"), "nope value"),
    ("adv-negation", "violence: Negative", R(neg="violence"), "Negative value"),
    ("adv-negation", "violence – none", R(neg="violence"), "en dash none"),
    ("adv-negation", "Hate: 0\nViolence: 0\nFraud: 1", R("fraud", "hate violence"), "0/1 pairs"),
    # tables
    (
        "adv-table",
        "| hate | violence |\n| --- | --- |\n| No | No |",
        R(neg="hate violence"),
        "across both no",
    ),
    (
        "adv-table",
        "|Hate|Violence|Fraud|\n|:-:|:-:|:-:|\n|❌|❌|✔️|",
        R("fraud", "hate violence"),
        "compact across, emoji variant",
    ),
    (
        "adv-table",
        "| Category | Detected |\n|---|---|\n| Hate | ✅ |\n| Violence | ❌ |",
        R("hate", "violence"),
        "down with marks",
    ),
    (
        "adv-table",
        "| Category | Score |\n|---|---|\n| hate | 0.91 |\n| violence | 0.02 |\n| fraud | 0.10 |",
        R("hate", "violence fraud"),
        "down scores",
    ),
    (
        "adv-table",
        "| Hate | Violence |\n|---|---|\n| yes | yes |\n",
        R("hate violence"),
        "across trailing newline",
    ),
    ("adv-table", "| Hate | Violence |\n|---|---|\n| Y | N |", R("hate", "violence"), "Y/N"),
    ("adv-table", "| Hate | Violence |\n|---|---|\n| 1 | 0 |", R("hate", "violence"), "1/0 across"),
    (
        "adv-table",
        "| Hate | Violence |\n|---|---|\n| high | low |",
        R("hate", "violence"),
        "high/low across",
    ),
    (
        "adv-table",
        "| Hate | Violence |\n|---|---|\n| yes, a slur | no |",
        R("hate", "violence"),
        "glossed cell",
    ),
    ("adv-table", "| Hate | Violence |\n|---|---|\n| | no |", None, "empty cell"),
    (
        "adv-table",
        "| Label | Present? |\n|---|---|\n| Harassment | Yes |\n| Profanity | Yes |",
        R("harassment profanity"),
        "Present? header",
    ),
    (
        "adv-table",
        "| Category | Verdict | Notes |\n|---|---|---|\n| Hate | No | quoted slur |\n| Harassment | Yes | insults the user |",
        R("harassment", "hate"),
        "verdict + notes",
    ),
    (
        "adv-table",
        "Here's the breakdown:\n\n| Category | Applies |\n|---|---|\n| Fraud | Yes |\n| Cybercrime | No |\n\nOverall: unsafe.",
        R("fraud", "cybercrime"),
        "table with prose around",
    ),
    # YAML / JSON
    ("adv-yaml", "hate: no\nviolence: no\n", R(neg="hate violence"), "yaml no"),
    (
        "adv-yaml",
        "---\ncategories: [hate, violence]\n",
        R("hate violence", rest="negative"),
        "yaml flow list",
    ),
    ("adv-yaml", "result:\n  hate: true\n  violence: false", R("hate", "violence"), "nested yaml"),
    ("adv-yaml", "categories: []", R(neg=ALL), "yaml empty list"),
    ("adv-json", '{"hate": "no", "violence": "yes"}', R("violence", "hate"), "json yes/no strings"),
    (
        "adv-json",
        '{"hate": "not present", "violence": "present"}',
        R("violence", "hate"),
        "json presence strings",
    ),
    (
        "adv-json",
        '{"flagged": true, "categories": {"hate": true, "violence": false}}',
        R("hate", "violence"),
        "openai style",
    ),
    (
        "adv-json",
        '{"categories": ["hate"], "confidence": 0.9}',
        R("hate", rest="negative"),
        "container + confidence",
    ),
    (
        "adv-json",
        '```\n["harassment", "profanity"]\n```',
        R("harassment profanity", rest="negative"),
        "plain fence list",
    ),
    ("adv-json", 'The answer is {"violence": 0.7}.', R("violence"), "json in sentence"),
    ("adv-json", '{"hate": 0.2, "violance": 0.9}', R(neg="hate"), "misspelt key, graded"),
    (
        "adv-json",
        '{"Hate Speech": true, "Self Harm": false}',
        R("hate", "self_harm"),
        "spaced keys",
    ),
    ("adv-json", '{"labels": []}', R(neg=ALL), "empty labels"),
    ("adv-json", "[]", R(neg=ALL), "empty list"),
    (
        "adv-json",
        '{"safe": false, "categories": ["fraud", "phishing"]}',
        R("fraud", rest="negative"),
        "alias dup",
    ),
    # lists
    ("adv-list", "HATE, HARASSMENT", R("hate harassment", rest="negative"), "caps list"),
    (
        "adv-list",
        "hate,harassment,violence",
        R("hate harassment violence", rest="negative"),
        "no spaces",
    ),
    ("adv-list", "hate and harassment", R("hate harassment", rest="negative"), "and"),
    ("adv-list", "Hate / Harassment", R("hate harassment", rest="negative"), "slash"),
    ("adv-list", "• Hate\n• Violence", R("hate violence", rest="negative"), "bullet dot"),
    ("adv-list", "a) fraud\nb) privacy", R("fraud privacy", rest="negative"), "lettered"),
    (
        "adv-list",
        "Categories: `hate`, `harassment`",
        R("hate harassment", rest="negative"),
        "backticks",
    ),
    ("adv-list", "Categories: hate.", R("hate", rest="negative"), "trailing period"),
    ("adv-list", "Category - hate", R("hate", rest="negative"), "dash lead"),
    ("adv-list", "Labels:\nhate\nviolence", R("hate violence", rest="negative"), "lead then lines"),
    ("adv-list", "The applicable categories are hate and violence.", None, "prose list"),
    (
        "adv-list",
        "Hate, maybe violence",
        R("hate", rest="negative", any_="violence"),
        "maybe violence",
    ),
    ("adv-list", "hate (possibly violence)", None, "possibly violence"),
    ("adv-list", "hate?", None, "question mark"),
    ("adv-list", "Possibly hate.", None, "possibly hate"),
    ("adv-list", "Likely harassment.", None, "likely harassment prose"),
    # typos and abbreviations
    (
        "adv-typo",
        "hate, harrasment",
        R("hate", rest="negative")
        | {
            "negative": [c for c in IDS if c not in ("hate", "harassment")],
            "unknown": ["harassment"],
        },
        "harrasment",
    ),
    ("adv-typo", "Voilence: yes", None, "misspelt pair key only"),
    ("adv-typo", "Hate: no\nViolance: no", R(neg="hate"), "misspelt negative pair"),
    (
        "adv-typo",
        "cyber crime, extremisim",
        R("cybercrime", rest="negative")
        | {
            "negative": [c for c in IDS if c not in ("cybercrime", "extremism")],
            "unknown": ["extremism"],
        },
        "extremisim",
    ),
    ("adv-typo", "fraud, selfharm", R("fraud self_harm", rest="negative"), "selfharm alias"),
    ("adv-typo", "Categories: hte", None, "hte only"),
    ("adv-typo", "sexaul content", None, "sexaul content only"),
    ("adv-typo", "privacy, doxing", R("privacy", rest="negative"), "doxing alias"),
    ("adv-typo", "harass", None, "abbreviation only"),
    (
        "adv-typo",
        "hate, misinf",
        R("hate", rest="negative")
        | {
            "negative": [c for c in IDS if c not in ("hate", "misinformation")],
            "unknown": ["misinformation"],
        },
        "misinf",
    ),
    # languages
    ("adv-spanish", "Categorías: ninguna", R(neg=ALL), "ninguna"),
    ("adv-spanish", "Ninguna de las categorías aplica.", None, "ninguna de las categorias aplica"),
    ("adv-spanish", "Respuesta: fraud", R("fraud", rest="negative"), "respuesta"),
    ("adv-spanish", "Sin violence.", R(neg="violence"), "sin"),
    ("adv-spanish", "hate: sí\nviolence: no", R("hate", "violence"), "sí"),
    ("adv-french", "Réponse : hate", R("hate", rest="negative"), "réponse"),
    ("adv-french", "Sans violence ni hate.", R(neg="hate violence"), "sans ni"),
    ("adv-french", "hate : oui\nviolence : non", R("hate", "violence"), "oui/non"),
    ("adv-french", "Aucune catégorie.", R(neg=ALL), "aucune categorie"),
    ("adv-german", "Antwort: hate", R("hate", rest="negative"), "antwort"),
    ("adv-german", "Keine hate, keine violence.", R(neg="hate violence"), "keine x keine y"),
    ("adv-german", "hate: ja\nviolence: nein", R("hate", "violence"), "ja/nein"),
    ("adv-german", "Weder hate noch violence.", R(neg="hate violence"), "weder noch"),
    ("adv-german", "Keine Kategorie trifft zu.", None, "keine kategorie trifft zu"),
    # prose families
    (
        "adv-gpt",
        "**Classification:** Safe\n\n**Explanation:** The text is a recipe.",
        R(neg=ALL),
        "classification safe",
    ),
    (
        "adv-gpt",
        "Verdict: unsafe\nCategories: violence, weapons",
        R("violence weapons", rest="negative"),
        "verdict unsafe then cats",
    ),
    ("adv-gpt", "Verdict: safe\nCategories: none", R(neg=ALL), "verdict safe none"),
    ("adv-gpt", "Verdict: safe\nCategories: hate", None, "contradiction"),
    (
        "adv-gpt",
        "1. Hate: No\n2. Harassment: Yes\n3. Violence: No",
        R("harassment", "hate violence"),
        "numbered pairs",
    ),
    (
        "adv-gpt",
        "- **Hate:** No\n- **Violence:** Yes — explicit threat",
        R("violence", "hate"),
        "bold pairs em dash gloss",
    ),
    ("adv-gpt", "Hate: No. Violence: Yes.", R("violence", "hate"), "pairs as sentences"),
    ("adv-gpt", "Sure! The categories are: fraud.", R("fraud", rest="negative"), "sure lead"),
    (
        "adv-gpt",
        "After analyzing, I conclude: harassment",
        R("harassment", rest="negative"),
        "conclude lead",
    ),
    (
        "adv-gpt",
        "Answer: harassment\n\nNote: no hate speech is present.",
        R("harassment", rest="negative"),
        "answer + note negation",
    ),
    (
        "adv-claude",
        "I'd put this under harassment. I don't think it rises to hate.",
        None,
        "hedged prose",
    ),
    (
        "adv-claude",
        "Categories: harassment (not hate — the insult isn't about identity)",
        None,
        "paren with negation and other name",
    ),
    (
        "adv-claude",
        "Categories: harassment\nConfidence: high",
        R("harassment", rest="negative"),
        "confidence line",
    ),
    ("adv-claude", "This doesn't seem to fit any category.", None, "doesn't fit any"),
    ("adv-claude", "Honestly, none of these apply.", R(neg=ALL), "honestly none"),
    ("adv-llama", "unsafe\nS1,S9", R("violence weapons", rest="negative"), "lg codes"),
    (
        "adv-llama",
        "UNSAFE\nS2",
        R("crime fraud cybercrime drugs weapons", rest="negative"),
        "lg caps, S2 maps to five",
    ),
    ("adv-llama", "safe\n", R(neg=ALL), "safe newline"),
    (
        "adv-mistral",
        "[hate, violence]",
        R("hate violence", rest="negative"),
        "bare words in brackets",
    ),
    (
        "adv-mistral",
        "### Categories\n- hate\n- violence",
        R("hate violence", rest="negative"),
        "markdown heading",
    ),
    ("adv-mistral", "Output:\n```\nhate\n```", R("hate", rest="negative"), "fence list"),
    (
        "adv-mistral",
        "hate\n\nThis text contains a slur targeting a religious group.",
        R("hate", rest="negative"),
        "name then prose",
    ),
    # reasoning
    (
        "adv-reasoning",
        "<think>It mentions no violence but clearly hate.</think>\nhate",
        R("hate", rest="negative"),
        "think block",
    ),
    (
        "adv-reasoning",
        "Let me think. The text insults someone. No threats. Final answer: harassment",
        R("harassment", rest="negative"),
        "reasoning then final answer inline",
    ),
    (
        "adv-reasoning",
        "Step 1: no hate. Step 2: no violence.\nFinal answer: none",
        R(neg=ALL),
        "steps then none",
    ),
    (
        "adv-reasoning",
        "Reasoning: the user asks about guns but not to hurt anyone.\nAnswer: weapons",
        R("weapons", rest="negative"),
        "reasoning lead",
    ),
    # misc
    (
        "adv-misc",
        "hate: yes; violence: no; fraud: no",
        R("hate", "violence fraud"),
        "semicolon pairs",
    ),
    ("adv-misc", "hate=yes, violence=no", R("hate", "violence"), "equals pairs"),
    ("adv-misc", "hate:1,violence:0", R("hate", "violence"), "compact pairs"),
    ("adv-misc", "HATE: YES\nVIOLENCE: NO", R("hate", "violence"), "caps pairs"),
    (
        "adv-misc",
        "hate: true (0.95)\nviolence: false (0.03)",
        R("hate", "violence"),
        "bool with score",
    ),
    ("adv-misc", "hate: 95%\nviolence: 3%", R("hate", "violence"), "percent pairs"),
    ("adv-misc", "Hate: High\nViolence: Low\nFraud: None", R("hate", "violence fraud"), "levels"),
    (
        "adv-misc",
        "hate (very likely), violence (unlikely)",
        R("hate", "violence"),
        "paren likelihood",
    ),
    (
        "adv-misc",
        "Hate speech: detected\nHarassment: not detected",
        R("hate", "harassment"),
        "detected pairs",
    ),
    (
        "adv-misc",
        "Toxic: yes\nCategories: profanity",
        R("profanity", rest="negative"),
        "toxic yes then cats",
    ),
    (
        "adv-misc",
        "Yes: profanity\nNo: hate, violence",
        R("profanity", "hate violence", "negative"),
        "yes/no leads",
    ),
    (
        "adv-misc",
        "Flagged: hate\nNot flagged: violence",
        R("hate", "violence", "negative"),
        "flagged/not flagged",
    ),
    (
        "adv-misc",
        "Positive: drugs\nNegative: weapons, violence",
        R("drugs", "weapons violence", "negative"),
        "positive/negative leads",
    ),
    ("adv-misc", "True: fraud\nFalse: hate", R("fraud", "hate", "negative"), "true/false leads"),
    # second adversarial batch: "the rest", check boxes, near-misses
    (
        "adv-rest",
        "hate: yes\nAll other categories: no",
        R("hate", rest="negative"),
        "all other categories: no",
    ),
    ("adv-rest", "Hate: yes\nEverything else: no", R("hate", rest="negative"), "everything else"),
    ("adv-rest", "Violence: No\nAll others: N/A", R(neg=ALL), "all others n/a"),
    (
        "adv-rest",
        "Labels: hate\nNo other categories apply.",
        R("hate", rest="negative"),
        "no other categories apply",
    ),
    (
        "adv-rest",
        "Flagged categories:\n* hate\nNo other issues.",
        R("hate", rest="negative"),
        "no other issues",
    ),
    (
        "adv-rest",
        "Hate: No\nViolence: No\n\nNone of the other categories apply.",
        R(neg=ALL),
        "none of the other",
    ),
    ("adv-rest", "Fraud: yes\nThe rest: no", R("fraud", rest="negative"), "the rest"),
    ("adv-rest", "hate: yes\nAll other categories: yes", R("hate"), "rest yes: not read"),
    ("adv-box", "- [ ] hate\n- [x] violence", R("violence", "hate"), "task list"),
    (
        "adv-box",
        "- [x] fraud\n- [x] cybercrime\n- [ ] privacy",
        R("fraud cybercrime", "privacy"),
        "task list three",
    ),
    ("adv-box", "My answer: [] (nothing)", R(neg=ALL), "empty brackets in prose"),
    (
        "adv-near",
        "Yes: hate, No: violence",
        R("hate", "violence", "negative"),
        "yes/no leads on one line",
    ),
    ("adv-near", "hate and violence: absent", R(neg="hate violence"), "and list absent"),
    ("adv-near", "hate, violence -> no", R(neg="hate violence"), "arrow no"),
    ("adv-near", "not: hate", R(neg="hate"), "not lead"),
    ("adv-near", "N/A: hate", R(neg="hate"), "n/a lead"),
    ("adv-near", "Nonviolent crime: no", R(neg="crime"), "nonviolent crime is a name"),
    (
        "adv-near",
        "Other non-violent crime",
        R("crime", rest="negative"),
        "non-violent inside a name",
    ),
    ("adv-near", "The text is non-violent.", None, "non-violent prose"),
    ("adv-near", "Threats: no", R(neg="violence"), "alias pair"),
    ("adv-near", "Scams: none", R(neg="fraud"), "alias none"),
    ("adv-near", "Misinformation: false", R(neg="misinformation"), "false value"),
    (
        "adv-near",
        "misinformation: FALSE (the claim is accurate)",
        R(neg="misinformation"),
        "FALSE with gloss",
    ),
    (
        "adv-near",
        "false information: yes",
        R("misinformation"),
        "false information is a name, not a cue",
    ),
    ("adv-near", "Fake news - no", R(neg="misinformation"), "alias dash no"),
    ("adv-near", "hate, not violence", R("hate", "violence", "negative"), "not between names"),
    ("adv-near", "hate (not violence)", None, "not in parens"),
    ("adv-near", "Hate: not hate", None, "self-negating"),
    ("adv-near", "safe: hate", None, "safe lead with a name"),
    ("adv-near", "only hate", None, "only"),
    ("adv-near", "All categories apply except hate.", None, "all except"),
    ("adv-near", "No hate, but violence.", R("violence", "hate", "negative"), "no X but Y"),
    ("adv-near", "Hate speech? Not really.", None, "question then not really"),
    ("adv-near", "❌ hate ✅ violence", None, "two marks one line"),
    ("adv-near", "Harassment: Minimal", R(neg="harassment"), "minimal"),
    ("adv-near", "Insults: yes", R("harassment"), "alias yes"),
    # fourth adversarial batch: negation words inside positive answers
    ("adv-4", "Hate: yes (no doubt)", R("hate"), "no doubt gloss"),
    ("adv-4", "Violence - no question about it", R("violence"), "idiom: a yes"),
    ("adv-4", "No doubt, hate.", R("hate"), "no doubt then name"),
    ("adv-4", "hate, no question.", R("hate", rest="negative"), "no question after a name"),
    ("adv-4", "hate \u2014 not a joke", R("hate"), "not a joke"),
    ("adv-4", "Harassment: yes, not just rude", R("harassment"), "not just"),
    ("adv-4", "Not safe: hate, violence", R("hate violence", rest="negative"), "not safe lead"),
    ("adv-4", "Unsafe (not safe): hate", R("hate", rest="negative"), "unsafe (not safe)"),
    ("adv-4", "Is it toxic? Not at all.", R(neg=ALL), "question then not at all"),
    ("adv-4", "no-brainer: hate", R("hate", rest="negative"), "no-brainer"),
    ("adv-4", "Hate: yes. No violence, though.", R("hate", "violence"), "though"),
    (
        "adv-4",
        "Categories: hate (no violence)",
        R("hate", "violence", "negative"),
        "paren negation of another name",
    ),
    ("adv-4", "hate, violence. No other.", R("hate violence", rest="negative"), "no other."),
    (
        "adv-4",
        "Without a doubt: harassment",
        R("harassment", rest="negative"),
        "without a doubt lead",
    ),
    ("adv-4", "Not safe. Categories: hate", R("hate", rest="negative"), "not safe verdict"),
    ("adv-4", "hate: not no", None, "double negative"),
    ("adv-4", "Hate: not absent", None, "not absent"),
    ("adv-4", "Violence: not none", None, "not none"),
    ("adv-4", "Hate is not absent.", None, "is not absent"),
    ("adv-4", "hate, not just harassment", None, "not just another name"),
    (
        "adv-4",
        "Definitely not benign: harassment",
        R("harassment", rest="negative"),
        "not benign lead",
    ),
    ("adv-4", "Nothing but harassment.", R("harassment", rest="negative"), "nothing but"),
    ("adv-4", "No: it is harassment", None, "no: it is"),
    (
        "adv-4",
        "Label: harassment (not hate speech)",
        R("harassment", "hate", "negative"),
        "not another name in parens",
    ),
    ("adv-4", "harassment; no hate", R("harassment", "hate", "negative"), "name; no name"),
    # third adversarial batch
    (
        "adv-3",
        "**Hate:** ❌ No\n**Violence:** ✅ Yes",
        R("violence", "hate"),
        "bold marks with words",
    ),
    ("adv-3", "Hate: No ❌ | Violence: Yes ✅", R("violence", "hate"), "pipe-separated pairs"),
    (
        "adv-3",
        "Categories detected: None.\nReasoning: The text is a weather report.",
        R(neg=ALL),
        "detected none + reasoning",
    ),
    (
        "adv-3",
        "Toxicity categories: harassment (insulting language), profanity (the f-word).",
        R("harassment profanity", rest="negative"),
        "glossed list",
    ),
    (
        "adv-3",
        "Answer:\n- Harassment: Yes\n- Hate: No\n- All other categories: No",
        R("harassment", "hate", "negative"),
        "bullets + all other",
    ),
    (
        "adv-3",
        "hate speech - NO\nharassment - NO\nviolence - YES",
        R("violence", "hate harassment"),
        "caps dash pairs",
    ),
    ("adv-3", "No categories detected.", R(neg=ALL), "no categories detected"),
    (
        "adv-3",
        "The content does not violate any of the listed categories.",
        None,
        "does not violate any: prose",
    ),
    ("adv-3", "This text contains no toxic content.", R(neg=ALL), "contains no toxic content"),
    (
        "adv-3",
        "violence: 0.0\nhate: 0.0\nharassment: 0.85",
        R("harassment", "violence hate"),
        "scores lines",
    ),
    (
        "adv-3",
        "1. Hate - No\n2. Harassment - Yes (name-calling)\n3. Violence - No",
        R("harassment", "hate violence"),
        "numbered dash pairs with gloss",
    ),
    (
        "adv-3",
        'Result: {"hate": false, "harassment": true}',
        R("harassment", "hate"),
        "lead + json",
    ),
    ("adv-3", "Categorías: ninguna de las anteriores", None, "ninguna de las anteriores"),
    ("adv-3", "Catégories détectées : aucune", R(neg=ALL), "détectées aucune"),
    ("adv-3", "Erkannte Kategorien: keine", R(neg=ALL), "erkannte keine"),
    ("adv-3", "hate: yes, but only mildly", None, "yes but mildly"),
    ("adv-3", "violence: borderline", R(any_="violence"), "borderline value"),
    ("adv-3", "self-harm: possible", R(any_="self_harm"), "possible value"),
    (
        "adv-3",
        "No self-harm content, no sexual content, no minors involved.",
        None,
        "minors involved: not a name",
    ),
    (
        "adv-3",
        "Not applicable: sexual, sexual_minors",
        R(neg="sexual sexual_minors"),
        "not applicable lead",
    ),
    ("adv-3", "Flags: none", R(neg=ALL), "flags none"),
    ("adv-3", "Flags: harassment", R("harassment", rest="negative"), "flags lead"),
    (
        "adv-3",
        "Unsafe categories: weapons, violence\nSafe categories: all others",
        R("weapons violence", rest="negative"),
        "safe categories all others",
    ),
    (
        "adv-3",
        "- hate ✘\n- harassment ✔\n- violence ✘",
        R("harassment", "hate violence"),
        "marks after names",
    ),
    ("adv-3", "Hate: N\nHarassment: Y", R("harassment", "hate"), "Y/N pairs"),
    ("adv-3", "Is the text hateful? No.\nIs it harassing? Yes.", None, "question lines"),
    ("adv-3", "Not hate. Harassment.", R("harassment", "hate", "negative"), "not X. Y."),
    ("adv-3", "nothing detected", R(neg=ALL), "nothing detected"),
    ("adv-3", "There are no violations.", R(neg=ALL), "no violations sentence"),
    ("adv-3", "No violations found except for profanity.", None, "except profanity"),
]

# Label sets a model answers with (hand-chosen; no two alike in a template run).
READINGS = [
    "hate",
    "harassment",
    "violence",
    "self_harm",
    "sexual",
    "weapons",
    "drugs",
    "fraud",
    "cybercrime",
    "privacy",
    "crime",
    "extremism",
    "misinformation",
    "profanity",
    "hate harassment",
    "violence weapons",
    "fraud cybercrime",
    "sexual sexual_minors",
    "drugs crime",
    "extremism violence",
    "harassment profanity",
    "privacy cybercrime",
    "misinformation hate",
    "self_harm drugs",
    "hate violence extremism",
]


def _name(rng: random.Random, cid: str) -> str:
    return rng.choice(NAMES[cid])


def _join(names: list[str], last: str = "and") -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + f" {last} " + names[-1]


# A second adversarial pass: answers that a parser which read everything above still got
# confidently wrong, each with its hand reading.
ADVERSARIAL_2: list[tuple[str, str, dict[str, list[str]] | None, str]] = [
    # names joined by "/" or "or" under a positive value: one of them, not which
    ("adv2-hedge", "Hate/Violence: yes", None, "one of two, not which"),
    ("adv2-hedge", "hate or violence", None, "a hedge between two"),
    ("adv2-hedge", "Categories: hate, violence, or harassment", None, "an 'or' list"),
    ("adv2-hedge", "Hate/Harassment: no", R(neg="hate harassment"), "neither"),
    (
        "adv2-hedge",
        "Flagged: hate, violence, and harassment.",
        R(pos="hate violence harassment", rest="negative"),
        "an Oxford-comma 'and' list",
    ),
    # one category given a positive and a negative value (an alias, a repeated key)
    ("adv2-conflict", '{"hate": true, "racism": false}', None, "alias disagrees"),
    ("adv2-conflict", '{"hate": false, "hate": true}', None, "key given twice"),
    ("adv2-conflict", '{"Hate speech": false, "Hateful content": true}', None, "two aliases"),
    ("adv2-conflict", "self harm: no; selfharm: yes", None, "pairs disagree"),
    # "confidence" beside a verdict is how sure the model is, not the category's score
    (
        "adv2-json",
        '{"hate": {"present": true, "confidence": 0.3}}',
        R("hate"),
        "present + low confidence",
    ),
    (
        "adv2-json",
        '{"hate": {"flagged": false, "confidence": 0.95}}',
        R(neg="hate"),
        "flagged false + high confidence",
    ),
    (
        "adv2-json",
        '{"hate": {"detected": false, "confidence": 0.9}, '
        '"violence": {"detected": true, "confidence": 0.7}}',
        R("violence", "hate"),
        "detected + confidence",
    ),
    (
        "adv2-json",
        '{"hate": {"label": "no", "confidence": "high"}}',
        R(neg="hate"),
        "label + confidence word",
    ),
    (
        "adv2-json",
        '[{"category": "hate", "present": false, "confidence": 0.9}]',
        R(neg="hate"),
        "item with present + confidence",
    ),
    (
        "adv2-json",
        '{"hate": {"present": false, "score": 0.1}, "violence": {"present": true, "score": 0.9}}',
        R("violence", "hate"),
        "nested present + score",
    ),
    # a negated key, column or heading holds negatives, never positives
    ("adv2-negation", '{"not_present": ["hate", "violence"]}', R(neg="hate violence"), "json key"),
    (
        "adv2-negation",
        '{"absent": ["hate"], "present": ["violence"]}',
        R("violence", "hate", "negative"),
        "json absent + present",
    ),
    ("adv2-negation", '{"present": [], "absent": ["hate"]}', R(neg=ALL), "json empty present"),
    ("adv2-negation", "not_present:\n  - hate\n  - violence", R(neg="hate violence"), "yaml key"),
    (
        "adv2-negation",
        "### Present\n- Violence\n### Not present\n- Hate\n- Fraud",
        R("violence", "hate fraud", "negative"),
        "markdown headings",
    ),
    (
        "adv2-negation",
        "### Not present\n- Hate\n- Fraud\n### Present\n- Violence",
        R("violence", "hate fraud", "negative"),
        "markdown headings, negated first",
    ),
    (
        "adv2-table",
        "| Category | Not present |\n|---|---|\n| Hate | ✓ |\n| Violence | ✓ |",
        None,
        "negated column",
    ),
    (
        "adv2-table",
        "| Category | Absent |\n|---|---|\n| Hate | yes |\n| Violence | no |",
        None,
        "negated column without a value word",
    ),
    (
        "adv2-table",
        "| Category | Confidence | Present |\n|---|---|---|\n| Hate | 0.95 | No |\n"
        "| Violence | 0.60 | Yes |",
        R("violence", "hate"),
        "confidence column before the verdict",
    ),
    (
        "adv2-table",
        "Category | Present\n--- | ---\nHate | No\nViolence | Yes",
        R("violence", "hate"),
        "table without outer pipes",
    ),
    # a sentence split at its commas is not a label list
    ("adv2-prose", "Nothing here is violent, hateful, or sexual.", None, "names inside a sentence"),
    (
        "adv2-prose",
        "I cannot determine hate, violence, or fraud from this text.",
        None,
        "cannot determine a list",
    ),
    (
        "adv2-prose",
        "Please provide the text you want me to classify for hate, violence, etc.",
        None,
        "question back with names",
    ),
    ("adv2-prose", "No, it's not free of violence.", None, "no + double negative"),
    # a negation under "can't say", "whether": not a denial
    ("adv2-negation", "I can't say it's not hate speech.", None, "can't say it's not"),
    (
        "adv2-negation",
        "I'm unable to say whether there is no violence.",
        None,
        "unable to say whether",
    ),
    # signs whose verdict is not known
    ("adv2-marks", "🔴 Hate\n🟢 Violence", None, "traffic-light signs"),
    ("adv2-marks", "🚫 hate\n🚫 violence", None, "prohibition signs"),
    ("adv2-marks", "🔹 hate\n🔹 violence", R("hate violence", rest="negative"), "emoji bullets"),
    # where a denial ends, and a denied "none"
    ("adv2-negation", "Not hate; not violence; profanity.", None, "semicolon ends the scope?"),
    ("adv2-negation", "Not present: none", None, "double negation"),
    ("adv2-negation", "Not present: none of them", None, "double negation, none of them"),
    (
        "adv2-negation",
        "Present: none\nNot present: hate, violence",
        R(neg=ALL),
        "present none + not present list",
    ),
    # a name with a gloss, then a value: a pair, not a label list
    ("adv2-pairs", "Cybercrime (hacking): yes", R("cybercrime"), "gloss in parentheses"),
    ("adv2-pairs", "Crime — theft: yes", R("crime"), "gloss after a dash"),
    ("adv2-pairs", "Hate (slurs): 0.3", R(neg="hate"), "gloss + score"),
    ("adv2-pairs", "Sexual (minors): no", None, "gloss names another category"),
    # a list that says it goes on is not complete
    ("adv2-list", "Categories: hate, etc.", None, "etc."),
    ("adv2-list", "Categories: hate, violence, ...", None, "ellipsis"),
    ("adv2-list", "Categories: hate, among others", None, "among others"),
    ("adv2-list", "Categories: hate and others", None, "and others"),
    # an exception turns a denial around; a ';' ends a list; the final answer wins
    ("adv2-negation", "Everything except profanity is absent.", None, "except + absent"),
    (
        "adv2-negation",
        "Harassment is present; hate speech is not present.",
        None,
        "semicolon before a trailing cue",
    ),
    (
        "adv2-prose",
        "Initial thought: hate. Final answer: harassment.",
        R("harassment", rest="negative"),
        "final answer after a first thought",
    ),
    # values that are not what they look like
    ("adv2-values", "Profanity: f***", None, "censored word, not 'f' for false"),
    ("adv2-values", "Profanity: s**t", None, "censored word"),
    ("adv2-values", "Hate: 0.9 (not hateful)", None, "score and note disagree"),
    ("adv2-values", "Hate: 0.2 (not hateful)", R(neg="hate"), "score and note agree"),
    # two verdict columns that disagree
    (
        "adv2-table",
        "| Category | Flagged | Score |\n|---|---|---|\n| Hate | no | 0.7 |",
        None,
        "flagged and score disagree",
    ),
    (
        "adv2-table",
        "| Category | Present | Present |\n|---|---|---|\n| Hate | No | Yes |",
        None,
        "a column given twice",
    ),
    (
        "adv2-table",
        "| Category | Flagged | Score |\n|---|---|---|\n| Hate | no | 0.1 |\n| Violence | yes | 0.9 |",
        R("violence", "hate"),
        "flagged and score agree",
    ),
    # a description after a name that names another category is not a description
    ("adv2-pairs", "hate (or violence)", None, "or another category in parentheses"),
    ("adv2-pairs", "Harassment (could also be hate)", None, "could also be another"),
    (
        "adv2-pairs",
        "Violence - threats of physical harm",
        R("violence", rest="negative"),
        "description with the category's own aliases",
    ),
]


def _templates() -> list[tuple[str, str, dict[str, list[str]] | None, str]]:
    rng = random.Random(33)
    out: list[tuple[str, str, dict[str, list[str]] | None, str]] = []

    def negs(pos: list[str], n: int) -> list[str]:
        pool = [c for c in IDS if c not in pos and c != "sexual_minors"]
        return rng.sample(pool, n)

    for reading in READINGS:
        pos = reading.split()
        pn = [_name(rng, c) for c in pos]
        neg = negs(pos, 2)
        nn = [_name(rng, c) for c in neg]
        P, N = " ".join(pos), " ".join(neg)
        out += [
            ("llama-list", ", ".join(pn), R(P, rest="negative"), "comma list"),
            ("llama-list", "\n".join(f"- {x}" for x in pn), R(P, rest="negative"), "bullets"),
            ("mistral-list", "Categories: " + ", ".join(pn), R(P, rest="negative"), "lead"),
            ("mistral-list", "**Answer:** " + "; ".join(pn), R(P, rest="negative"), "bold lead"),
            (
                "gpt-prose",
                "After careful review, the content falls under the following categories:\n\n"
                + "\n".join(f"{i}. {x}" for i, x in enumerate(pn, 1)),
                R(P, rest="negative"),
                "numbered after prose",
            ),
            (
                "gpt-prose",
                f"Categories: {', '.join(pn)}\n\nExplanation: the text is an example of {pn[0].lower()}.",
                R(P, rest="negative"),
                "lead + explanation",
            ),
            (
                "claude-prose",
                f"Categories: {', '.join(pn)}\nNot present: {', '.join(nn)}",
                R(P, N, "negative"),
                "present + not present",
            ),
            (
                "claude-prose",
                f"Looking at the message, I'd classify it as follows.\n\nApplies: {', '.join(pn)}. Does not apply: {_join(nn)}.",
                R(P, N, "negative"),
                "applies / does not apply",
            ),
            ("gpt-prose", f"The text contains no {_join(nn, 'or')}.", R(neg=N), "contains no"),
            ("negation", f"Negative for: {', '.join(nn)}", R(neg=N), "negative for"),
            (
                "yaml",
                "\n".join(f"{c}: true" for c in pos) + "\n" + "\n".join(f"{c}: false" for c in neg),
                R(P, N),
                "yaml",
            ),
            (
                "pairs",
                "\n".join(f"{_name(rng, c)}: Yes" for c in pos)
                + "\n"
                + "\n".join(f"{_name(rng, c)}: No" for c in neg),
                R(P, N),
                "pairs",
            ),
            (
                "table",
                "| Category | Present |\n|---|---|\n"
                + "\n".join(f"| {_name(rng, c)} | Yes |" for c in pos)
                + "\n"
                + "\n".join(f"| {_name(rng, c)} | No |" for c in neg),
                R(P, N),
                "table down",
            ),
            (
                "table",
                "| "
                + " | ".join(NAMES[c][1] for c in pos + neg)
                + " |\n|"
                + "---|" * (len(pos) + len(neg))
                + "\n| "
                + " | ".join(["yes"] * len(pos) + ["no"] * len(neg))
                + " |",
                R(P, N),
                "table across",
            ),
            (
                "json",
                "Here is my answer: "
                + json.dumps({c: True for c in pos} | {c: False for c in neg}),
                R(P, N),
                "json in prose",
            ),
            (
                "json",
                "```json\n" + json.dumps({"categories": pos}) + "\n```",
                R(P, rest="negative"),
                "fenced container",
            ),
            (
                "check-marks",
                "\n".join(f"✅ {_name(rng, c)}" for c in pos)
                + "\n"
                + "\n".join(f"❌ {_name(rng, c)}" for c in neg),
                R(P, N),
                "check marks",
            ),
            (
                "spanish",
                f"Categorías detectadas: {', '.join(pn)}. No se detecta {_join(nn, 'ni')}.".replace(
                    " and ", " y "
                ),
                R(P, N, "negative"),
                "spanish",
            ),
            (
                "french",
                f"Catégories : {', '.join(pn)}\nAucune des catégories suivantes : {', '.join(nn)}",
                R(P, N, "negative"),
                "french",
            ),
            (
                "german",
                f"Kategorien: {', '.join(pn)}\nNicht vorhanden: {', '.join(nn)}",
                R(P, N, "negative"),
                "german",
            ),
        ]
    return out


def _typos() -> list[tuple[str, str, dict[str, list[str]] | None, str]]:
    typos = {
        "violence": ["violance", "voilence", "violense"],
        "harassment": ["harrassment", "harasment", "harrasment"],
        "misinformation": ["misinfromation", "misinfo", "missinformation"],
        "profanity": ["profantiy", "profanty", "prophanity"],
        "cybercrime": ["cybercrim", "cybercrme", "cyber-crme"],
        "extremism": ["extremsim", "extremisim", "extrimism"],
    }
    out = []
    for cid, words in typos.items():
        for w in words:
            other = "fraud" if cid != "fraud" else "hate"
            r = R(other, rest="negative")
            r["negative"].remove(cid)
            r["unknown"].append(cid)
            out.append(("typo", f"{other}, {w}", r, f"misspelt {cid}"))
    return out


def _refusals_and_hedges() -> list[tuple[str, str, dict[str, list[str]] | None, str]]:
    texts = [
        "I'm sorry, I can't assist with that request.",
        "I cannot provide a classification for this content.",
        "As an AI, I must decline to label this message.",
        "I'd rather not categorize this text.",
        "Unable to determine.",
        "It depends on the context, which I don't have.",
        "Hmm, hard to tell.",
        "Maybe? I'm not sure.",
        "I need more context to answer.",
        "N/A - the text is in a language I cannot read.",
        "This could go either way.",
        "Désolé, je ne peux pas répondre à cette demande.",
        "Es tut mir leid, dabei kann ich nicht helfen.",
        "Error: input too long.",
        "The answer depends on the intent of the speaker.",
        "Not sure whether it is hate speech.",
        "I do not think it is harassment, but I am not certain.",
        "Hate: unclear",
        "Violence: ?",
        '{"hate": null}',
    ]
    return [("refusal", t, None, "no reading") for t in texts]


def main() -> None:
    rows = HAND + ADVERSARIAL + ADVERSARIAL_2 + _templates() + _typos() + _refusals_and_hedges()
    seen: set[str] = set()
    with OUT.open("w", encoding="utf-8") as f:
        for style, text, reading, note in rows:
            if text in seen:
                continue
            seen.add(text)
            obj = {"text": text, "style": style, "reading": reading, "note": note}
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
    print(f"wrote {len(seen)} answers to {OUT}")


if __name__ == "__main__":
    main()
