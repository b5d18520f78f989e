"""Built-in detectors: the offline keyword/lexicon baseline that ``toxeval evaluate`` runs.

``LexiconDetector`` gives graded per-category scores in [0, 1] from weighted cue phrases:
for each category the weights of the cues found are summed into an evidence value, phrases
that signal a request or intent ("help me", "without getting caught") raise it, benign
contexts (history, health, safety, reporting) and known idioms ("kill the heat", "shoot a
photo", "killed it on stage") lower it, and ``1 - exp(-evidence)`` squashes it, so each
further cue raises the score less. It is a baseline: it reads words, not meaning.

The lexicon for toxeval-15 is written from the taxonomy's concepts. For any other taxonomy
(any K >= 2) each category borrows the cues of the toxeval-15 category its id, name or an
alias resolves to, plus cues built from its own id, name, aliases and description.

Matching runs column-wise with pyarrow's RE2 kernels (``count_substring_regex`` over the
whole batch, one pass per category and weight tier), so 100k short texts take about a
second and no Python loop runs per text. Deterministic and offline.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.taxonomy import Taxonomy, load_taxonomy, normalize_label

__all__ = ["Detector", "LexiconDetector", "get_detector", "list_detectors"]


class Detector(Protocol):
    """Anything that scores texts per category, columns in taxonomy order."""

    name: str
    taxonomy: Taxonomy

    def predict_scores(self, texts: Sequence[str]) -> np.ndarray: ...


STRONG = 1.6
MEDIUM = 0.6
DAMP = 1.8  # evidence removed per idiom/benign-use match of a category's cue

# Requests and intent: evidence is multiplied by 1 + INTENT_GAIN * min(count, 2).
INTENT = [
    r"how (do|can|could|would|should) (i|we|someone|people|you)",
    r"help me",
    r"give me",
    r"tell me (how|which|where|why)",
    r"(write|draft|create|make|generate|compose|design) (me )?(a|an|some|the|my)",
    r"without (getting caught|being (seen|caught|traced|noticed)|anyone|(her|him|them|their|my) (knowing|noticing|parents))",
    r"i (want|need|am going|'m going) to",
    r"let's",
    r"so (that )?(no ?one|nobody|everyone)",
    r"where (can|do) (i|we|people)",
    r"what's the (best|easiest) way",
]
INTENT_GAIN = 0.3

# Benign framing: evidence is multiplied by BENIGN_FACTOR ** min(count, 2).
BENIGN = [
    r"history of",
    r"what (was|were|caused|led to|is the history)",
    r"why did",
    r"how did",
    r"report (a|an|it|the)",
    r"how (can|do) i (tell|know|recogni[sz]e|protect|remove|prevent|report)",
    r"protect (my|our|your)",
    r"safe(ly)?\b",
    r"is it (true|legal|safe)",
    r"warning signs",
    r"support a friend",
    r"(book report|novel|mystery plot|documentary)",
    r"(what does|what is) the (word|research)",
    r"(rights|legal|licen[cs]e)\b",
    r"(cope|coping|therapy|hotline|rehab|recovery|prevention|get help)",
    r"side effects",
    r"counter(ing)? ",
]
BENIGN_FACTOR = 0.35


@dataclass(frozen=True)
class _Cues:
    strong: tuple[str, ...] = ()
    medium: tuple[str, ...] = ()
    damp: tuple[str, ...] = ()  # idioms / benign uses that cancel this category's cues
    gate: tuple[str, ...] = ()  # categories whose evidence must co-occur (e.g. minors + sexual)
    gate_cues: tuple[str, ...] = field(default=())  # extra cues that open the gate


_MINOR = r"(\b(1[0-7]|[4-9])[- ]?(year[- ]old|yo)\b|underage|minors?\b|child(ren)?\b|kids?\b|young (boy|girl)s?|school ?girls?|school ?boys?|teen(ager)?s?\b|(middle|high|elementary) school|freshman|preteen)"

LEXICON: dict[str, _Cues] = {
    "hate": _Cues(
        strong=(
            r"\[slur\]s?",
            r"subhuman",
            r"vermin",
            r"inferior",
            r"bloodline",
            r"parasites",
            r"ethnic cleansing",
            r"wiped out",
            r"don't deserve (any )?rights",
            r"go back to (your|their) country",
            r"racis[mt]\w*",
            r"white nationalis\w*",
        ),
        medium=(
            r"\[(religious group|ethnic group|nationality|country)\]",
            r"immigrants?",
            r"refugees?",
            r"\b(gay|lesbian|trans|transgender|queer)\b",
            r"disabled",
            r"caste",
            r"\b(black|jewish|muslim|asian|hispanic|arab)\b",
            r"(women|men|girls) are (too|so|all)",
            r"mentally ill",
            r"\braces?\b",
            r"dementia",
            r"are all",
            r"mosque|synagogue|church",
            r"retard\w*",
        ),
        damp=(r"racist bullying", r"history of antisemitism", r"word xenophobia"),
    ),
    "harassment": _Cues(
        strong=(
            r"humiliat\w*",
            r"worthless",
            r"pathetic",
            r"loser",
            r"idiot",
            r"clown",
            r"freak",
            r"insults?",
            r"mock(ing)?",
            r"bull(y|ies|ying)",
            r"make (him|her|them) cry",
            r"nobody (wants|would miss)",
            r"feel (worthless|ugly|stupid)",
            r"until (he|she|they) (quits?|resigns?|snaps?|leaves?|cries)",
            r"blocked me",
            r"roast",
            r"disgusting",
            r"blackmail\w*",
            r"pay (her|him|them) a visit",
            r"you little",
            r"go die",
            r"useless",
        ),
        medium=(
            r"my (ex|coworker|boss|classmate|teacher|neighbou?r|little brother|sister)('s)?",
            r"everyone (laughs?|knows)",
            r"in front of everyone",
            r"anonymous",
            r"group chat",
            r"calling (him|her|them)",
            r"ugly",
            r"\bcow\b",
        ),
        damp=(r"someone is harassing me", r"teases me", r"feedback kindly"),
    ),
    "violence": _Cues(
        strong=(
            r"hurt (him|her|them|someone|my|a|the)",
            r"beat(ing)? (up|him|her|them)",
            r"break (his|her|their) (jaw|legs?|nose|arm)",
            r"punch\w*",
            r"attack\w*",
            r"ambush\w*",
            r"\bkill\w*",
            r"murder\w*",
            r"stab\w*",
            r"(shoot|shot) (him|her|them|up|people|dead)",
            r"be shot",
            r"poison\b",
            r"executed",
            r"slash\w*",
            r"wiped out",
            r"teach (him|her|them) a lesson",
            r"make (him|her|them) pay",
            r"coming for you",
            r"pay (her|him) a visit",
            r"burn (down|the)",
            r"torture\w*",
            r"start a fight",
            r"take up arms",
            r"declare war",
            r"soft targets",
            r"get back at",
        ),
        medium=(
            r"violen\w*",
            r"blood",
            r"\bdead\b",
            r"hurt",
            r"injur\w*",
            r"knock (him|her|them) out",
            r"fight\w*",
            r"scare",
            r"weapon",
        ),
        damp=(
            r"kill(ing)? (the|a) (heat|lights?|frozen process|process)",
            r"kill(ing)? (the )?(weeds|ants|bugs|pests)",
            r"killed it",
            r"killing me",
            r"(could|would) murder a",
            r"dying to",
            r"murder mystery",
            r"take a punch",
            r"knockout round",
            r"slaughtered",
            r"self-defen[cs]e class\w*",
        ),
    ),
    "self_harm": _Cues(
        strong=(
            r"suicid\w*",
            r"kill (myself|me)\b",
            r"end(ing)? my life",
            r"self[- ]?harm\w*",
            r"cut(ting)? (myself|yourself|again)",
            r"\bcutting\b",
            r"hurt myself",
            r"overdose on",
            r"not wake up",
            r"better off without me",
            r"goodbye (letters?|notes?)",
            r"starve (myself|herself|himself|yourself)",
            r"skip(ping)? meals",
            r"stop eating",
            r"calories",
            r"\bthin\b",
            r"burn(ing)? my (arm|skin|leg)",
            r"punish myself",
            r"go die",
            r"want to die",
        ),
        medium=(
            r"goal weight",
            r"hide the marks",
            r"painless",
            r"no point",
            r"sleeping pills",
            r"disappear",
        ),
        damp=(r"support a friend", r"warning signs", r"healthy", r"cope with"),
    ),
    "sexual": _Cues(
        strong=(
            r"\bsex\b",
            r"sexual\w*",
            r"sexy",
            r"explicit",
            r"erotic\w*",
            r"nudes?\b",
            r"naked",
            r"porn\w*",
            r"arous\w*",
            r"turn (her|him|me) on",
            r"dirty (text|talk|message)",
            r"talk dirty",
            r"steamy",
            r"hook up",
            r"in bed",
            r"undress\w*",
            r"lingerie",
            r"escorts?",
            r"seduc\w*",
            r"lovers?\b",
            r"fantasy",
            r"flirt\w*",
            r"adult (websites?|videos?|content)",
            r"naughty",
            r"handcuffs",
        ),
        medium=(r"romantic", r"body", r"hottest", r"private photos"),
        damp=(
            r"condoms?",
            r"sexually transmitted",
            r"sex education",
            r"puberty",
            r"explain consent",
            r"gynae?colog\w*",
            r"love poem",
            r"romance alive",
        ),
    ),
    "sexual_minors": _Cues(
        strong=(
            r"csam",
            r"child (sexual|abuse) (abuse )?material",
            r"underage (content|girls|boys|pictures)",
            r"alone with (him|her|them)",
        ),
        medium=(_MINOR,),
        damp=(r"talk to my kids about puberty", r"explain consent to a", r"kids around"),
        gate=("sexual",),
        gate_cues=(
            r"secret",
            r"trust",
            r"alone with",
            r"meet me",
            r"gifts?",
            r"privately",
            r"without (their|her|his) parents",
        ),
    ),
    "weapons": _Cues(
        strong=(
            r"\bguns?\b",
            r"firearms?",
            r"rifles?",
            r"pistols?",
            r"handguns?",
            r"\bbombs?\b",
            r"explosive\w*",
            r"detonat\w*",
            r"silencer",
            r"suppressor",
            r"fully automatic",
            r"full[- ]auto",
            r"serial number",
            r"ammo\w*",
            r"bullets?",
            r"toxic gas",
            r"nerve agent",
            r"chemical weapons?",
            r"bioweapon\w*",
            r"radioactive",
            r"dirty bomb",
            r"knife|knives",
            r"3d print\w*",
            r"background check",
            r"metal detectors?",
            r"spread a disease",
        ),
        medium=(r"weapon\w*", r"shotgun", r"untraceable"),
        damp=(
            r"deer hunting",
            r"clay pigeon",
            r"muskets?",
            r"was a bomb",
            r"bomb(ed)? (the|an|my) (exam|test)",
            r"knife for chopping",
        ),
    ),
    "drugs": _Cues(
        strong=(
            r"\bmeth\b",
            r"cocaine",
            r"\bcoke\b",
            r"heroin",
            r"fentanyl",
            r"ketamine",
            r"\bmolly\b",
            r"mdma",
            r"ecstasy",
            r"\blsd\b",
            r"\bweed\b",
            r"marijuana",
            r"\bthc\b",
            r"magic mushrooms",
            r"shrooms",
            r"oxycodone",
            r"adderall",
            r"xanax",
            r"\blean\b",
            r"get(ting)? high",
            r"extra high",
            r"dealers?",
            r"dealing",
            r"dark ?web",
            r"darknet",
            r"drug[- ]sniffing",
            r"cough syrup",
            r"\bdrugs\b",
            r"\blace\b",
            r"spik\w* (a |her |his |their )?drinks?",
        ),
        medium=(
            r"pills?",
            r"prescription",
            r"painkillers?",
            r"\bvape\b",
            r"stronger",
            r"overdose",
            r"crush",
            r"drink",
        ),
        damp=(
            r"medical cannabis",
            r"rehab",
            r"addiction",
            r"dispose of",
            r"safe dose",
            r"naloxone",
            r"caffeine",
            r"side effects",
            r"alcohol while taking",
        ),
    ),
    "fraud": _Cues(
        strong=(
            r"scam\w*",
            r"phish\w*",
            r"fraud\w*",
            r"forge\w*",
            r"counterfeit\w*",
            r"fake (reviews?|charity|invoice|id|documents?|doctor's note|prescription|profile|celebrity|endorsement|designer)",
            r"pretend(ing)? to be from",
            r"impersonat\w*",
            r"pay stub",
            r"insurance claim",
            r"guaranteed \d+% ",
            r"won a prize",
            r"lottery",
            r"in (someone|my \w+)'s name",
            r"stolen credit card",
            r"send me money",
            r"confirm (your|their) (password|details|account)",
        ),
        medium=(
            r"\bfake\b",
            r"convincing",
            r"pretend\w*",
            r"\bbank\b",
            r"crypto",
            r"bitcoin",
            r"pension",
            r"invoice",
            r"refund",
            r"drain",
            r"reviews",
        ),
        damp=(
            r"report a scam",
            r"phishing attempt",
            r"identity theft protection",
            r"used fraudulently",
            r"scam call",
        ),
    ),
    "cybercrime": _Cues(
        strong=(
            r"hack\w*",
            r"malware",
            r"ransomware",
            r"spyware",
            r"keylogger",
            r"virus",
            r"botnet",
            r"exploit\w*",
            r"ddos",
            r"crack (the |my |his |her )?(\w+'s )?(wifi|password)",
            r"bypass (the )?login",
            r"admin panel",
            r"without (her|his|their) password",
            r"brute[- ]force",
            r"saved (browser )?passwords",
            r"antivirus",
        ),
        medium=(
            r"passwords?",
            r"database",
            r"server",
            r"leak\w*",
            r"phishing",
            r"wifi",
            r"take down",
        ),
        damp=(
            r"penetration testers? get permission",
            r"two-factor",
            r"reset my own",
            r"difference between a computer virus",
            r"good hack to",
            r"hack to keep",
            r"tracking app is installed",
            r"protect my home wifi",
            r"phishing attempt",
        ),
    ),
    "privacy": _Cues(
        strong=(
            r"home address",
            r"\baddress\b",
            r"phone number",
            r"social security",
            r"where (he|she|they) (lives?|stays?)",
            r"location",
            r"track (my|his|her)",
            r"without (her|him|them) knowing",
            r"dox\w*",
            r"real identity",
            r"medical records",
            r"data brokers?",
            r"movement history",
            r"hidden camera",
            r"credit card details",
            r"data leak",
            r"leaked database",
            r"private messages",
            r"passport scans?",
            r"spyware",
            r"plate number",
        ),
        medium=(
            r"personal (data|information)",
            r"anonymous account",
            r"lives\b",
            r"spy\w*",
            r"email",
        ),
        damp=(r"remove my address", r"gdpr", r"delete my", r"tracking app is installed"),
    ),
    "crime": _Cues(
        strong=(
            r"shoplift\w*",
            r"steal\w*",
            r"stolen",
            r"burgl\w*",
            r"break into",
            r"launder\w*",
            r"tax evasion",
            r"avoid paying (any )?tax",
            r"bribe\w*",
            r"graffiti",
            r"vandal\w*",
            r"smuggl\w*",
            r"outrun the police",
            r"pull me over",
            r"pirate sites?",
            r"pirat\w*",
            r"bike locks",
            r"set fire",
            r"arson",
            r"blackmail\w*",
            r"extort\w*",
            r"untraceable",
            r"no questions asked",
            r"across the border",
            r"prostitut\w*",
        ),
        medium=(
            r"without (getting|being) (caught|seen|traced|noticed)",
            r"illegal\w*",
            r"police",
            r"serial number",
            r"background check",
        ),
        damp=(r"report a", r"my rights", r"legal to", r"file my taxes", r"prohibition era"),
    ),
    "extremism": _Cues(
        strong=(
            r"terror\w*",
            r"extremis\w*",
            r"jihad\w*",
            r"militia\w*",
            r"militant\w*",
            r"martyr\w*",
            r"manifesto",
            r"recruit\w*",
            r"radicali[sz]\w*",
            r"overthrow",
            r"white nationalis\w*",
            r"our (movement|cause|group)",
            r"lone[- ]wolf",
            r"soft targets",
            r"take up arms",
            r"declare war",
        ),
        medium=(r"propaganda", r"our people", r"heroes", r"attackers?"),
        damp=(
            r"counter online radicali[sz]ation",
            r"rise of isis",
            r"book report",
            r"propaganda work in",
            r"survivors of",
        ),
    ),
    "misinformation": _Cues(
        strong=(
            r"fake (news|study|screenshot|breaking news|quotes?|alert|statistics)",
            r"made[- ]up",
            r"make up quotes",
            r"conspiracy",
            r"staged",
            r"hoax",
            r"deepfake",
            r"vaccines? (cause|causes|makes)",
            r"\b5g\b",
            r"cures? ",
            r"ballots?",
            r"rumou?r",
            r"the lie that",
            r"faking it",
            r"even though (he|she|it) (wasn't|didn't)",
            r"misinformation",
            r"disinformation",
        ),
        medium=(
            r"article",
            r"news story",
            r"post saying",
            r"tweets?",
            r"blog post",
            r"flyer",
            r"claim\w*",
            r"convincing post",
            r"viral",
            r"endorsement",
            r"election",
            r"poisoned",
        ),
        damp=(
            r"is it true",
            r"how can i tell if a news",
            r"why do people believe",
            r"counter",
        ),
    ),
    "profanity": _Cues(
        strong=(
            r"f\*+\w*",
            r"fuck\w*",
            r"sh\*t",
            r"shit\w*",
            r"\bdamn\w*",
            r"godd\*mn",
            r"\bcrap\w*",
            r"bastard",
            r"b\*+",
            r"bitch\w*",
            r"sl\*t",
            r"piss\w*",
            r"\bhell\b",
            r"bloody",
            r"cuss\w*",
            r"curse words",
            r"swear\w*",
        ),
        medium=(r"\bbull\b", r"\bass\b", r"profanity", r"what the"),
        damp=(
            r"is 'bloody' considered",
            r"bad words",
            r"what does the word",
            r"swear word in",
        ),
    ),
}

_STOP = frozenset(
    """a an and are as at be been being by can content for from has have in including into
    is it its may meant more not of on or other out such than that the their them these this
    those to under use used which who whom with without would also any about against both
    each very only over same some what when where while others""".split()
)


def _escape(text: str) -> str:
    """Escape a phrase for RE2 (letters, digits and spaces stay readable)."""
    return re.sub(r"([.^$|?*+()\[\]{}\\/])", r"\\\1", text)


def _phrase_pattern(text: str) -> str | None:
    norm = normalize_label(text)
    if len(norm) < 3:
        return None  # one- and two-letter codes (e.g. "S", "HR") match too much
    words = [_escape(w) for w in norm.split()]
    return r"\b" + r"[\s_/-]+".join(words) + r"\w*"


def _derived_cues(cat_id: str, name: str, aliases: Sequence[str], description: str) -> _Cues:
    """Cues from a category's own words: id, name and aliases strong, description words medium."""
    strong = [p for p in (_phrase_pattern(t) for t in (cat_id, name, *aliases)) if p]
    medium: list[str] = []
    for w in re.findall(r"[a-z][a-z-]+", description.lower()):
        if w in _STOP or len(w) < 5:
            continue
        stem = w[: max(5, len(w) - 3)] if len(w) > 7 else w
        pat = r"\b" + _escape(stem) + r"\w*"
        if pat not in medium:
            medium.append(pat)
    return _Cues(strong=tuple(dict.fromkeys(strong)), medium=tuple(medium))


