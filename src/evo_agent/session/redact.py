"""Mask well-known secret shapes in what a session writes to disk.

A coding agent reads `.env` files, prints `git remote -v`, cats key files:
its transcript is a magnet for credentials. Before a record is written, every
string in it is scanned for the shapes below, and each match is replaced by
`[REDACTED:<kind>]`. Only the copy on disk is masked: the in-memory history,
and so the model in the live turn, keeps the real value. The price is
fidelity (SPEC §4): a resumed session sends the masked text.

What is caught (the README's "Redaction" says the same for users), three
sources applied together, overlaps merged:

1. gitleaks' rule set as data (gitleaks_rules.py: the vendored toml, its
   keywords, entropy floors and allowlists); the mask names the rule id;
2. evo-agent's own shapes (redact_shapes.py): PEM blocks, URL passwords,
   telling names (`…password`, `…token`, `…_KEY`, `…_PASS`, …) in every
   quoting, base64 `user:pass`, `.netrc`, `mysql -p`, the provider keys;
3. the exact values of the agent's own credentials in its environment
   (`secret_env_values`, a URL's password included), read once at start, and
   those added later (`add_secret_value`: the team store's password from the
   config file) — each also reversed and in base64 (`secret_forms`), the
   spellings a tool uses to get a value past exact matching.

Only the secret itself is replaced: `password=[REDACTED:secret]`,
`Authorization: Bearer [REDACTED:bearer-token]`. The pass is idempotent and
never touches dictionary keys, the envelope (`type`, `timestamp`, `cwd`, …:
metadata, not content) or the fields the format needs verbatim (ids,
`tool_use_id`, session ids, thinking signatures, base64 payloads).

The append path stays fast: each string of a record is scanned once, by one
Aho-Corasick pass for the rules' keywords and anchors, the shapes' anchors and
the forms of the environment's values (`_scan`); when no hit can start a shape
or a rule its keywords select (`_start_plan`: prose's "they", "ask", "key")
nothing else runs, else only those rules and shapes are tried, only where they
can start, and the values' regex only where one of their forms may be. `may_hold_secret` (one pass over an encoded
line for the keywords, the shapes' triggers and the environment's values, a
superset of everything above) tells `sessions fsck --secrets` which lines to
look at.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping
from operator import itemgetter

from . import gitleaks_rules
from .jsonio import encode_line
from .lazyre import lazy_re
from .redact_shapes import ANCHORS, MASKED, find_shapes, is_code_name, plausible_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

MASK = "[REDACTED:{}]"
_MASKED = lazy_re(r"\[REDACTED:[a-z0-9-]+\]\Z")
_KIND_IN_MASK = lazy_re(r"\[REDACTED:([a-z0-9-]+)\]")

# --------------------------------------------------------------------------- exact values

# An environment variable is a credential when a word of its name says so (ANTHROPIC_API_KEY,
# GITHUB_TOKEN, PGPASSWORD, DB_PASS, AWS_SECRET_ACCESS_KEY) and its value is 8 characters or more.
_SECRET_ENV_WORDS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "CREDENTIAL",
                               "CREDENTIALS", "AUTH", "PASSPHRASE", "PAT"})
_SECRET_ENV_SUFFIXES = ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "APIKEY")
_NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO", "KRB5CCNAME"})
_NOT_SECRET_VALUE = lazy_re(r"[/~.].*|\d+|(?i:true|false|yes|no|on|off|none|null)|https?://[^@]*", re.DOTALL)


_URL_PASSWORD = lazy_re(r"\A[A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s]*:([^@/?#\s]+)@")


def secret_env_values(environ: Mapping[str, str]) -> dict[str, str]:
    """{value: variable name} of the credentials in `environ` (SPEC §9: masked wherever they appear).

    A URL's password counts alone too (`EVO_AGENT_SYNC_URL=postgresql://u:PASSWORD@host/db`).
    """
    out: dict[str, str] = {}
    for name, value in environ.items():
        password = _URL_PASSWORD.match(value.strip())
        if password and len(password.group(1)) >= 6:
            out.setdefault(password.group(1), name)
        upper = name.upper()
        if upper in _NOT_SECRET_ENV or len(value) < 8 or _NOT_SECRET_VALUE.fullmatch(value):
            continue
        words = [w for w in re.split(r"[^A-Z0-9]+", upper) if w]
        if any(w in _SECRET_ENV_WORDS or w.endswith(_SECRET_ENV_SUFFIXES) for w in words):
            out.setdefault(value, name)
    return out


def _env_kind(name: str) -> str:
    return "env-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def secret_forms(value: str) -> list[str]:
    """`value` as a tool may print it to get past exact matching: itself, reversed, and base64
    (standard and URL-safe, at each of the three alignments it can have inside a longer encoded
    text: only the characters that depend on the secret's bytes alone)."""
    import base64

    forms = [value, value[::-1]]
    raw = value.encode("utf-8", "surrogatepass")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for offset in range(3):
            encoded = encode(b"\0" * offset + raw).decode("ascii")
            start, end = (8 * offset + 5) // 6, (8 * (offset + len(raw))) // 6
            forms.append(encoded[start:end])
    return [f for f in dict.fromkeys(forms) if len(f) >= 8]


class _Matchers:
    """What redaction compiles once: the exact values (and their forms); the literal pass and `may_hold_secret`'s
    literal triggers when they are first needed (the recorder never asks the latter: `encode_redacted`)."""

    def __init__(self, values: dict[str, str]) -> None:
        exact: dict[str, str] = {}
        for value, name in values.items():
            for form in secret_forms(value):
                exact.setdefault(form, name)
        self.exact = exact
        self.exact_scan = (re.compile("|".join(re.escape(v) for v in sorted(exact, key=len, reverse=True)))
                           if exact else None)
        self._triggers: tuple[Any, int] | None = None
        self._literal_pass: _LiteralPass | None = None

    @property
    def literal_pass(self) -> _LiteralPass:
        """The one automaton every string is scanned with (`_literal_pass_with`), built by the first string that
        is not a constant marked free of shapes: a new session's memory record in a project without memories
        (its text and digests are such constants) is written without building it (issue #30)."""
        literal_pass = self._literal_pass
        if literal_pass is None:
            literal_pass = self._literal_pass = _literal_pass_with(self.exact)
        return literal_pass

    @property
    def triggers(self) -> tuple[Any, int]:
        """(an automaton over the lowered trigger literals, the longest one's length), built at first use."""
        if self._triggers is None:
            literals = {kw.encode() for kw in gitleaks_rules.keywords()} | set(_OWN_TRIGGERS)
            for value in self.exact:
                for form in (value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]):
                    literals.add(form.encode("utf-8", "surrogatepass").lower())
            import ahocorasick_rs  # imported at first use: importing the session library stays cheap

            automaton = ahocorasick_rs.BytesAhoCorasick(sorted(literals),
                                                        implementation=ahocorasick_rs.Implementation.DFA)
            self._triggers = (automaton, max(map(len, literals)))
        return self._triggers


