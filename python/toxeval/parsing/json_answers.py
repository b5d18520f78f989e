"""JSON answers: an object of scores or booleans, a list of names or of
``{"category": ..., "score": ...}`` items, containers (``{"categories": [...]}``), verdict
flags (``"unsafe": true``), JSON in prose; a second JSON answer must agree with the first."""

from __future__ import annotations

import json
import re
from typing import Any

from toxeval.taxonomy import normalize_label

from .answer import MAX_DEPTH, MAX_JSON_CANDIDATES, MISS, Acc, conflict, norm_name
from .json_decode import decode_at, json_items, next_open
from .llama_guard import LlamaGuardReader
from .negations import CUE_RE as NEG_CUE_RE
from .values import NULL_VALUE, Reading, read_number, read_value

# A line of prose that holds JSON or a bracketed list of its own (checked apart).
_BRACKET_RE = re.compile(r"[\[\]{}]")
# Keys of JSON containers that hold the categories, in priority order.
_SCORE_CONTAINERS = ("category scores", "scores", "score", "probabilities", "probability")
_LABEL_CONTAINERS = (
    "final answer",
    "final categories",
    "final category",
    "final labels",
    "final label",
    "categories",
    "category",
    "labels",
    "label",
    "flagged categories",
    "violated categories",
    "unsafe categories",
    "harmful categories",
    "toxic categories",
    "toxicity categories",
    "detected categories",
    "violations",
    "violation",
    "types",
    "type",
    "tags",
    "classes",
    "class",
    "predictions",
    "prediction",
    "results",
    "result",
    "output",
    "answer",
)
_CONTAINERS = tuple(normalize_label(k) for k in _SCORE_CONTAINERS + _LABEL_CONTAINERS)
_CONTAINER_KEYS = frozenset(_CONTAINERS)
# A key that negates the list it holds: {"absent": [...]}, {"not_present": [...]}.
_NEGATED_KEY_RE = NEG_CUE_RE
# Boolean verdict keys: value True means "toxic" unless the key is in _SAFE_FLAGS.
_UNSAFE_FLAGS = frozenset(
    normalize_label(k)
    for k in ("unsafe", "flagged", "toxic", "is toxic", "is_unsafe", "harmful", "is harmful")
)
_SAFE_FLAGS = frozenset(normalize_label(k) for k in ("safe", "is safe", "is_safe", "benign"))
_SPECIAL_KEYS = _CONTAINER_KEYS | _UNSAFE_FLAGS | _SAFE_FLAGS
# Keys that carry commentary, not categories.
_META_KEYS = frozenset(
    normalize_label(k)
    for k in (
        "reason",
        "reasoning",
        "reasons",
        "explanation",
        "rationale",
        "justification",
        "analysis",
        "comment",
        "comments",
        "note",
        "notes",
        "thought",
        "thoughts",
        "summary",
        "confidence",
        "severity",
        "text",
        "input",
        "prompt",
        "id",
        "model",
        "verdict",
        "rating",
    )
)
# In a list of objects: which key names the category and which holds its score.
_ITEM_NAME_KEYS = ("category", "label", "name", "id", "type", "code", "class")
_ITEM_SCORE_KEYS = ("score", "probability", "prob", "confidence", "value", "likelihood")
_ITEM_FLAG_KEYS = ("flagged", "present", "applies", "value", "detected", "unsafe", "toxic")
# "confidence" beside a verdict ({"present": false, "confidence": 0.9}) is how sure the
# model is of that verdict, not a score for the category: it is read only when no
# verdict key is given.
_VERDICT_KEYS = (*_ITEM_FLAG_KEYS, "label", "verdict", "answer")