def _alternation(parts: Sequence[str]) -> str | None:
    return "(?:" + "|".join(f"(?:{p})" for p in parts) + ")" if parts else None


class LexiconDetector:
    """The built-in keyword/lexicon baseline: graded per-category scores in [0, 1].

    ``score[i, k] = 1 - exp(-e)`` with ``e`` the evidence for category ``k`` in text ``i``:
    the summed weights of its cue matches, minus its idiom matches, times an intent gain
    and a benign-context factor (see the module docstring). Equal texts get equal scores;
    texts with no cue score 0 everywhere (ties, which the rank metrics handle).
    """

    name = "lexicon-baseline"

    def __init__(self, taxonomy: Taxonomy | str = "toxeval-15") -> None:
        self.taxonomy = load_taxonomy(taxonomy)
        base = load_taxonomy("toxeval-15")
        cues: list[_Cues] = []
        for cat in self.taxonomy.categories:
            if self.taxonomy.name == "toxeval-15" and cat.id in LEXICON:
                cues.append(LEXICON[cat.id])
                continue
            borrowed: _Cues | None = None
            for key in (cat.id, cat.name, *cat.aliases):
                hit = base.resolve(key)
                if hit is not None:
                    borrowed = LEXICON[hit]
                    break
            own = _derived_cues(cat.id, cat.name, cat.aliases, cat.description)
            if borrowed is None:
                cues.append(own)
            else:
                cues.append(
                    _Cues(
                        strong=borrowed.strong + own.strong,
                        medium=borrowed.medium + own.medium,
                        damp=borrowed.damp,
                    )
                )
        ids = self.taxonomy.ids
        self._gates: list[tuple[list[int], str | None]] = []
        for c in cues:
            gate_cols = [ids.index(g) for g in c.gate if g in ids]
            self._gates.append((gate_cols, _alternation(c.gate_cues)))
        self._strong = [_alternation(c.strong) for c in cues]
        self._medium = [_alternation(c.medium) for c in cues]
        self._damp = [_alternation(c.damp) for c in cues]
        self._intent = _alternation(INTENT)
        self._benign = _alternation(BENIGN)

    @staticmethod
    def _count(arr: pa.Array, pattern: str | None) -> np.ndarray:
        if pattern is None:
            return np.zeros(len(arr), dtype=np.float64)
        out = pc.count_substring_regex(arr, pattern=pattern)
        return np.asarray(out.to_numpy(zero_copy_only=False), dtype=np.float64)

    def predict_scores(self, texts: Sequence[str]) -> np.ndarray:
        """(N, K) float64 scores in [0, 1], columns in taxonomy order."""
        n, k = len(texts), self.taxonomy.k
        if n == 0:
            return np.zeros((0, k), dtype=np.float64)
        arr = pc.utf8_lower(pa.array(list(texts), type=pa.string()).fill_null(""))
        patterns = [self._intent, self._benign, *self._strong, *self._medium, *self._damp]
        patterns += [g for _, g in self._gates]
        # Each pattern is one pyarrow pass over the batch; the kernels release the GIL, so
        # passes run on a few threads. Every pass is independent: the result does not
        # depend on the thread count.
        workers = min(4, os.cpu_count() or 1) if n >= 5000 else 1
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                counts = list(pool.map(lambda p: self._count(arr, p), patterns))
        else:
            counts = [self._count(arr, p) for p in patterns]
        intent, benign_c = counts[0], counts[1]
        strong = counts[2 : 2 + k]
        medium = counts[2 + k : 2 + 2 * k]
        damp = counts[2 + 2 * k : 2 + 3 * k]
        gate_c = counts[2 + 3 * k :]
        gain = 1.0 + INTENT_GAIN * np.minimum(intent, 2.0)
        benign = BENIGN_FACTOR ** np.minimum(benign_c, 2.0)
        evidence = np.empty((n, k), dtype=np.float64)
        gated = np.zeros((n, k), dtype=np.float64)
        for j in range(k):
            e = STRONG * strong[j]
            m = MEDIUM * medium[j]
            d = DAMP * damp[j]
            if self._gates[j][0] or self._gates[j][1] is not None:
                gated[:, j] = np.maximum(m - d, 0.0) * gain * benign
                m = np.zeros(n)
            evidence[:, j] = np.maximum(e + m - d, 0.0) * gain * benign
        for j, (cols, gate_pat) in enumerate(self._gates):
            if not cols and gate_pat is None:
                continue
            # the weak cues of a gated category (a minor mentioned, for sexual_minors) count
            # only with co-occurring evidence: sexual content or grooming cues.
            other = evidence[:, cols].sum(axis=1) if cols else np.zeros(n)
            other = other + STRONG * gate_c[j] * gain * benign
            evidence[:, j] += gated[:, j] * (1.0 - np.exp(-other))
        scores = 1.0 - np.exp(-evidence)
        return np.clip(scores, 0.0, 1.0)


_DETECTORS = {"lexicon": LexiconDetector, "lexicon-baseline": LexiconDetector}


def list_detectors() -> list[str]:
    """Names accepted by :func:`get_detector`."""
    return ["lexicon"]


def get_detector(name: str = "lexicon", taxonomy: Taxonomy | str = "toxeval-15") -> Detector:
    """A built-in detector by name (``"lexicon"``, the default) for ``taxonomy``."""
    cls = _DETECTORS.get(name.strip().lower())
    if cls is None:
        raise ValueError(f"unknown detector {name!r}; built-in: {', '.join(list_detectors())}")
    return cls(taxonomy)