# Literals (lower case) of which every shape in redact_shapes.py leaves at least one in its text:
# its anchors, and (for the JSON fields with telling names) a few shorter words.
_OWN_TRIGGERS = tuple(sorted({a.encode() for a in ANCHORS} | {b"key", b"pass", b"pwd", b"auth", b"gh"}))

_lock = threading.Lock()
_matchers: _Matchers | None = None
# The credentials of the agent's own environment, read once at start (before anything scrubs the
# environment for tools); the matchers that use them are compiled at first use.
_start_values = secret_env_values(os.environ)


def _get_matchers() -> _Matchers:
    global _matchers
    if _matchers is None:
        with _lock:
            if _matchers is None:
                _matchers = _Matchers(_start_values)
    return _matchers


_warm_up_thread: threading.Thread | None = None


def start_warm_up() -> None:
    """Compile what redaction needs (~0.1 s) in a background thread, once per process.

    Otherwise the work falls on the first record that holds a keyword. The
    interactive app calls this when it starts, so the work overlaps the time a
    person takes to type the first prompt. The thread is joined at exit: a
    daemon thread cut off inside the Aho-Corasick extension at interpreter
    shutdown aborts the process ("FATAL: exception not rethrown").
    """
    global _warm_up_thread
    with _lock:
        if _warm_up_thread is not None:
            return
        _warm_up_thread = threading.Thread(target=_warm_up, name="evo-agent-redaction-warm-up", daemon=True)
    atexit.register(_warm_up_thread.join)
    _warm_up_thread.start()