class JsonReader(LlamaGuardReader):
    """Reads the JSON in an answer; a string inside it is read as a text answer."""

    def body(self, s: str, depth: int) -> Acc:
        """Interpret one block of text; :class:`~toxeval.parsing.parser.Parser` defines it."""
        raise NotImplementedError

    def json_anywhere(self, s: str, depth: int) -> Acc | None:
        """The whole text as JSON, else the first embedded JSON that resolves something."""
        if depth >= MAX_DEPTH:
            return None
        starts_json = s[:1] in "[{"
        pos = 0
        tried = 0
        while tried < MAX_JSON_CANDIDATES:
            i = next_open(s, pos)
            if i < 0:
                return None
            tried += 1
            value, end, ok = decode_at(s, i)
            whole = i == 0 and starts_json
            if not ok:
                if whole and (end < 0 or end >= len(s)):
                    acc = Acc()
                    acc.errors.append(
                        "malformed JSON" + (" (unbalanced brackets)" if end < 0 else "")
                    )
                    return acc
                pos = i + 1
                continue
            if not whole and isinstance(value, list) and not value:
                pos = end  # "- [ ] hate": a check box in prose, not an empty answer
                continue
            acc = self._interpret_top(value, depth)
            if whole and (end >= len(s) or not s[end:].strip()):
                return acc  # the output IS this JSON: its verdict stands
            if acc.resolved and not acc.errors:
                self._later_json(s, end, acc, depth)
                if not acc.errors:  # prose around it must not take it back
                    lines = f"{s[:i]}\n{s[end:]}".splitlines()
                    self.prose_beside_answer([x for x in lines if not _BRACKET_RE.search(x)], acc)
                return acc
            if whole and (acc.errors or acc.unknown):
                return acc
            pos = i + 1
        return None

    def _later_json(self, s: str, pos: int, first: Acc, depth: int) -> None:
        """A second JSON answer after the first one must say the same thing."""
        for _ in range(MAX_JSON_CANDIDATES):
            i = next_open(s, pos)
            if i < 0:
                return
            value, end, ok = decode_at(s, i)
            if ok:
                other = self._interpret_top(value, depth)
                if other.resolved and not other.errors:
                    self.agree(first, other, "JSON answers")
                    if first.errors:
                        return
            pos = end if ok and end > i else i + 1

    def _interpret_top(self, value: Any, depth: int) -> Acc:
        acc = Acc()
        if isinstance(value, (list, dict)) and not value:
            acc.resolved = True  # [] or {}: nothing applies
            acc.complete = True
            return acc
        self._interpret(value, acc, depth)
        if not acc.resolved and not acc.unknown and not acc.errors:
            if acc.unsafe_flag:
                acc.errors.append("flagged unsafe but no category given")
            else:
                acc.errors.append(f"JSON {type(value).__name__} names no category")
        return acc

    def _interpret(self, value: Any, acc: Acc, depth: int) -> None:
        if depth >= MAX_DEPTH:
            acc.errors.append("JSON nested too deeply")
            return
        if isinstance(value, dict):
            self._interpret_dict(value, acc, depth)
        elif isinstance(value, list):
            if not value:
                acc.resolved = True
                acc.complete = True
            for item in value:
                if isinstance(item, str):
                    self.piece(item, acc)
                elif isinstance(item, dict):
                    self._interpret_item(item, acc, depth + 1)
                elif isinstance(item, list):
                    self._interpret(item, acc, depth + 1)
                else:
                    acc.add_unknown(json.dumps(item))
        elif isinstance(value, str):
            sub = self.body(value.strip(), depth + 1) if value.strip() else None
            if sub is not None:
                _merge(acc, sub)
        else:
            acc.errors.append(f"JSON {json.dumps(value)[:40]} names no category")

    def _interpret_item(self, item: dict[str, Any], acc: Acc, depth: int) -> None:
        """A list element like {"category": "hate", "score": 0.9}."""
        keys = {norm_name(str(k)): k for k in item}
        name_key = next((keys[k] for k in _ITEM_NAME_KEYS if k in keys), None)
        if name_key is None or not isinstance(item[name_key], str):
            self._interpret_dict(item, acc, depth)
            return
        name = item[name_key]
        hit = self.resolve(name)
        flag_key = next((keys[k] for k in _ITEM_FLAG_KEYS if k in keys), None)
        score_key = next(
            (
                keys[k]
                for k in _ITEM_SCORE_KEYS
                if k in keys and k != "value" and not (k == "confidence" and flag_key)
            ),
            None,
        )
        if hit and _verdicts_disagree(item):
            acc.errors.append(f"{name!r}: its verdict and its score disagree")
            return
        given = [item[k] for k in (score_key, flag_key) if k is not None]
        if not given:
            value: float | None = 1.0  # {"category": "hate"}: a bare mention
            graded = False
            acc.complete = True  # a list of mentions is a label list
        else:
            # the first non-null of score and flag; all null: "no value given"
            value, graded, err = _json_value(next((v for v in given if v is not None), None))
            if err is not None:
                self.bad_value(name, err, acc)
                return
        if hit is None:
            if value or self.suggest(name)[0]:
                self.unknown_name(acc, name)
            return
        if value is None:
            return
        if graded:
            acc.graded = True
        acc.add(hit, value)

    def _interpret_dict(self, obj: dict[str, Any], acc: Acc, depth: int) -> None:
        norm: dict[str, Any] = {}
        for k in obj:
            norm.setdefault(norm_name(str(k)), k)
        special = norm.keys() & _SPECIAL_KEYS
        # Verdict flags ("unsafe": true / "safe": false / "flagged": true).
        for nk in special:
            if nk not in _UNSAFE_FLAGS and nk not in _SAFE_FLAGS:
                continue
            k = norm[nk]
            if self.resolve(str(k)):
                continue  # a category that happens to be called "toxic"
            flag, _, _ = _json_value(obj[k])
            if flag is not None:
                unsafe = bool(flag) if nk in _UNSAFE_FLAGS else not bool(flag)
                acc.unsafe_flag = unsafe
                if not unsafe:
                    acc.resolved = True
        # Containers ({"categories": [...]}, {"category_scores": {...}}): first that says something.
        for nk in _CONTAINERS if special else ():
            if nk in norm and not self.resolve(str(norm[nk])):
                sub = Acc()
                inner = obj[norm[nk]]
                if isinstance(inner, (list, dict)) and not inner:
                    sub.resolved = True
                    sub.complete = True
                else:
                    self._interpret(inner, sub, depth + 1)
                if sub.resolved or sub.errors or sub.unknown:
                    _merge(acc, sub)
                    self._keys_beside(obj, norm[nk], acc, depth)
                    self._lists_beside(obj, norm, nk, sub, acc, depth)
                    return
        # Otherwise a category -> score/bool object (a key given twice: the larger value, or a contradiction).
        for k, v in json_items(obj):
            ks = str(k)
            nk = norm_name(ks)
            hit = self.resolve(ks)
            if not hit and (nk in _META_KEYS or nk in _SPECIAL_KEYS):
                continue
            if isinstance(v, dict):
                if hit and _verdicts_disagree(v):
                    acc.errors.append(f"{ks!r}: its verdict and its score disagree")
                    continue
                inner = _inner_value(v)
                if inner is MISS:
                    if hit is None:
                        self._interpret(v, acc, depth + 1)
                        continue
                    acc.errors.append(f"{ks!r}: unsupported value {json.dumps(v)[:40]}")
                    continue
                v = inner
            value, graded, err = _json_value(v)
            if hit is None:
                if isinstance(v, list) and v and _NEGATED_KEY_RE.search(ks.replace("_", " ")):
                    self._negated_json_list(ks, v, acc, depth)  # {"not_present": [...]}
                elif isinstance(v, list) and v and hit is None:
                    self._interpret(v, acc, depth + 1)  # {"hate speech detected": [...]}
                elif value or err is not None or self.suggest(ks)[0]:
                    self.unknown_name(acc, ks)
                continue
            if err is not None or value is None:
                self.bad_value(ks, err or NULL_VALUE, acc)
                continue
            if graded:
                acc.graded = True
            acc.add(hit, value)

    def _lists_beside(
        self, obj: dict[str, Any], norm: dict[str, Any], nk: str, sub: Acc, acc: Acc, depth: int
    ) -> None:
        """Another container that holds a list (``{"scores": {"hate": 0.9}, "categories":
        ["violence"]}``) must not contradict the one that was read."""
        for other in _CONTAINERS:
            inner = obj[norm[other]] if other != nk and other in norm else None
            if not isinstance(inner, list) or not inner or self.resolve(str(norm[other])):
                continue
            said = Acc()
            self._interpret(inner, said, depth + 1)
            if said.resolved and not said.errors and conflict(sub, said):
                acc.errors.append(
                    f"contradictory: the {norm[nk]!r} and {norm[other]!r} containers disagree"
                )
                return

    def _keys_beside(self, obj: dict[str, Any], container: str, acc: Acc, depth: int) -> None:
        """Category keys beside a container (``{"categories": ["hate"], "violence": 0.9}``)
        must agree with it: a key whose value is on the other side of the threshold from
        what the container says of that category is a contradiction, never dropped; a
        category the container says nothing of takes the key's value."""
        beside = {k: v for k, v in json_items(obj) if k != container and self.resolve(str(k))}
        if not beside:
            return
        keyed = Acc()
        self._interpret_dict(beside, keyed, depth + 1)
        acc.errors.extend(keyed.errors)
        for c, v in keyed.scores.items():
            said = acc.scores.get(c, 0.0 if acc.complete else None)
            if said is None:  # scores in the container, this category's beside it
                acc.add((c,), v)
                acc.graded = acc.graded or keyed.graded
            elif (v >= self.threshold) != (said >= self.threshold):
                name = self.ids[c]
                acc.errors.append(
                    f"contradictory: the {container!r} list and the {name!r} key disagree"
                )

    def _negated_json_list(self, key: str, items: list[Any], acc: Acc, depth: int) -> None:
        """{"absent": ["hate"]}, {"not_present": [...]}: the names listed are negatives
        (the others unknown); a value other than a bare name cannot be read."""
        sub = Acc()
        self._interpret(items, sub, depth + 1)
        if sub.errors or sub.unknown or any(v != 1.0 for v in sub.scores.values()):
            acc.errors.append(f"{key!r}: a negated list that is not a list of category names")
            return
        for c in sub.scores:
            acc.add((c,), 0.0)


