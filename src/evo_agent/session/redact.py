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

The append path stays fast: a record is first encoded as usual, and only when
its bytes hold one of the trigger literals (`may_hold_secret`: one Aho-Corasick
pass for the rules' keywords, the shapes' anchors and the environment's
values, a superset of everything above) is it walked and re-encoded.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

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
    """What redaction compiles once: the exact values (and their forms) and the fast path's literal triggers."""

    def __init__(self, values: dict[str, str]) -> None:
        exact: dict[str, str] = {}
        for value, name in values.items():
            for form in secret_forms(value):
                exact.setdefault(form, name)
        self.exact = exact
        self.exact_scan = (re.compile("|".join(re.escape(v) for v in sorted(exact, key=len, reverse=True)))
                           if exact else None)
        literals = {kw.encode() for kw in gitleaks_rules.keywords()} | set(_OWN_TRIGGERS)
        for value in exact:
            for form in (value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]):
                literals.add(form.encode("utf-8", "surrogatepass").lower())
        import ahocorasick_rs  # imported at first use: importing the session library stays cheap

        self.triggers = ahocorasick_rs.BytesAhoCorasick(sorted(literals),
                                                        implementation=ahocorasick_rs.Implementation.DFA)
        self.longest_trigger = max(map(len, literals))


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


def mark_free_of_shapes(text: str) -> None:
    """Say that `text`, exactly, holds nothing the shapes or the rules find (a constant of evo-agent's own)."""
    _free_of_shapes.add(text)


def _may_hold_shapes(hits: dict[str, list[int]]) -> bool:
    """Whether `_literal_hits` found a gitleaks keyword or literal or a shape's anchor: without one neither the
    shapes nor the rules can find anything (the rules need a keyword, every shape an anchor)."""
    return bool(hits)