def _warm_up() -> None:
    # Common keywords (api key token secret password auth access, "ey", "s.", "sk") compile the rules they select.
    redact_text("api_key = 'x1' token ey s. sk key auth access password secret credential Bearer Basic ://")


_own_scan: tuple[int, re.Pattern[str] | None] = (0, None)


def mask_own_secrets(text: str) -> str:
    """`text` with every exact value of the agent's own credentials replaced by its mask (SPEC §9: tools never
    see them, so neither does the model). Only exact values: cheap enough for every tool result."""
    global _own_scan
    if not _start_values or not text:
        return text
    count, scan = _own_scan
    if scan is None or count != len(_start_values):
        values = dict(_start_values)
        scan = re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))
        _own_scan = (len(values), scan)
    return scan.sub(lambda m: MASK.format(_env_kind(_start_values.get(m.group(), "secret"))), text)


def use_environment(environ: Mapping[str, str] | None) -> None:
    """Take the exact values to mask from `environ` (None: back to the values read at start; tests)."""
    global _matchers
    with _lock:
        if environ is None:
            _matchers = None
        else:
            _matchers = _Matchers({**secret_env_values(environ), **_added_values})


_added_values: dict[str, str] = {}


def add_secret_value(value: str, name: str) -> None:
    """Mask `value` (and its reversed and base64 forms) from now on: a secret of the agent's own that
    is not in its environment (the team store's password read from the config file)."""
    global _matchers
    if len(value) < 6 or value in _added_values:
        return
    with _lock:
        _added_values[value] = name
        _start_values.setdefault(value, name)
        _matchers = None


# --------------------------------------------------------------------------- text


# Exact texts evo-agent composes from its own constants (the empty Auto Memory section) in which neither the
# shapes nor gitleaks' rules find anything, whatever the environment (tests/session/test_redact.py checks each):
# only the environment's exact values are looked for in them. The first record of a launch is such a text,
# and the shapes' regex and the rules cost ~20 ms to build before its first request (SPEC §8).
_free_of_shapes: set[str] = set()


_free_lengths: set[int] = set()  # their lengths: a text of another length is not hashed to be looked up


def mark_free_of_shapes(text: str) -> None:
    """Say that `text`, exactly, holds nothing the shapes or the rules find (a constant of evo-agent's own)."""
    _free_of_shapes.add(text)
    _free_lengths.add(len(text))


def _may_hold_shapes(hits: dict[str, list[int]]) -> bool:
    """Whether `_literal_hits` found a gitleaks keyword or literal or a shape's anchor: without one neither the
    shapes nor the rules can find anything (the rules need a keyword, every shape an anchor)."""
    return bool(hits)