def _merge(acc: Acc, sub: Acc) -> None:
    for c, v in sub.scores.items():
        acc.add((c,), v)
    for c in sub.conflicts:
        acc.conflicts[c] = None
    acc.sentences.extend(sub.sentences)
    acc.resolved = acc.resolved or sub.resolved
    acc.graded = acc.graded or sub.graded
    for u in sub.unknown:
        acc.add_unknown(u)
    acc.complete = acc.complete or sub.complete
    for c in sub.unsure:
        acc.unsure[c] = None
    acc.unplaced.extend(sub.unplaced)
    acc.errors.extend(sub.errors)
    acc.notes.extend(sub.notes)
    if sub.unsafe_flag is not None:
        acc.unsafe_flag = sub.unsafe_flag


def _json_value(v: Any) -> Reading:
    """(value, graded, error) of a JSON value given for a category; null is an error
    (:data:`NULL_VALUE`), never a 0."""
    if v is None:
        return None, False, NULL_VALUE
    if isinstance(v, bool):
        return (1.0 if v else 0.0), False, None
    if isinstance(v, (int, float)):
        try:
            x = float(v)
        except OverflowError:
            return None, False, "score is not a finite number"
        return read_number(x)
    if isinstance(v, str):
        return read_value(v)
    return None, False, f"unsupported value {json.dumps(v)[:40]}"


def _verdicts_disagree(v: dict[str, Any]) -> bool:
    """A verdict and a score of one category on either side of 0.5: {"present": true,
    "score": 0.1}. ("confidence" beside a verdict is how sure it is, not a score.)"""
    keys = {norm_name(str(k)): k for k in v}
    verdict = any(name in keys for name in _VERDICT_KEYS)
    sides = set()
    for name in (*_ITEM_SCORE_KEYS, *_VERDICT_KEYS):
        if name in keys and not (name == "confidence" and verdict):
            x = _json_value(v[keys[name]])[0]
            if x is not None:
                sides.add(x >= 0.5)
    return len(sides) > 1


def _inner_value(v: dict[str, Any]) -> Any:
    """{"score": 0.9, "flagged": true} -> 0.9; {"flagged": true} -> True; {"present": false,
    "confidence": 0.9} -> False; {"score": null} -> None; MISS when no key holds a value."""
    keys = {norm_name(str(k)): k for k in v}
    verdict = any(name in keys for name in _VERDICT_KEYS)
    for name in (*_ITEM_SCORE_KEYS, *_VERDICT_KEYS):
        if name in keys and not (name == "confidence" and verdict):
            return v[keys[name]]
    return MISS