def _shapes_and_rules(text: str, data: bytes, hits: dict[str, list[int]],
                      found: list[tuple[int, int, int, str]]) -> None:
    """What the shapes (priority 1) and gitleaks' rules (priority 2) find in `text`, added to `found`."""
    shape_starts = sorted({pos for word, at in hits.items() if word in _SHAPE_ANCHORS for pos in at})
    for start, end, kind in find_shapes(text, shape_starts):
        found.append((start, end, 1, kind))
    for hit in gitleaks_rules.find(text, data, hits):
        if hit.rule_id.startswith("generic") and is_code_name(text[hit.start:hit.end]):
            continue  # `RegEnumKey = win32api.RegEnumKey`: gitleaks flags it, it is code
        found.append((hit.start, hit.end, 2, hit.rule_id))


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret in `text`, overlaps merged, in order; masks already there are left."""
    if not text:
        return []
    matchers = _get_matchers()
    found: list[tuple[int, int, int, str]] = []  # start, end, priority (lower wins a tie), kind
    if matchers.exact_scan is not None:
        for match in matchers.exact_scan.finditer(text):
            found.append((match.start(), match.end(), 0, _env_kind(matchers.exact[match.group()])))
    if text not in _free_of_shapes:
        data, hits = _literal_hits(text)  # one pass: whether anything can match, and where the shapes and rules try
        if _may_hold_shapes(hits):
            _shapes_and_rules(text, data, hits, found)
    if not found:
        return []
    masks = [m.span() for m in MASKED.finditer(text)] if "[REDACTED:" in text else []
    found.sort(key=lambda f: (f[0], -f[1], f[2]))
    merged: list[list[Any]] = []
    for start, end, _prio, kind in found:
        if any(start < m_end and m_start < end for m_start, m_end in masks):
            continue
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            continue
        merged.append([start, end, kind])
    return [(s, e, k) for s, e, k in merged]


_SHAPE_ANCHORS = frozenset(ANCHORS)


@lru_cache(maxsize=1)
def _literal_automaton() -> tuple[tuple[str, ...], Any]:
    """(the literals whose positions the shapes and the rules need, sorted; an automaton over bytes)."""
    import ahocorasick_rs

    words = tuple(sorted(gitleaks_rules.literals() | set(ANCHORS)))
    return words, ahocorasick_rs.BytesAhoCorasick([w.encode() for w in words],
                                                  implementation=ahocorasick_rs.Implementation.DFA)


def _literal_hits(text: str) -> tuple[bytes, dict[str, list[int]]]:
    """(`text` as the rules read it, {literal: positions in order}): one pass for the shapes and the rules."""
    data = gitleaks_rules.haystack(text)  # one byte per character: positions are the text's
    words, automaton = _literal_automaton()
    hits: dict[str, list[int]] = {}
    for index, start, _end in automaton.find_matches_as_indexes(data.lower(), overlapping=True):
        hits.setdefault(words[index], []).append(start)
    return data, hits


def _mask_once(text: str) -> str:
    spans = find_secrets(text)
    if not spans:
        return text
    parts, pos = [], 0
    for start, end, kind in spans:
        parts += [text[pos:start], MASK.format(kind)]
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def redact_text(text: str) -> str:
    """`text` with every secret replaced by its mask (the same object when there is none).

    Idempotent: a mask can make a neighbour visible to a shape that refused it
    (`…KEY-----sk-ant-…`), so the pass repeats until nothing changes.
    """
    if not text:
        return text
    masked = _mask_once(text)
    if masked is text:
        return text
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
    matchers = _matchers or _get_matchers()
    if len(line) - start <= _TRIGGER_CHUNK:  # most records: one pass, no chunking
        return bool(matchers.triggers.find_matches_as_indexes(line[start:].lower()))
    find, overlap = matchers.triggers.find_matches_as_indexes, matchers.longest_trigger - 1
    for pos in range(start, len(line), _TRIGGER_CHUNK):
        if find(line[pos:pos + _TRIGGER_CHUNK + overlap].lower()):
            return True
    return False


def _payload_start(line: bytes, first_field: str | None) -> int:
    """Where the field `first_field` begins in `line`: the envelope before it is never scanned.

    An unescaped `,"key":` can only be structure (inside a JSON string every
    `"` is escaped), so its first occurrence is the field itself.
    """
    if first_field is None:
        return 0
    needle = _FIELD_NEEDLES.get(first_field)
    if needle is None:
        needle = _FIELD_NEEDLES[first_field] = (b',"' + first_field.encode() + b'":'
                                                if _PLAIN_KEY.match(first_field) else b"")
    found = line.find(needle) if needle else -1
    return found if found >= 0 else 0


_FIELD_NEEDLES: dict[str, bytes] = {}  # first field → `,"field":` (b"" when the name needs escaping)


# The envelope (SPEC §2) is metadata the recorder itself writes: never content, never scanned.
ENVELOPE_KEYS = frozenset({"type", "timestamp", "agent_version", "session_id", "cwd", "prompt_id", "git_branch"})
_PLAIN_KEY = lazy_re(r"[A-Za-z0-9_]+\Z")

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


_secret_names: dict[str, bool] = {}  # key → `_SECRET_NAME` matches it: a regex per string value was ~1 µs


def _redact_value(value: Any, verbatim: bool) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return _redact_dict(value, verbatim)
    if isinstance(value, list):
        out = None
        for i, item in enumerate(value):
            new = _redact_value(item, verbatim)
            if new is not item:
                if out is None:
                    out = list(value)
                out[i] = new
        return value if out is None else out
    return value


def _redact_dict(data: dict[str, Any], verbatim: bool) -> dict[str, Any]:
    """A copy with secrets masked, or `data` itself when nothing changed.

    `verbatim`: outside tool inputs, the fields in _VERBATIM_KEYS are ids and
    markers the format depends on; inside a tool input everything is content.
    """
    out = None
    opaque_data = verbatim and data.get("type") in _OPAQUE_DATA_TYPES
    is_tool_use = verbatim and data.get("type") == "tool_use"
    for key, value in data.items():
        if verbatim and (key in _VERBATIM_KEYS or (opaque_data and key == "data")):
            continue
        if isinstance(value, str) and _is_secret_name(key) and plausible_value(value):
            new: Any = MASK.format("secret")
        else:
            new = _redact_value(value, verbatim and not (is_tool_use and key == "input"))
        if new is not value:
            if out is None:
                out = dict(data)
            out[key] = new
    return data if out is None else out


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

    `first_field` names the first field after the envelope, when the caller
    knows it, so the scan starts there. The common case costs one regex
    search over the encoded fields on top of the encoding itself; only a
    line with a trigger is walked and re-encoded.
    """
    line = encode_line(record)
    if not may_hold_secret(line, _payload_start(line, first_field)):
        return record, line
    clean = redact_record(record)
    return clean, (line if clean is record else encode_line(clean))


__all__ = ["ENVELOPE_KEYS", "MASK", "add_secret_value", "count_secrets", "encode_redacted", "find_secrets",
           "may_hold_secret", "redact_record", "redact_text", "secret_env_values", "secret_forms", "start_warm_up",
           "use_environment"]