def _shapes_and_rules(text: str, data: bytes, hits: dict[str, list[int]],
                      found: list[tuple[int, int, int, str]]) -> None:
    """What the shapes (priority 1) and gitleaks' rules (priority 2) find in `text`, added to `found`."""
    if not _SHAPE_ANCHORS.isdisjoint(hits):  # prose holds the rules' keywords ("they", "ask"), rarely an anchor
        shape_starts = sorted({pos for word, at in hits.items() if word in _SHAPE_ANCHORS for pos in at})
        for start, end, kind in find_shapes(text, shape_starts):
            found.append((start, -end, 1, kind))
    for start, end, rule_id in gitleaks_rules.find_spans(text, data, hits):
        if rule_id.startswith("generic") and is_code_name(text[start:end]):
            continue  # `RegEnumKey = win32api.RegEnumKey`: gitleaks flags it, it is code
        found.append((start, -end, 2, rule_id))


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret in `text`, overlaps merged, in order; masks already there are left."""
    if not text:
        return []
    matchers = _matchers or _get_matchers()
    found: list[tuple[int, int, int, str]] = []  # start, -end (the longest sorts first), priority (lower wins), kind
    if len(text) in _free_lengths and text in _free_of_shapes:
        may_hold_value = True  # not scanned for the literals: the exact values are looked for all the same
    else:
        # one pass: whether anything can match, where the shapes and rules try, whether a value's form may be here
        data, hits, may_hold_value = _scan(text, matchers.literal_pass, _prefilter)
        if _may_hold_shapes(hits):
            _shapes_and_rules(text, data, hits, found)
    if may_hold_value and matchers.exact_scan is not None:
        for match in matchers.exact_scan.finditer(text):
            found.append((match.start(), -match.end(), 0, _env_kind(matchers.exact[match.group()])))
    if not found:
        return []
    found.sort(key=_ORDER)  # by start, the longest first, then the priority (stable: found first wins a tie)
    mask_starts, mask_ends = _masks_in(text)
    merged: list[tuple[int, int, str]] = []
    last_end = -1  # the end of merged[-1]
    for start, neg_end, _prio, kind in found:
        end = -neg_end
        if mask_ends:  # the first mask ending after `start` is the only one that can overlap [start, end)
            i = bisect_right(mask_ends, start)
            if i < len(mask_ends) and mask_starts[i] < end:
                continue
        if start < last_end:  # overlaps the one before: one span, the first one's kind
            if end > last_end:
                last_end = end
                merged[-1] = (merged[-1][0], end, merged[-1][2])
            continue
        merged.append((start, end, kind))
        last_end = end
    return merged


def _masks_in(text: str) -> tuple[list[int], list[int]]:
    """(starts, ends) of the masks already in `text`, in order (they never overlap: both lists are sorted)."""
    if "[REDACTED:" not in text:
        return [], []
    spans = [m.span() for m in MASKED.finditer(text)]
    return [s for s, _e in spans], [e for _s, e in spans]


_SHAPE_ANCHORS = frozenset(ANCHORS)
_ORDER = itemgetter(0, 1, 2)  # a finding's (start, -end, priority): `find_secrets`' order, read in C
_FIRST = itemgetter(0)  # a hit's literal index, read in C
_prefilter = True  # `_scan`'s `_may_start` (tests turn it off to compare with the full path)


def _literal_words() -> tuple[str, ...]:
    """The literals whose positions the shapes and the rules need (lower case, sorted)."""
    return tuple(sorted(gitleaks_rules.literals() | set(ANCHORS)))


if TYPE_CHECKING:
    # (words, automaton, exact, plans): the automaton finds, over a lowered haystack, every literal (`words[i]`,
    # its positions wanted) and the lowered haystack of every form of the environment's exact values (`i in
    # exact`; `words[i]` None unless it is a literal too); `plans` keeps, per set of indexes found, their
    # `_start_plan` and whether one of them is a value's form.
    # Built with the matchers, per environment.
    _Checks = tuple[tuple[bool, bytes | None, int], ...]
    _Plan = dict[int, _Checks] | None  # None: a shape or a rule tried everywhere may match, look
    _LiteralPass = tuple[tuple[str | None, ...], Any, frozenset[int], dict[frozenset[int], tuple[_Plan, bool]]]


def _literal_pass_with(exact_forms: Mapping[str, str]) -> _LiteralPass:
    """The one automaton a string is scanned with: the literals, and the exact values' forms as the haystack
    reads them (a form in the text is its haystack, lowered, in the lowered haystack: the pass may only
    say "maybe", never miss one); the values' regex then runs only on a text where one may be."""
    import ahocorasick_rs  # imported at first use: importing the session library stays cheap

    literal = _literal_words()
    keys: dict[bytes, str | None] = {word.encode(): word for word in literal}
    for form in exact_forms:
        keys.setdefault(gitleaks_rules.haystack(form).lower(), None)
    ordered = sorted(keys)
    automaton = ahocorasick_rs.BytesAhoCorasick(ordered, implementation=ahocorasick_rs.Implementation.DFA)
    forms = {gitleaks_rules.haystack(form).lower() for form in exact_forms}
    return (tuple(keys[key] for key in ordered), automaton,
            frozenset(i for i, key in enumerate(ordered) if key in forms), {})


def _start_plan(words: tuple[str | None, ...], indexes: frozenset[int]) -> _Plan:
    """For a text in which the literals `indexes` were found: None when a shape may start at one (its anchor)
    or a gitleaks rule without anchors is selected (its keyword); else {index: the `StartChecks` a hit of that
    literal must meet for a selected rule to start there}, only the literals some selected rule begins with.

    A rule runs only when one of its keywords occurs (gitleaks' first pass) and a rule with anchors finds only
    a match that begins with one and meets its `StartChecks` there (`gitleaks_rules.find`'s `_starts`): where
    no hit meets the plan, neither the shapes nor the rules can find anything.
    """
    plan, unanchored = gitleaks_rules.start_plan()
    present = {words[i] for i in indexes} - {None}
    if not present.isdisjoint(_SHAPE_ANCHORS) or not present.isdisjoint(unanchored):
        return None
    out: dict[int, _Checks] = {}
    for index in indexes:
        word = words[index]
        if word is None:
            continue
        checks = tuple(dict.fromkeys(entry[:3] for entry in plan.get(word, ()) if not entry[3].isdisjoint(present)))
        if checks:
            out[index] = checks
    return out


def _may_start(data: bytes, found: list[tuple[int, int, int]], plan: dict[int, _Checks]) -> bool:
    """Whether a hit in `found` meets the `_start_plan` of the literals found: else no shape and no gitleaks rule
    can find anything in `data`, and `find_secrets` need not even gather the hits (English prose: `ey` inside
    "they", `sk` in "ask", `key` with no operator after it)."""
    word_byte = gitleaks_rules._WORD_BYTE
    assignment = gitleaks_rules._assignment_byte  # made by `start_plan`, which built the plan
    for index, pos, _end in found:
        checks = plan.get(index)
        if checks is None:
            continue
        for boundary, exact, window in checks:
            if boundary and word_byte[data[pos - 1] if pos else 0x20] == word_byte[data[pos]]:
                continue
            if exact is not None and not data.startswith(exact, pos):
                continue
            if window and assignment.search(data, pos, pos + window) is None:
                continue
            return True
    return False


def _scan(text: str, literal_pass: _LiteralPass, prefilter: bool = True) -> tuple[bytes, dict[str, list[int]], bool]:
    """(`text` as the rules read it, {literal: positions in order}, whether a form of an exact value may be in it).

    `prefilter`: the hits are left out ({}) when no shape or rule can start at any of them (`_may_start`).
    """
    # one byte per character (`gitleaks_rules.haystack`, inlined for ASCII): positions are the text's
    data = text.encode("ascii") if text.isascii() else gitleaks_rules.haystack(text)
    words, automaton, exact, plans = literal_pass
    found = automaton.find_matches_as_indexes(data.lower(), overlapping=True)
    if not found:
        return data, {}, False
    if prefilter:
        indexes = frozenset(map(_FIRST, found))
        if indexes in plans:
            plan, may_hold_value = plans[indexes]
        else:
            if len(plans) >= 512:  # the sets of literals a session's texts hold: a few dozen, bounded anyway
                plans.clear()
            may_hold_value = not exact.isdisjoint(indexes)
            plan = _start_plan(words, indexes)
            plans[indexes] = (plan, may_hold_value)
        if plan is not None and not _may_start(data, found, plan):
            return data, {}, may_hold_value
    else:
        may_hold_value = bool(exact) and any(index in exact for index, _start, _end in found)
    by_index: dict[int, list[int]] = {}
    for index, start, _end in found:  # the loop a dense text runs most (a masked MB: ~35,000 hits in 100 KB)
        try:
            by_index[index].append(start)
        except KeyError:  # a literal's first hit (a try costs nothing until it raises)
            by_index[index] = [start]
    hits: dict[str, list[int]] = {}
    for index, at in by_index.items():
        word = words[index]
        if word is not None:  # None: only a form of an exact value
            hits[word] = at
    return data, hits, may_hold_value


def _literal_hits(text: str) -> tuple[bytes, dict[str, list[int]]]:
    """(`text` as the rules read it, {literal: positions in order}): one pass for the shapes and the rules."""
    data, hits, _value = _scan(text, (_matchers or _get_matchers()).literal_pass, prefilter=False)
    return data, hits


def _mask_once(text: str) -> str:
    spans = find_secrets(text)
    return _masked(text, spans) if spans else text


def _masked(text: str, spans: list[tuple[int, int, str]]) -> str:
    parts: list[str] = []
    add = parts.append
    masks: dict[str, str] = {}  # kind → its mask, formatted once (a dense text has thousands of one kind)
    pos = 0
    for start, end, kind in spans:
        add(text[pos:start])
        mask = masks.get(kind)
        if mask is None:
            mask = masks[kind] = MASK.format(kind)
        add(mask)
        pos = end
    add(text[pos:])
    return "".join(parts)


def redact_text(text: str) -> str:
    """`text` with every secret replaced by its mask (the same object when there is none).

    Idempotent: a mask can make a neighbour visible to a shape that refused it
    (`…KEY-----sk-ant-…`), so the pass repeats until nothing changes.
    """
    if not text:
        return text
    spans = find_secrets(text)
    if not spans:  # most texts: no second call
        return text
    masked = _masked(text, spans)
    for _ in range(4):
        again = _mask_once(masked)
        if again is masked:
            break
        masked = again
    return masked


_TRIGGER_CHUNK = 1 << 16


def may_hold_secret(line: bytes, start: int = 0) -> bool:
    """False only when the encoded record certainly holds no secret from `start` on (the fast path).

    Read in chunks of 64 KiB (each overlapping the next by the longest trigger), so that a large
    record with a trigger near its start is not lowered and scanned whole.
    """
    automaton, longest = (_matchers or _get_matchers()).triggers
    if len(line) - start <= _TRIGGER_CHUNK:  # most records: one pass, no chunking
        return bool(automaton.find_matches_as_indexes(line[start:].lower()))
    find, overlap = automaton.find_matches_as_indexes, longest - 1
    for pos in range(start, len(line), _TRIGGER_CHUNK):
        if find(line[pos:pos + _TRIGGER_CHUNK + overlap].lower()):
            return True
    return False


# The envelope (SPEC §2) is metadata the recorder itself writes: never content, never scanned.
ENVELOPE_KEYS = frozenset({"type", "timestamp", "agent_version", "session_id", "cwd", "prompt_id", "git_branch"})

# Values the format needs byte for byte: never scanned, at any depth outside a tool input.
_VERBATIM_KEYS = ENVELOPE_KEYS | {
    "role", "id", "tool_use_id", "signature", "parent_session_id", "from_session_id", "subagent_path", "media_type",
}
_OPAQUE_DATA_TYPES = frozenset({"redacted_thinking", "base64"})


# A key whose string value is a secret whatever it looks like (JSON fields with telling names).
_SECRET_NAME = lazy_re(
    r"[A-Za-z0-9_.-]*(?:(?i:passw(?:or)?d|secret(?:[_-]?key)?|token|api[_-]?key|access[_-]?key|private[_-]?key)"
    r"|[A-Z0-9]_KEY|(?i:[A-Za-z0-9]_(?:pass|pwd)))\Z|_?auth\Z", re.ASCII)


def _is_secret_name(key: object) -> bool:
    if not isinstance(key, str):
        return False
    known = _secret_names.get(key)
    if known is None:
        known = _SECRET_NAME.match(key) is not None
        if len(_secret_names) < 4096:  # a session's keys are a few dozen (content, text, command, …)
            _secret_names[key] = known
    return known


# key → `_SECRET_NAME` matches it: a regex per string value was ~1 µs. The format's own keys are known not to
# be (a test checks each against the regex): a launch's first records are walked with no regex compiled.
_secret_names: dict[str, bool] = dict.fromkeys(
    ("content", "text", "thinking", "command", "description", "name", "file_path", "path", "pattern", "prompt",
     "query", "url", "summary", "old_string", "new_string", "title", "error", "stdout", "stderr", "output"), False)


def _redact_value(value: Any, verbatim: bool) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return _redact_dict(value, verbatim)
    if isinstance(value, list):
        return _redact_list(value, verbatim)
    return value


def _redact_list(value: list[Any], verbatim: bool) -> list[Any]:
    out = None
    for i, item in enumerate(value):
        new = _redact_value(item, verbatim)
        if new is not item:
            if out is None:
                out = list(value)
            out[i] = new
    return value if out is None else out


def _redact_dict(data: dict[str, Any], verbatim: bool) -> dict[str, Any]:
    """A copy with secrets masked, or `data` itself when nothing changed.

    `verbatim`: outside tool inputs, the fields in _VERBATIM_KEYS are ids and
    markers the format depends on; inside a tool input everything is content.
    """
    out = None
    skip: frozenset[str] = _NOTHING
    tool_use = False
    if verbatim:
        kind = data.get("type")
        if kind.__class__ is not str:
            kind = None  # a list or an object (a hostile server's block): no kind of the format's, and unhashable
        skip = _VERBATIM_AND_DATA if kind in _OPAQUE_DATA_TYPES else _VERBATIM_KEYS
        tool_use = kind == "tool_use"
    for key, value in data.items():
        if key in skip:
            continue
        if isinstance(value, str):
            new: Any = (MASK.format("secret") if _is_secret_name(key) and plausible_value(value)
                        else redact_text(value))
        elif isinstance(value, dict):
            new = _redact_dict(value, verbatim and not (tool_use and key == "input"))
        elif isinstance(value, list):
            new = _redact_list(value, verbatim and not (tool_use and key == "input"))
        else:
            continue  # numbers, booleans, null
        if new is not value:
            if out is None:
                out = dict(data)
            out[key] = new
    return data if out is None else out


_NOTHING: frozenset[str] = frozenset()
_VERBATIM_AND_DATA = _VERBATIM_KEYS | {"data"}  # an opaque block's payload (`redacted_thinking`, base64 media)


def redact_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record with every secret shape masked; `record` itself (not a copy) when it has none.

    Never mutates its argument: the caller's messages are the live history.
    """
    return _redact_dict(record, True)


def count_secrets(record: dict[str, Any]) -> Counter[str]:
    """{kind: count} of what redaction masks in `record` today (never the values): `sessions fsck --secrets`.

    Masks already in the record (it was redacted when written) are not counted again.
    """
    clean = redact_record(record)
    if clean is record:
        return Counter()
    return Counter(_KIND_IN_MASK.findall(encode_line(clean).decode("utf-8", "replace"))) - Counter(
        _KIND_IN_MASK.findall(encode_line(record).decode("utf-8", "replace")))


def encode_redacted(record: dict[str, Any], first_field: str | None = None) -> tuple[dict[str, Any], bytes]:
    """(the record as it goes to disk, its line): the recorder's one call.

    Every record is walked, each string scanned once for the literals (`_literal_hits`). A trigger scan
    of the encoded line used to come first, to skip the walk; but gitleaks' keywords are in most English
    (`ey`, `sk`, `key`: "they", "ask") and in every assistant record's `output_tokens`, so most records
    were scanned twice (issue #30 item 7: a 1 KB prompt in prose 13.4 -> 9.1 us; one without a trigger
    3.4 -> 4.6 us). `first_field` (the first field after the envelope) is no longer needed: the walk
    skips the envelope by name.
    """
    clean = redact_record(record)
    return clean, encode_line(clean)


__all__ = ["ENVELOPE_KEYS", "MASK", "add_secret_value", "count_secrets", "encode_redacted", "find_secrets",
           "may_hold_secret", "redact_record", "redact_text", "secret_env_values", "secret_forms", "start_warm_up",
           "use_environment"]
