"""gitleaks' rule set as data: its vendored `gitleaks_rules.toml`, read with gitleaks' own semantics.

gitleaks keeps a maintained list of vendor secret shapes (221 rules), each a Go
RE2 regex with keywords for a cheap first pass, an optional entropy floor, the
group holding the secret and allowlists. Rather than grow a hand-written list,
redaction reads that file (vendored with its licence, `gitleaks_rules.LICENSE`)
and applies it as gitleaks does when it scans stdin (no file path):

1. keywords: a rule runs only when one of its keywords occurs in the text (ASCII
   case-insensitively), found by one Aho-Corasick pass (ahocorasick-rs) over the
   lower-cased bytes for all keywords at once;
2. the rule's regex, compiled as written by RE2 (google-re2: the engine gitleaks'
   Go regexp follows, linear in the text, so no input can make a rule backtrack;
   only a leading lazy `[\\w.-]{0,50}?` is dropped, see `_strip_lazy_prefix`),
   finds matches, tried only where one of the literals every match begins with
   occurs (`literal_starts`); the secret is `secretGroup`, else the first
   non-empty group, else the whole match;
3. a secret is dropped when its Shannon entropy is at or below the rule's
   `entropy`, when a `generic-*` secret has no digit, and when the global or the
   rule's allowlist allows it (regexes on the secret, the match or the line;
   stopwords; AND conditions). Rules and allowlists that need a file path never
   apply: a transcript has none.

Rules are compiled lazily, one at a time, the first time a keyword asks for them
(importing this module reads nothing and imports neither RE2 nor the automaton).
A rule whose regex RE2 refuses is kept in `skipped_rules()` with the reason, and a
test asserts that list.
"""

from __future__ import annotations

import codecs
import collections
import json
import math
import re
import sys
from bisect import bisect_right
from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import accumulate
from pathlib import Path

from .lazyre import lazy_re
from .plaindata import plain_dataclass as dataclass
from .plaindata import plain_field as field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

GITLEAKS_VERSION = "8.30.1"
RULES_FILE = "gitleaks_rules.toml"
RULES_JSON = "gitleaks_rules.json"
ANCHORS_JSON = "gitleaks_anchors.json"  # the rules' keywords and `_computed_derived()`, kept beside them (refresh_json)

# --------------------------------------------------------------------------- RE2 on a haystack


def _opaque(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: each character Latin-1 cannot hold becomes one byte 0x80."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return "\x80" * (exc.end - exc.start), exc.end


codecs.register_error("evo-agent-opaque", _opaque)


def haystack(text: str) -> bytes:
    """`text` as the rules read it: one byte per character, so that every position is the same.

    The rules run in RE2's Latin-1 mode. ASCII is itself, and every other character
    is one byte of 0x80-0xFF (a character past Latin-1 becomes 0x80). No rule's
    ASCII pattern names such a byte, nor does `(?i)` fold an ASCII letter into one,
    so it is matched only by `.` and negated classes: what a non-ASCII character
    was matched by under Python's `re.ASCII`, since `\\w`, `\\d`, `\\s` and `\\b` are
    ASCII in RE2 (and in gitleaks' Go regexp). Match positions are the text's own:
    nothing is decoded to map them back.
    """
    if text.isascii():
        return text.encode("ascii")
    return text.encode("latin-1", "evo-agent-opaque")


@lru_cache(maxsize=1)
def _re2_options() -> Any:
    import re2  # imported at first use: importing this module stays cheap

    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    # A cap, not an allocation: with RE2's 8 MiB default the semi-generic rules' DFAs filled their
    # cache and were rebuilt again and again over a MB of text (3x slower).
    options.max_mem = 64 << 20
    return options


def _compile(go: str) -> Any:
    """A gitleaks (Go RE2) pattern compiled as written, by RE2 itself: linear in the text, whatever it holds."""
    import re2

    return re2.compile(go.encode("ascii"), _re2_options())


@lru_cache(maxsize=1)
def _ANCHOR_START() -> Any:  # noqa: N802 - stands for RE2's constant
    import re2

    return re2._re2.RE2.Anchor.ANCHOR_START


@lru_cache(maxsize=1)
def _UNANCHORED() -> Any:  # noqa: N802 - stands for RE2's constant
    import re2

    return re2._re2.RE2.Anchor.UNANCHORED


def _raw_match(pattern: Any) -> Any:
    """RE2's own `Match(anchor, data, pos, endpos)` of a compiled pattern (spans of every group, (-1, -1) for
    none), or None where the binding hides it: its match objects ask RE2 for the number of groups on every
    `span`, and a dense MB asks ~100,000 times."""
    return getattr(getattr(pattern, "_regexp", None), "Match", None)


def _re2_error() -> type[Exception]:
    import re2

    error: type[Exception] = re2.error
    return error


# A leading `[\w.-]{0,50}?` (lazy, may be empty) changes where a match starts, never whether
# there is one or which group holds the secret. Without it a match begins with one of the rule's
# names, so the rule is tried only where a name begins (`_matches`) instead of scanning the whole
# text (generic-api-key: ~2 ms against ~19 ms a MB); the prefix is put back (`_extend_left`) for
# allowlists that read the match.
_LAZY_PREFIX = r"[\w.-]{0,50}?"


def _strip_lazy_prefix(go: str) -> tuple[str, str | None]:
    """(the pattern without its lazy prefix, the name alternation that then begins it, or None)."""
    for head in ("(?i)" + _LAZY_PREFIX, _LAZY_PREFIX + "(?i:" + _LAZY_PREFIX):
        if go.startswith(head):
            rest = go[len(head):]
            names = _group_at(rest) if len(_split_top(rest)) == 1 else None  # atlassian: `…|\\b(ATATT3…)`
            return ("(?i)" + rest if head.startswith("(?i)") else "(?i:" + rest), names
    return go, None


def _group_at(src: str) -> str | None:
    """The inside of the `(?:…)` group `src` starts with, or None."""
    if not src.startswith("(?:"):
        return None
    depth = 0
    for i, ch in enumerate(src):
        if ch == "\\":
            return None  # escapes: not a plain list of names
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return src[3:i]
    return None


def _split_top(alternation: str) -> list[str]:
    """`alternation` split at its `|`s outside groups, classes and escapes."""
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(alternation):
        ch = alternation[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "|" and depth == 0:
            parts.append(alternation[start:i])
            start = i + 1
        i += 1
    return parts + [alternation[start:]]


def name_prefixes(alternation: str) -> list[str] | None:
    """The literal (lower-case) beginnings of every way `alternation` can match, or None when unsure.

    `access|(?-i:[Aa]pi|API)|passw(?:or)?d` → access, api, api, passwd, password.
    """
    out: list[str] = []
    for alt in _split_top(alternation):
        inner = re.fullmatch(r"\(\?(?:-i:|:)(.*)\)", alt)
        if inner:
            more = name_prefixes(inner.group(1))
            if more is None:
                return None
            out += more
            continue
        optional = re.fullmatch(r"([a-z0-9_-]+)\(\?:([a-z0-9_-]+)\)\?([a-z0-9_-]*)", alt, re.IGNORECASE)
        if optional:
            out += [(optional.group(1) + optional.group(3)).lower(),
                    (optional.group(1) + optional.group(2) + optional.group(3)).lower()]
            continue
        literal = re.sub(r"\[([A-Za-z])([A-Za-z])\]", lambda m: m.group(1) if m.group(1).lower() == m.group(2).lower()
                         else "\x00", alt)
        head = re.match(r"[A-Za-z0-9_ -]*", literal)  # `*`: always matches, perhaps empty
        prefix = head.group().lower() if head else ""
        if not prefix:
            return None
        out.append(prefix)
    return out


_FLAG_GROUP = lazy_re(r"\(\?-?[imsU]+\)")  # (?i): flags for what follows, zero width
_GROUP_OPEN = lazy_re(r"\((?:\?(?:-?[imsU]+)?:|\?P<\w+>)?")  # (, (?:, (?i:, (?-i:, (?P<name>
_LITERAL = lazy_re(r"(?:[A-Za-z0-9_ -]|\\[.\-_/]|\[([A-Za-z])(?i:\1)\])+")  # `SG\.`, `[Aa]pi`


def _closing(src: str) -> int:
    """The index of the `)` that closes the group `src` opens with, or -1."""
    depth, i, in_class = 0, 0, False
    while i < len(src):
        ch = src[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def literal_starts(source: str) -> list[str] | None:
    """The literal (lower-case) beginnings one of which every match of `source` starts with, or None when unsure.

    `\\b((?:sc|ext)_(?i)[a-z0-9]{5,30}…` → sc_, ext_; `\\b(SG\\.(?i)…` → sg.; `(?i)\\bfoo?…` → fo. Reads
    zero-width `\\b` and flag groups, groups that must match (no `?`, `*` or `{` after them), alternations
    and literal runs; anything else is unsure. Only a prefix is needed: a shorter one is still true.
    """
    out: list[str] = []
    for alt in _split_top(source):
        rest = alt
        while True:
            if rest.startswith("\\b"):
                rest = rest[2:]
            elif flags := _FLAG_GROUP.match(rest):
                rest = rest[flags.end():]
            else:
                break
        opened = _GROUP_OPEN.match(rest)
        if opened:
            end = _closing(rest)
            if end < 0 or rest[end + 1:end + 2] in ("?", "*", "{"):
                return None
            inner = literal_starts(rest[opened.end():end])
            if inner is None:
                return None
            out += inner
            continue
        run = _LITERAL.match(rest)
        if run is None:
            return None
        text = run.group()
        if rest[run.end():run.end() + 1] in ("?", "*", "{"):  # the last piece is optional or repeated
            text = text[:text.rfind("[")] if text.endswith("]") else text[:-2] if text[-2:-1] == "\\" else text[:-1]
        prefix = re.sub(r"\[([A-Za-z])[A-Za-z]\]", r"\1", text).replace("\\", "").lower()
        if not prefix:
            return None
        out.append(prefix)
    return out


# --------------------------------------------------------------------------- rules


def _entropy_term(count: int, total: int) -> float:
    return count / total * math.log2(count / total)


def _count_in_python(counts: dict[str, int], text: str) -> None:
    """`collections._count_elements` where collections lacks it."""
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1


# Counter's own counting loop (in C where collections has it), into a plain dict, in first-seen order
_count_elements: Callable[[dict[str, int], str], None] = getattr(collections, "_count_elements", _count_in_python)

# length → [_entropy_term(count, length) for each count], made as lengths are met (a dense MB held 24,000
# candidates); at most 256 lengths of at most 257 floats (~1.7 MB), longer texts compute their terms
_ENTROPY_TABLE_MAX = 256
_entropy_terms: dict[int, list[float]] = {}


def shannon_entropy(text: str) -> float:
    """Bits per character, as gitleaks computes it."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    _count_elements(counts, text)
    return _entropy_of(counts, len(text))


def _entropy_of(counts: dict[str, int], total: int) -> float:
    """The entropy of `total` characters counted in `counts` (first seen first).

    The terms come from a table and are summed in Counter's order, as
    `-sum(_entropy_term(c, n) for c in Counter(text).values())` would: the same float, without a Python
    call per distinct character or Counter's Python-level `__init__`.
    """
    terms = _entropy_terms.get(total)
    if terms is None:
        if total > _ENTROPY_TABLE_MAX:
            return -sum(_entropy_term(count, total) for count in counts.values())
        terms = _entropy_terms[total] = [0.0] + [_entropy_term(count, total) for count in range(1, total + 1)]
    return -sum(map(terms.__getitem__, counts.values()))


def entropy_at_most(text: str, floor: float) -> bool:
    """`shannon_entropy(text) <= floor` (`text` not empty), mostly without computing it.

    The entropy of n characters of which k are distinct lies between two bounds that depend on n and k alone:
    at most log2(k) (all equally frequent), at least that of one character n - k + 1 times and the others once
    (entropy is Schur-concave). When the floor lies outside them by more than a sum's rounding could ever move
    it, the answer is known from `len(set(text))`, kept per (n, k) and floor: dense output (a `.env` of a MB,
    a candidate every 35 bytes) has thousands of short secrets the generic rule's floor of 3.5 drops
    (`KEY=value12`: 8 distinct characters, log2(8) = 3) and thousands it keeps (`iKWeqhFCEPy3`: 12 distinct
    of 12, exactly log2(12) = 3.58).
    """
    size = len(text)
    key = (size, len(set(text)), floor)
    verdict = _entropy_verdicts.get(key)
    if verdict is None:
        if len(_entropy_verdicts) >= 65536:  # lengths x distinct counts x floors met: bounded anyway
            _entropy_verdicts.clear()
        verdict = _entropy_verdicts[key] = _verdict_of_bounds(size, key[1], floor)
    if verdict is not _UNDECIDED:
        return verdict is True
    counts: dict[str, int] = {}
    _count_elements(counts, text)
    return _entropy_of(counts, size) <= floor


_UNDECIDED = "undecided"  # `_verdict_of_bounds`: the bounds straddle the floor, the entropy must be summed
_entropy_verdicts: dict[tuple[int, int, float], bool | str] = {}


def _verdict_of_bounds(size: int, distinct: int, floor: float) -> bool | str:
    """Whether every text of `size` characters, `distinct` of them different, has an entropy at most `floor`
    (True), none has (False), or it depends on how often each occurs (`_UNDECIDED`). A margin of 1e-9 bits
    on each side: the float sum of at most a few thousand terms is off by far less."""
    if math.log2(distinct) < floor - 1e-9:
        return True
    rest = size - distinct + 1
    lowest = -_entropy_term(rest, size) - (distinct - 1) * _entropy_term(1, size)
    if lowest > floor + 1e-9:
        return False
    return _UNDECIDED


@dataclass
class Allowlist:
    target: str  # "secret", "match" or "line"
    sources: list[str]  # Go patterns, compiled at first use
    stopwords: tuple[str, ...]
    needs_path: bool  # an AND with paths or commits: never true for a transcript
    and_condition: bool
    _regexes: list[Any] | None = field(default=None, repr=False)

    @property
    def regexes(self) -> list[Any]:
        """The patterns, compiled by RE2 at first use: they read the haystack's bytes (`haystack`)."""
        if self._regexes is None:
            self._regexes = [_compile(r) for r in self.sources]
        return self._regexes

    def allows(self, secret: str, match: bytes, line: bytes, secret_bytes: bytes) -> bool:
        """gitleaks' test of this one allowlist. `match`, `line` and `secret_bytes`: slices of the haystack;
        `secret`: the text itself (stopwords). `find` asks `_AllowPlan`, which merges the allowlists and
        asks this only of an AND of patterns and stopwords."""
        if self.and_condition and self.needs_path:
            return False
        target = {"secret": secret_bytes, "match": match, "line": line}[self.target]
        by_regex = any(r.search(target) is not None for r in self.regexes)
        lowered = secret.lower()
        by_stopword = any(word in lowered for word in self.stopwords)
        if self.and_condition:
            checks = ([by_regex] if self.sources else []) + ([by_stopword] if self.stopwords else [])
            return bool(checks) and all(checks)
        return by_regex or by_stopword


@dataclass
class Rule:
    id: str
    source: str  # the Go pattern, as in the file
    keywords: tuple[str, ...]
    entropy: float
    secret_group: int
    allowlists: list[Allowlist]
    stripped_prefix: bool = False
    anchors: tuple[str, ...] | None = None  # every match begins with one of these (lower case): tried only there
    _compiled: Any = field(default=None, repr=False)
    _checks: StartChecks | None = field(default=None, repr=False)
    _allow_plan: _AllowPlan | None = field(default=None, repr=False)

    def allow_plan(self, global_allowlist: Allowlist) -> _AllowPlan:
        """The global allowlist and this rule's, merged for `find` (built at the rule's first candidate)."""
        if self._allow_plan is None:
            self._allow_plan = _AllowPlan([global_allowlist, *self.allowlists])
        return self._allow_plan

    @property
    def checks(self) -> StartChecks:
        """What a match starting at an anchor needs there, tested before RE2 is called (`start_checks`)."""
        if self._checks is None:
            self._checks = start_checks(self.source)
        return self._checks

    @property
    def pattern(self) -> Any:
        """`source` compiled by RE2 (a `re2._Regexp`, read over the haystack's bytes), at first use."""
        if self._compiled is None:
            self._compiled = _compile(self.source)
        return self._compiled


# --------------------------------------------------------------------------- what a match needs where it starts
#
# An anchored try is one call into RE2 (~2 µs through its Python binding, whatever the text), and English
# prose is full of the rules' shortest anchors ("ey" in "they", "sk" in "ask", "key", "token"): a 1 KB
# paragraph made ~8 such calls, most of an append's cost. Three facts read from a rule's own regex rule
# most of them out with a byte comparison, each a condition every match starting there meets (so the
# tries that remain find exactly what they found; tests/session/test_redaction_corpus.py compares
# `_matches` with full scans, rule by rule).


@dataclass(frozen=True)
class StartChecks:
    boundary: bool  # the regex begins with `\b`: an ASCII word boundary where the match starts
    exact: bytes | None  # the match begins with these bytes, case and all (`SK[0-9a-fA-F]{32}`: b"SK")
    assignment_within: int  # semi-generic rules: one of `=>:|?,` within this many bytes of the start (0: none)


# `\w` as RE2 reads it in Latin-1 mode: ASCII letters, digits and `_` only.
_WORD_BYTE = bytes(1 if (b < 128 and (chr(b).isalnum() or b == 0x5F)) else 0 for b in range(256))
# What follows the names in gitleaks' semi-generic rules (`generateSemiGenericRegex`): up to 20 name
# characters, up to 3 quotes or spaces, then an operator whose first byte is one of `=>:|?,`.
_ASSIGNMENT_TAIL = r"""(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)"""


def start_checks(source: str) -> StartChecks:
    """The `StartChecks` of a rule's regex (as RE2 runs it, its lazy prefix dropped).

    Each is read only from a shape it is sure of, else left out (False, None, 0): `\b` first on the only
    path; a literal run of letters, digits and `_` reached through plain groups with no flag before it; the
    semi-generic `(?i)(?:NAMES)` followed by the operator tail, where a name without `*`, `+` or `{` matches
    at most as many bytes as it is written with.
    """
    boundary = len(_split_top(source)) == 1 and source.startswith("\\b")
    window = 0
    head = "(?i)" if source.startswith("(?i)(?:") else ""
    names = _group_at(source[len(head):]) if source[len(head):].startswith("(?:") else None
    if names is not None and source[len(head) + len(names) + 4:].startswith(_ASSIGNMENT_TAIL):
        longest = _max_width(names)
        window = 0 if longest is None else longest + 20 + 3 + 1
        if window:
            assignment_byte()  # the operator's first bytes, one C call to find any
    return StartChecks(boundary, _exact_start(source), window)


def _max_width(source: str) -> int | None:
    """At least as many bytes as the longest match of `source` (None: it has `*`, `+`, `{` or an escape).

    Every other piece counts one byte or more: a class, `.`, a literal; a group its longest
    alternative; `?` nothing more (it only makes the piece before it optional).
    """
    best = 0
    for alt in _split_top(source):
        width, i = 0, 0
        while i < len(alt):
            ch = alt[i]
            if ch in "*+{\\":
                return None
            if ch == "(":
                end = _closing(alt[i:])
                opened = _GROUP_OPEN.match(alt, i)
                if end < 0 or opened is None:
                    return None
                inner = _max_width(alt[opened.end():i + end])
                if inner is None:
                    return None
                width, i = width + inner, i + end + 1
            elif ch == "[":
                close = alt.find("]", i + 2)  # `[]x]`, `[[:alnum:]]`: an early `]` only counts more
                if close < 0:
                    return None
                width, i = width + 1, close + 1
            else:
                width, i = width + (ch != "?"), i + 1
        best = max(best, width)
    return best


def _exact_start(source: str) -> bytes | None:
    """The bytes every match of `source` begins with, case and all, when it says so plainly (else None)."""
    rest = source[2:] if source.startswith("\\b") else source
    if len(_split_top(source)) != 1:
        return None
    while rest.startswith("("):
        if rest.startswith("(?") and not rest.startswith("(?:"):
            return None  # flags or a named group: not read
        end = _closing(rest)
        if end < 0 or rest[end + 1:end + 2] in ("?", "*", "{"):
            return None
        inner = rest[3 if rest.startswith("(?:") else 1:end]
        if len(_split_top(inner)) != 1:
            return None
        rest = inner
    run = re.match(r"[A-Za-z0-9_]+", rest)
    if run is None:
        return None
    text = run.group()
    if rest[run.end():run.end() + 1] in ("?", "*", "{"):
        text = text[:-1]
    return text.encode("ascii") or None


def _starts_here(checks: StartChecks, data: bytes, pos: int) -> bool:
    """Whether a match can start at `pos` as far as `checks` tell (False: it cannot)."""
    if checks.boundary and _WORD_BYTE[data[pos - 1] if pos else 0x20] == _WORD_BYTE[data[pos]]:
        return False
    if checks.exact is not None and not data.startswith(checks.exact, pos):
        return False
    if checks.assignment_within:
        return _assignment_byte.search(data, pos, pos + checks.assignment_within) is not None
    return True


_assignment_byte: Any = None  # re.compile(b"[=>:|?,]"), made by the first `start_checks` (nothing at import)


def _allowlist(spec: dict[str, Any]) -> Allowlist:
    return Allowlist(
        target=spec.get("regexTarget", "secret"),
        sources=list(spec.get("regexes", [])),
        stopwords=tuple(w.lower() for w in spec.get("stopwords", [])),
        needs_path=bool(spec.get("paths") or spec.get("commits")),
        and_condition=spec.get("condition", "OR").upper() == "AND",
    )


@dataclass
class RuleSet:
    rules: list[Rule]
    global_allowlist: Allowlist
    skipped: dict[str, str]  # rule id → why it never applies here
    rules_by_keyword: dict[str, list[Rule]]
    keywords: tuple[str, ...]


def load_toml() -> dict[str, Any]:
    """The vendored file, parsed (~50 ms: what `refresh_json` caches)."""
    import tomllib

    return tomllib.loads(Path(__file__).with_name(RULES_FILE).read_text(encoding="utf-8"))


def _load() -> dict[str, Any]:
    """The rules from `gitleaks_rules.json`, the toml's parse kept beside it (~1 ms).

    The stdlib reads it (an ASCII file of our own: the same dict as orjson's, 0.3 ms slower): the
    first record of a launch is redacted before the first request, which does not wait for orjson.
    """
    rules: dict[str, Any] = json.loads(Path(__file__).with_name(RULES_JSON).read_bytes())
    return rules


def refresh_json() -> None:
    """Rewrite `gitleaks_rules.json` from the toml (after updating the toml; a test checks they agree)."""
    path = Path(__file__).with_name(RULES_JSON)
    path.write_text(json.dumps(load_toml(), indent=None, separators=(",", ":"), sort_keys=False) + "\n")
    _data.cache_clear()
    anchors = Path(__file__).with_name(ANCHORS_JSON)
    derived = {"keywords": _computed_keywords(), "literals": _computed_literals(), "rules": _computed_derived(),
               **_computed_start_plan()}
    anchors.write_text(json.dumps(derived, indent=None, separators=(",", ":"), sort_keys=True) + "\n")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return _load()


def _applies(spec: dict[str, Any]) -> bool:
    """Whether a rule can ever match a transcript (it has a regex and needs no file path)."""
    return "regex" in spec and "path" not in spec


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """Every keyword of the rules that apply (lower case): `rule_set().keywords` without building the rules.

    Redaction's fast path needs only these to tell that a record holds no secret: they are read from
    `gitleaks_anchors.json`, not worked out from the rules (whose JSON is then not even parsed); the
    rules themselves are built when a record holds a keyword.
    """
    return frozenset(_stored()["keywords"])


def _computed_keywords() -> list[str]:
    return sorted({k.lower() for spec in _data()["rules"] if _applies(spec) for k in spec.get("keywords", [])})


@lru_cache(maxsize=1)
def rule_set() -> RuleSet:
    """The vendored rules, parsed once (their regexes compile on first use)."""
    data = _data()
    glob = data.get("allowlist", {})
    global_allowlist = _allowlist(glob)
    rules: list[Rule] = []
    skipped: dict[str, str] = {}
    for spec in data["rules"]:
        rid = spec["id"]
        if "regex" not in spec:
            skipped[rid] = "matches file paths only"
            continue
        if "path" in spec:
            skipped[rid] = "applies only to files whose path matches"
            continue
        source = _derived()[rid][1] or spec["regex"]
        allowlists = [_allowlist(a) for a in spec.get("allowlists", [])]
        rule_keywords = tuple(k.lower() for k in spec.get("keywords", []))
        rules.append(Rule(rid, source, rule_keywords, float(spec.get("entropy", 0)), int(spec.get("secretGroup", 0)),
                          allowlists, source != spec["regex"], _derived()[rid][0]))
    by_keyword: dict[str, list[Rule]] = {}
    for rule in rules:
        for kw in rule.keywords:
            by_keyword.setdefault(kw, []).append(rule)
    return RuleSet(rules, global_allowlist, skipped, by_keyword, tuple(sorted(keywords())))


def _anchors(spec: dict[str, Any]) -> tuple[str, ...] | None:
    """The literals (lower case, 2 characters or more) one of which begins every match of the rule (its
    names, once its lazy prefix is dropped), or None: the rule is tried at every position."""
    source, names = _strip_lazy_prefix(spec["regex"])
    if source != spec["regex"]:
        prefixes = name_prefixes(names) if names is not None else None
    else:
        prefixes = literal_starts(source)
    if not prefixes or min(map(len, prefixes)) < 2:
        return None
    return tuple(sorted(set(prefixes)))


@lru_cache(maxsize=1)
def literals() -> frozenset[str]:
    """The rules' keywords (gitleaks' first pass) and the anchored rules' beginnings (lower case): what `find`
    needs to know the positions of, found in one pass over the text without building the rules.

    Read from `gitleaks_anchors.json` (`_computed_literals()`): redaction's one automaton holds them, and the
    first record of a launch is scanned with it before the first request.
    """
    return frozenset(_stored()["literals"])


def _computed_literals() -> list[str]:
    words = set(_computed_keywords())
    for anchors, _source in _computed_derived().values():
        words.update(anchors or ())
    return sorted(words)


@lru_cache(maxsize=1)
def _derived() -> dict[str, tuple[tuple[str, ...] | None, str | None]]:
    """{rule id: (its `_anchors`, its regex without the lazy prefix or None when it has none)} for the rules
    that apply, read from `gitleaks_anchors.json`.

    Working them out parses the 217 regexes (~20 ms), and the first record a launch redacts needs them
    (`literals`, `rule_set`) before its first request (SPEC §8); the file is `_computed_derived()`, written
    by `refresh_json` (tests/session/test_redaction_corpus.py checks that they agree).
    """
    return {rid: (tuple(anchors) if anchors is not None else None, source)
            for rid, (anchors, source) in _stored()["rules"].items()}


@lru_cache(maxsize=1)
def _stored() -> dict[str, Any]:
    """`gitleaks_anchors.json`: {"keywords": `_computed_keywords()`, "rules": `_computed_derived()`}."""
    stored: dict[str, Any] = json.loads(Path(__file__).with_name(ANCHORS_JSON).read_bytes())
    return stored


def _computed_start_plan() -> dict[str, Any]:
    """{"checks": {rule id: its `StartChecks` as [boundary, exact or None, window] and its keywords (sorted)} for
    the rules with anchors, "unanchored_keywords": the keywords of the rules without (sorted)}: `start_plan`."""
    checks: dict[str, list[Any]] = {}
    unanchored: set[str] = set()
    derived = _computed_derived()
    for spec in _data()["rules"]:
        if _applies(spec):
            anchors, source = derived[spec["id"]]
            if anchors:
                found = start_checks(source or spec["regex"])
                checks[spec["id"]] = [found.boundary, found.exact.decode("ascii") if found.exact else None,
                                      found.assignment_within, sorted({k.lower() for k in spec.get("keywords", [])})]
            else:
                unanchored.update(k.lower() for k in spec.get("keywords", []))
    return {"checks": checks, "unanchored_keywords": sorted(unanchored)}


StartPlan = dict[str, tuple[tuple[bool, "bytes | None", int, frozenset[str]], ...]]


@lru_cache(maxsize=1)
def start_plan() -> tuple[StartPlan, frozenset[str]]:
    """({anchor: for each distinct `StartChecks` of the rules whose matches begin with it, (boundary, exact,
    window, the keywords of those rules)}, the keywords of the rules with no anchors), read from
    `gitleaks_anchors.json` without building the rules.

    Redaction's literal pass reads it to tell, in the same loop, that no rule can find anything in a text
    (English prose: `ey` inside "they", `sk` in "ask", `key` with no operator near, `sc` of "scroll" with no
    `sc_` anywhere): a rule runs only when one of its keywords occurs, and a match of a rule with anchors
    starts at one of them and meets its checks there. tests/session/test_redaction_corpus.py checks the file
    against the rules.
    """
    stored = _stored()
    plan: dict[str, dict[tuple[bool, bytes | None, int], set[str]]] = {}
    for rid, (anchors, _source) in stored["rules"].items():
        if anchors:
            boundary, exact, window, rule_keywords = stored["checks"][rid]
            checks = (boundary, exact.encode("ascii") if exact else None, window)
            for anchor in anchors:
                plan.setdefault(anchor, {}).setdefault(checks, set()).update(rule_keywords)
    assignment_byte()  # the plan's windows are searched with it
    return ({anchor: tuple((*checks, frozenset(kws)) for checks, kws in sorted(by.items(), key=repr))
             for anchor, by in plan.items()}, frozenset(stored["unanchored_keywords"]))


def assignment_byte() -> Any:
    """`re.compile(b"[=>:|?,]")`: the first bytes of the semi-generic rules' operators (`StartChecks` windows)."""
    global _assignment_byte
    if _assignment_byte is None:
        _assignment_byte = re.compile(b"[=>:|?,]")
    return _assignment_byte


def _computed_derived() -> dict[str, tuple[list[str] | None, str | None]]:
    out: dict[str, tuple[list[str] | None, str | None]] = {}
    for spec in _data()["rules"]:
        if _applies(spec):
            anchors = _anchors(spec)
            source = _strip_lazy_prefix(spec["regex"])[0]
            out[spec["id"]] = (list(anchors) if anchors is not None else None,
                               source if source != spec["regex"] else None)
    return out


@lru_cache(maxsize=1)
def _literal_automaton() -> tuple[tuple[str, ...], Any]:
    """(`literals()`, sorted; an automaton over bytes)."""
    import ahocorasick_rs  # imported here: importing this module stays cheap

    ordered = tuple(sorted(literals()))
    return ordered, ahocorasick_rs.BytesAhoCorasick([w.encode() for w in ordered],
                                                    implementation=ahocorasick_rs.Implementation.DFA)


def compile_all() -> dict[str, str]:
    """Compile every rule now; {rule id: why it is not applied} for the rules that cannot be (tests, fsck)."""
    rs = rule_set()
    out = dict(rs.skipped)
    for allowlist in [rs.global_allowlist]:
        allowlist.regexes  # noqa: B018 - a global allowlist RE2 refuses is a bug: let it raise
    for rule in rs.rules:
        try:
            rule.pattern  # noqa: B018 - compiles and caches
            for allowlist in rule.allowlists:
                allowlist.regexes  # noqa: B018
        except _re2_error() as exc:
            out[rule.id] = f"RE2 refuses the regex: {exc}"
    return out


def skipped_rules() -> dict[str, str]:
    return compile_all()


# --------------------------------------------------------------------------- matching


class Hit(tuple[int, int, str]):
    """(start, end, rule id) of a secret `find` reports: a tuple, made ~24,000 times for a dense MB."""

    __slots__ = ()

    def __new__(cls, start: int, end: int, rule_id: str) -> Hit:
        return tuple.__new__(cls, (start, end, rule_id))

    def __getnewargs__(self) -> tuple[int, int, str]:  # pickle and copy
        return self[0], self[1], self[2]

    def __repr__(self) -> str:
        return f"Hit(start={self[0]}, end={self[1]}, rule_id={self[2]!r})"

    @property
    def start(self) -> int:
        return self[0]

    @property
    def end(self) -> int:
        return self[1]

    @property
    def rule_id(self) -> str:
        return self[2]


def _line_bounds(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Where the line (or lines) holding `data[start:end]` begins and ends, its newlines left out."""
    line_end = data.find(b"\n", end)
    return data.rfind(b"\n", 0, start) + 1, len(data) if line_end < 0 else line_end


def _line_around(data: bytes, start: int, end: int) -> bytes:
    line_start, line_end = _line_bounds(data, start, end)
    return data[line_start:line_end]


_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _extend_left(data: bytes, start: int) -> int:
    """Where the dropped lazy `[\\w.-]{0,50}?` prefix would have started the match."""
    i = start
    while i > 0 and start - i < 50 and data[i - 1] in _NAME_BYTES:
        i -= 1
    return i


# A match as `find` reads it: RE2's spans, the whole match's first, then each group's ((-1, -1) when a group took
# no part), read from RE2 itself (the binding's match object asks RE2 for the number of groups on every `span`: a
# dense MB of `.env` lines had 15,000 matches, 3 such calls each). A plain list: no object made per match.
Spans = list[tuple[int, int]]


def _secret_span(spans: Spans, group: int) -> tuple[int, int]:
    """gitleaks' secret: `secretGroup`, else the first non-empty group, else the match.

    One departure: a first group shorter than 6 characters is a repeated piece of
    the shape (microsoft-teams-webhook's `([a-z0-9]{4}-){3}`), not the secret;
    the whole match is masked instead.
    """
    groups = len(spans) - 1
    if group and group <= groups:
        return spans[group]
    for g in range(1, groups + 1):
        start, end = spans[g]
        if end > start:
            return (start, end) if end - start >= 6 else spans[0]
    return spans[0]


def _hits_in(folded: bytes) -> dict[str, list[int]]:
    """{literal: start positions, in order} of the keywords and anchors in `folded` (a haystack in lower case)."""
    words, automaton = _literal_automaton()
    out: dict[str, list[int]] = {}
    for index, start, _end in automaton.find_matches_as_indexes(folded, overlapping=True):
        out.setdefault(words[index], []).append(start)
    return out


def keyword_hits(text: str) -> dict[str, list[int]]:
    """{keyword: start positions (str indices), in order} of the keywords in `text`, ASCII case-insensitively."""
    kws = keywords()
    hits = _hits_in(haystack(text).lower())  # bytes.lower() folds ASCII only, as the rules' keywords do
    return {word: found for word, found in hits.items() if word in kws}


def rules_for(text: str, hits: dict[str, list[int]] | None = None) -> list[Rule]:
    """The rules whose keywords occur in `text` (gitleaks' first pass)."""
    return list(_selection(frozenset(keyword_hits(text) if hits is None else hits)).rules)


class _Selection:
    """The rules a set of literals selects (gitleaks' keyword pass), in order, and for each literal the
    `StartChecks` of the selected rules that begin with it: what `_starts` reads, without a call per rule."""

    __slots__ = ("all_anchored", "plan", "rules")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.all_anchored = all(rule.anchors for rule in rules)  # then no start found means no rule to try
        plan: dict[str, list[tuple[int, bool, bytes | None, int]]] = {}
        for i, rule in enumerate(rules):
            if rule.anchors:
                checks = rule.checks
                for anchor in rule.anchors:
                    plan.setdefault(anchor, []).append((i, checks.boundary, checks.exact, checks.assignment_within))
        self.plan = {anchor: tuple(entries) for anchor, entries in plan.items()}


_NO_RULES = _Selection(())


def _selection(words: frozenset[str]) -> _Selection:
    """The `_Selection` of the literals `words` (kept: a pure function of the set, bounded at 512)."""
    selection = _rules_of.get(words)
    if selection is None:
        kws = keywords()
        if not any(word in kws for word in words):
            return _NO_RULES  # no keyword, no rule: the rules are not even built
        rs = rule_set()
        found: dict[str, Rule] = {}
        for kw in sorted(words):
            for rule in rs.rules_by_keyword.get(kw, ()):
                found[rule.id] = rule
        if len(_rules_of) >= 512:  # the sets of words a session's texts hold: a few dozen, bounded anyway
            _rules_of.clear()
        selection = _rules_of[words] = _Selection(tuple(found.values()))
    return selection


_rules_of: dict[frozenset[str], _Selection] = {}  # the literals found → the rules they select, in order


def _starts(selection: _Selection, data: bytes, hits: dict[str, list[int]]) -> dict[int, list[int]]:
    """{index of a selected rule with anchors: the positions where a match of it can start, unsorted} (a rule
    with none is left out): `_candidates` for every rule of `selection` in one loop over the literals found.

    On prose every position fails (`they`, `ask`, `key` with no operator near): this loop is all that runs.
    A rule that gathers more than `len(data) // _BYTES_PER_TRY` positions is scanned whole (`_matches`), so
    its list stops there, one past that: a dense MB (`.env` lines) no longer checks every one of them.
    """
    plan = selection.plan
    word_byte = _WORD_BYTE
    assignment = _assignment_byte
    enough = len(data) // _BYTES_PER_TRY
    out: dict[int, list[int]] = {}
    for word, at in hits.items():
        entries = plan.get(word)
        if entries is None:
            continue
        for index, boundary, exact, window in entries:
            found = out.get(index)
            if found is None:
                found = out[index] = []
            elif len(found) > enough:
                continue
            for pos in at:
                if boundary and word_byte[data[pos - 1] if pos else 0x20] == word_byte[data[pos]]:
                    continue
                if exact is not None and not data.startswith(exact, pos):
                    continue
                if window and assignment.search(data, pos, pos + window) is None:
                    continue
                found.append(pos)
                if len(found) > enough:
                    break
    return {index: found for index, found in out.items() if found}


# One anchored try (RE2's `Match` called directly, ~1.2 µs; 1.8 µs when it matches) costs about what RE2 takes to
# scan this many bytes (~1.45 ns a byte for the rules of prose and code, plus ~1.2 µs a call): with more candidates
# than len(text) / this, the whole text is scanned instead. (1,500 when a try went through the binding's
# generator, ~3 µs: a 1 KB tool result with one `s.` scanned 1 KB for vault-service-token, 2.7 µs, for a 1.2 µs try.)
_BYTES_PER_TRY = 800


def _candidates(rule: Rule, data: bytes, hits: dict[str, list[int]]) -> list[int] | None:
    """Where a match of `rule` can start, in order (None: anywhere, the rule has no anchors).

    An anchor's position that fails the rule's `StartChecks` cannot start one: on prose most do.
    """
    if not rule.anchors:
        return None
    checks = rule.checks
    found = [hits[anchor] for anchor in rule.anchors if anchor in hits]
    if not found:
        return []
    return sorted({p for at in found for p in at if _starts_here(checks, data, p)})


def _matches(rule: Rule, data: bytes, hits: dict[str, list[int]],
             positions: list[int] | bool | None = False) -> Iterator[Spans]:
    """`rule.pattern.finditer(data)`; for a rule with anchors, tried only where one begins.

    gitleaks' semi-generic rules read `[\\w.-]{0,50}?(?:name1|name2…)…`: once the lazy prefix is
    dropped, a match begins with one of the names (`name_prefixes`), so only their positions can
    start one; `hits` (`_hits_in`) says where each name occurs, `positions` (`_candidates`, when the
    caller has them) which of those pass the rule's `StartChecks`. tests/session/test_redaction_corpus.py
    checks this against the full scan, rule by rule.
    """
    if positions is False:
        positions = _candidates(rule, data, hits)
    pattern = rule.pattern
    # RE2 itself, not the binding's generator and match objects: a try that fails (most) costs half as much,
    # and a match is read without asking RE2 for its number of groups again and again.
    raw = _raw_match(pattern)
    if raw is None:  # a binding without it: its own matches, read the same way
        return _binding_matches(pattern, data, positions)
    if positions is None or positions is True or len(positions) * _BYTES_PER_TRY > len(data):
        return _scan_all(raw, data)  # no anchors, or `s.` in code: a scan is cheaper
    return _tries(raw, data, positions)


def _tries(raw: Any, data: bytes, positions: list[int]) -> Iterator[Spans]:
    """The matches of a regex anchored at each of `positions` (in order), none overlapping the one before."""
    end = 0
    size = len(data)
    anchor = _ANCHOR_START()
    for pos in positions:
        if pos < end:
            continue
        spans = raw(anchor, data, pos, size)
        if spans[0][0] < 0:
            continue
        end = max(spans[0][1], pos + 1)
        yield spans


def _binding_matches(pattern: Any, data: bytes, positions: list[int] | bool | None) -> Iterator[Spans]:
    """`_matches` through the binding's own `finditer` and `match` (a binding that hides RE2's `Match`)."""
    if positions is None or positions is True or positions is False or len(positions) * _BYTES_PER_TRY > len(data):
        found = pattern.finditer(data)
    else:
        found = (m for m in (pattern.match(data, p) for p in positions) if m is not None)
    end = 0
    for match in found:
        if positions is None or positions is True or positions is False or match.start() >= end:
            end = max(match.end(), match.start() + 1)
            yield [match.span(g) for g in range(pattern.groups + 1)]


def _scan_all(raw: Any, data: bytes) -> Iterator[Spans]:
    """Every match of a regex over `data`, as the binding's `finditer` finds them (its loop, over RE2's `Match`)."""
    unanchored = _UNANCHORED()
    pos, size = 0, len(data)
    while True:
        spans = raw(unanchored, data, pos, size)
        if spans[0] == (-1, -1):
            return
        yield spans
        if pos == size:
            return
        pos = pos + 1 if pos == spans[0][1] else spans[0][1]


class _AllowPlan:
    """The global allowlist and a rule's own, asked as few times as possible per candidate.

    Every allowlist that allows drops the candidate, so the patterns of all of them that read the same target
    (the secret, the match, the line) are one alternation, searched once, and all the stopwords one automaton:
    generic-api-key asked 5 regex searches and 1,446 `in` tests of every candidate, now at most 3 searches and
    one automaton pass. An AND of patterns and stopwords keeps its own test (`Allowlist.allows`); an AND that
    needs a path never allows (a transcript has none); an AND of one kind is that kind alone.
    """

    __slots__ = ("_lines_of", "line", "match", "others", "secret", "sources", "stopwords")

    def __init__(self, allowlists: list[Allowlist]) -> None:
        by_target: dict[str, list[Allowlist]] = {"secret": [], "match": [], "line": []}
        words: list[str] = []
        self.others: list[Allowlist] = []
        for allowlist in allowlists:
            if allowlist.and_condition and (allowlist.needs_path or not (allowlist.sources or allowlist.stopwords)):
                continue  # never allows
            if allowlist.and_condition and allowlist.sources and allowlist.stopwords:
                self.others.append(allowlist)  # none in gitleaks' rules today
                continue
            if allowlist.sources:
                by_target[allowlist.target].append(allowlist)
            words.extend(allowlist.stopwords)
        self.secret = _any_search(by_target["secret"])
        self.match = _any_search(by_target["match"])
        self.line = _any_search(by_target["line"])
        self.stopwords = _any_word(words)
        self.sources: dict[str, Any] = {target: [source for allowlist in by_target[target]
                                                 for source in allowlist.sources] for target in ("secret", "match")}
        self.sources["newline_in_words"] = any("\n" in word for word in words)
        self._lines_of: dict[str, Any] = {}  # target → `_lines_search` of its patterns (`allows_many`), at first use

    def allows(self, secret: str, data: bytes, start: int, end: int, m_start: int, m_end: int,
               stripped_prefix: bool, line_seen: list[Any]) -> bool:
        """Whether an allowlist lets this candidate through (`start:end` the secret, `m_start:m_end` the match).

        `line_seen`: [start, end, allowed, one line] of the last line (or lines) a candidate was on, and what the
        line patterns said of it, kept by the caller for one text (`LINE_MEMO` to begin): the candidates of one
        line (a hundred `key=…;` on one line of 1.7 KB) search it once, and a match inside a single line already
        bounded needs no search for its ends.
        """
        secret_bytes = data[start:end]
        if self.secret is not None and self.secret(secret_bytes):
            return True
        if self.stopwords is not None and self.stopwords(
                secret_bytes.lower() if secret_bytes.isascii() else secret.lower().encode("utf-8", "surrogatepass")):
            return True
        left = m_start
        if stripped_prefix and m_start and data[m_start - 1] in _NAME_BYTES:
            left = _extend_left(data, m_start)
        if self.match is not None and self.match(data[left:m_end]):
            return True
        if line_seen[3] and line_seen[0] <= m_start and m_end <= line_seen[1]:
            line_start, line_end = line_seen[0], line_seen[1]  # within the single line bounded last: its bounds
        else:
            line_start, line_end = _line_bounds(data, m_start, m_end)
            line_seen[:] = [line_start, line_end, self.line is not None and self.line(data[line_start:line_end]),
                            data.find(b"\n", line_start, line_end) < 0]
        if line_seen[2]:
            return True
        if not self.others:
            return False
        line = data[line_start:line_end]
        whole = data[left:m_end]
        return any(a.allows(secret, whole, line, secret_bytes) for a in self.others)

    def allows_many(self, text: str, data: bytes, found: list[tuple[int, int, int, int]],
                    stripped_prefix: bool) -> list[bool]:
        """`allows` of each candidate in `found` ((start, end, m_start, m_end), in order), each target's patterns
        and the stopwords asked once for all of them (`_allowed_in_one_search`, `_stopped_in_one_pass`) rather
        than once per candidate: a dense text (read_file's 100,000 characters of `key=…;`) had ~5,800 candidates
        and three calls into RE2 or the automaton each (~2.3 µs). The answers are the same: every target a
        candidate's own slice, as `allows` reads it; the line patterns, still asked per line, only for the
        candidates nothing else allowed."""
        if self.others:  # an AND of patterns and stopwords (none in gitleaks' rules today): as `allows` does
            line_memo = list(LINE_MEMO)
            return [self.allows(text[start:end], data, start, end, m_start, m_end, stripped_prefix, line_memo)
                    for start, end, m_start, m_end in found]
        allowed = [False] * len(found)
        secrets = [data[start:end] for start, end, _ms, _me in found]
        if self.secret is not None:
            self._allowed_in_one_search("secret", secrets, allowed)
        if self.stopwords is not None:
            lowered = [secret_bytes.lower() if secret_bytes.isascii()
                       else text[start:end].lower().encode("utf-8", "surrogatepass")
                       for secret_bytes, (start, end, _ms, _me) in zip(secrets, found)]
            if self.sources["newline_in_words"]:  # a word holding the joint: each secret alone
                for i, piece in enumerate(lowered):
                    allowed[i] = allowed[i] or bool(self.stopwords(piece))
            else:
                _stopped_in_one_pass(self.stopwords, lowered, allowed)
        if self.match is not None:
            matches = []
            for _start, _end, m_start, m_end in found:
                left = m_start
                if stripped_prefix and m_start and data[m_start - 1] in _NAME_BYTES:
                    left = _extend_left(data, m_start)
                matches.append(data[left:m_end])
            self._allowed_in_one_search("match", matches, allowed)
        line_seen = list(LINE_MEMO)
        for i, (_start, _end, m_start, m_end) in enumerate(found):
            if allowed[i]:
                continue
            if line_seen[3] and line_seen[0] <= m_start and m_end <= line_seen[1]:
                allowed[i] = bool(line_seen[2])  # within the single line bounded last (a hundred `key=…;` on one line)
            else:  # the line patterns, for the candidates nothing else allowed
                allowed[i] = self._line_allows(data, m_start, m_end, line_seen)
        return allowed

    def _line_allows(self, data: bytes, m_start: int, m_end: int, line_seen: list[Any]) -> bool:
        """The line patterns' part of `allows`, with its memo of the last line."""
        if not (line_seen[3] and line_seen[0] <= m_start and m_end <= line_seen[1]):
            line_start, line_end = _line_bounds(data, m_start, m_end)
            line_seen[:] = [line_start, line_end, self.line is not None and self.line(data[line_start:line_end]),
                            data.find(b"\n", line_start, line_end) < 0]
        return bool(line_seen[2])

    def _allowed_in_one_search(self, target: str, pieces: list[bytes], allowed: list[bool]) -> None:
        """Set `allowed[i]` where one of `target`'s patterns occurs in `pieces[i]`, as `allows` would find it."""
        ask = self.secret if target == "secret" else self.match
        search = self._lines_of.get(target, False)
        if search is False:
            search = self._lines_of[target] = _lines_search(self.sources[target])
        if search is None:  # patterns that read text anchors or set flags of their own: one call per piece
            for i, piece in enumerate(pieces):
                if not allowed[i] and ask(piece):
                    allowed[i] = True
            return
        for i in _pieces_matched(search, pieces, ask):
            allowed[i] = True


# `_AllowPlan.allows_many` asks the global and the rule's allowlists of every candidate of one rule at once when there
# are at least this many (below it, one by one: joining the pieces costs more than the calls it saves).
_BATCH = 8

# Flags of multi-line mode (`(?m)`, `(?-m)`, `(?im:`…) in a pattern: `_linewise` leaves it out of the batch. Found
# textually (`\\(?m` too): a false alarm only costs the batch.
_MULTILINE_FLAG = lazy_re(r"\(\?[a-zA-Z]*-?[a-zA-Z]*m")


def _linewise(source: str) -> str | None:
    """`source` with its text anchors `\\A` and `\\z` written as `^` and `$` (outside classes), for multi-line
    mode over pieces joined by `\\n` (`_lines_search`); None when it sets that mode itself or is not read here."""
    if _MULTILINE_FLAG.search(source):
        return None
    out, i, in_class = [], 0, False
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            pair = source[i:i + 2]
            if pair == "\\Q":
                return None  # quoted text up to `\\E`: not read here
            if pair in ("\\A", "\\z"):
                if in_class:
                    return None
                pair = "^" if pair == "\\A" else "$"
            out.append(pair)
            i += 2
            continue
        if in_class:
            if source.startswith("[:", i):  # a POSIX class `[:alpha:]` inside a class
                close = source.find(":]", i + 2)
                if close < 0:
                    return None
                out.append(source[i:close + 2])
                i = close + 2
                continue
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            for lead in ("^", "]"):  # `[^…`, and a `]` first in a class is itself
                if source.startswith(lead, i):
                    out.append(lead)
                    i += 1
            continue
        out.append(ch)
        i += 1
    return None if in_class else "".join(out)


def _lines_search(sources: list[str]) -> Any:
    """RE2's `Match` of the patterns `sources` as one alternation in multi-line mode, for pieces joined by `\\n`:
    `^` and `$` (and `\\A`, `\\z`, written so) then hold where a piece begins and ends, as they do in the piece
    alone (a piece holding `\\n`, where they also hold inside it, is checked alone: `_pieces_matched`). None
    without patterns, or where that would not hold (`_linewise`)."""
    written = [_linewise(source) for source in dict.fromkeys(sources)]
    if not written or None in written:
        return None
    try:
        joined = _compile("(?m:" + "|".join(f"(?:{source})" for source in written) + ")")
    except _re2_error():
        return None
    return _raw_match(joined)


def _pieces_matched(raw: Any, pieces: list[bytes], ask: Callable[[bytes], bool]) -> Iterator[int]:
    """The indexes of `pieces` in which a search of the alternation `raw` (`_lines_search`) finds a match, as
    `ask(piece)` (the same patterns, one piece a text) would say: one scan of the pieces joined by `\\n`.

    A match inside one piece with no `\\n` of its own is one `ask` finds: that piece's bytes, `^` only at its
    start and `$` only at its end, the `\\n` either side no word byte for `\\b`, as the ends of a text alone. A
    match that crosses a `\\n` between pieces, or lies in a piece holding one (where `^`/`$` hold inside it too),
    proves nothing: the pieces it touches are asked alone. No match is lost to such a one: a search finds the
    leftmost match, so a piece's own match is either found or starts inside a match found, which touches it.
    """
    buffer = b"\n".join(pieces)
    starts = _joint_starts(pieces)
    anchor, size, pos = _UNANCHORED(), len(buffer), 0
    seen: set[int] = set()
    while pos <= size:
        (m_start, m_end), *_groups = raw(anchor, buffer, pos, size)
        if m_start < 0:
            break
        first = bisect_right(starts, m_start) - 1
        if m_end <= starts[first] + len(pieces[first]) and b"\n" not in pieces[first]:
            touched: range | list[int] = [first] if first not in seen else []
            inside = True
        else:
            touched = range(first, min(bisect_right(starts, m_end), len(pieces)))
            inside = False
        for i in touched:
            if i not in seen and (inside or ask(pieces[i])):
                seen.add(i)
                yield i
        pos = m_end if m_end > m_start else m_start + 1


def _joint_starts(pieces: list[bytes]) -> list[int]:
    """Where each of `pieces` begins in `b"\\n".join(pieces)`, and one more past the end (summed in C)."""
    return list(accumulate(map(_PLUS_ONE, map(len, pieces)), initial=0))


_PLUS_ONE = (1).__add__


def _stopped_in_one_pass(find: Any, lowered: list[bytes], allowed: list[bool]) -> None:
    """Set `allowed[i]` where a stopword occurs in `lowered[i]` (a lowered secret's bytes, as `allows` reads it):
    one pass of the automaton over the pieces joined by `\\n`, which no stopword holds (`_any_word`), so that every
    word found lies in one piece and the search starts each piece afresh, finding a word in each that has one."""
    starts = _joint_starts(lowered)
    for _index, start, _end in find(b"\n".join(lowered)):
        allowed[bisect_right(starts, start) - 1] = True


_ASCII_DIGIT = lazy_re(r"[0-9]")  # `generic-*`'s test of a digit (`str.isdigit` asked past ASCII)

LINE_MEMO = (-1, -1, False, False)  # `_AllowPlan.allows`' memo before the first candidate (copied: `list(LINE_MEMO)`)


def _any_search(allowlists: list[Allowlist]) -> Any:
    """A test of whether one of the allowlists' patterns occurs in a target: one search of `(?:p1)|(?:p2)|…`
    (a flag set inside a group ends with it, so each keeps its own) through RE2's `Match`; None without any."""
    sources = list(dict.fromkeys(source for allowlist in allowlists for source in allowlist.sources))
    if not sources:
        return None
    try:
        joined = _compile("|".join(f"(?:{source})" for source in sources))
    except _re2_error():  # each compiles (the rule would be skipped otherwise), together they did not: one by one
        each = [r for allowlist in allowlists for r in allowlist.regexes]
        return lambda target: any(r.search(target) is not None for r in each)
    raw = _raw_match(joined)
    if raw is None:
        return lambda target: joined.search(target) is not None
    unanchored = _UNANCHORED()
    return lambda target: raw(unanchored, target, 0, len(target))[0][0] >= 0


def _any_word(words: list[str]) -> Any:
    """A test of whether one of `words` (lower case) occurs in a secret once lowered, as `word in
    secret.lower()` would say, given the lowered secret's UTF-8 (lone surrogates kept as `surrogatepass` writes
    them: a str automaton refuses them), where a word is found exactly where it is in the text: one
    Aho-Corasick pass (a non-overlapping search reports a match whenever any word occurs); None without words."""
    if not words:
        return None
    import ahocorasick_rs  # imported at first use: importing this module stays cheap

    automaton = ahocorasick_rs.BytesAhoCorasick([w.encode("utf-8", "surrogatepass") for w in dict.fromkeys(words)])
    return automaton.find_matches_as_indexes  # a list, empty (false) when no word occurs


def find(text: str, data: bytes | None = None, hits: dict[str, list[int]] | None = None) -> Iterator[Hit]:
    """Every secret the gitleaks rules find in `text`, as gitleaks would report it (stdin, no path).

    `data` and `hits`: `haystack(text)` and where each of `literals()` occurs in it (at least those), when
    the caller has them already (redact.py finds them with its own literals, in the same pass).
    """
    if data is None or hits is None:
        data = haystack(text)
        hits = _hits_in(data.lower())
    for start, end, rule_id in find_spans(text, data, hits):
        yield Hit(start, end, rule_id)


def find_spans(text: str, data: bytes, hits: dict[str, list[int]]) -> Iterator[tuple[int, int, str]]:
    """`find` as plain (start, end, rule id) tuples, `data` and `hits` given: redaction's loop (a dense MB
    of secrets made a `Hit` for each, ~0.3 us apiece)."""
    selection = _selection(frozenset(hits))
    if not selection.rules:
        return
    starts = _starts(selection, data, hits)
    if not starts and selection.all_anchored:
        return  # no place any of them can start (prose): nothing compiled, nothing tried
    rs = rule_set()
    refused = _re2_error()
    for index, rule in enumerate(selection.rules):
        positions: list[int] | None = None
        if rule.anchors:
            found = starts.get(index)
            if found is None:
                continue  # no place it can start: not even compiled
            # so many places that a scan is cheaper (`_matches`): the same matches either way
            positions = None if len(found) * _BYTES_PER_TRY > len(data) else sorted(set(found))
        try:
            rule.pattern  # noqa: B018 - compiles it
            for allowlist in rule.allowlists:
                allowlist.regexes  # noqa: B018 - compiled with the rule, so a bad one skips the rule
        except refused:
            continue  # reported by compile_all()
        floor, group, rule_id = rule.entropy, rule.secret_group, rule.id
        generic = rule_id.startswith("generic")
        has_ascii_digit = _ASCII_DIGIT.compiled.search
        candidates: list[tuple[int, int, int, int]] = []  # (start, end, m_start, m_end), in order
        one_group = rule.pattern.groups == 1 and not group  # `_secret_span` read inline: the group unless short
        entropy_known = _entropy_verdicts
        for spans in _matches(rule, data, hits, positions):
            if one_group:
                start, end = spans[1]
                if end - start < 6:
                    start, end = spans[0]
            else:
                start, end = _secret_span(spans, group)
            if start == end:
                continue
            secret = text[start:end]
            if floor:  # `entropy_at_most`, its verdict from the length and distinct count read here when kept
                verdict = entropy_known.get((end - start, len(set(secret)), floor))
                if verdict is True or (verdict is not False and entropy_at_most(secret, floor)):
                    continue
            if generic and not (has_ascii_digit(secret) or (not secret.isascii() and any(map(str.isdigit, secret)))):
                continue
            m_start, m_end = spans[0]
            candidates.append((start, end, m_start, m_end))
        if not candidates:
            continue
        plan = rule.allow_plan(rs.global_allowlist)
        if len(candidates) >= _BATCH:  # dense output: the allowlists asked once for all of them
            verdicts = plan.allows_many(text, data, candidates, rule.stripped_prefix)
            for (start, end, _m_start, _m_end), allowed in zip(candidates, verdicts):
                if not allowed:
                    yield start, end, rule_id
            continue
        line_seen = list(LINE_MEMO)  # `_AllowPlan.allows`: the last line, and what its patterns said
        for start, end, m_start, m_end in candidates:
            if not plan.allows(text[start:end], data, start, end, m_start, m_end, rule.stripped_prefix, line_seen):
                yield start, end, rule_id


__all__ = ["GITLEAKS_VERSION", "Hit", "compile_all", "find", "find_spans", "haystack", "literals", "rule_set",
           "rules_for", "shannon_entropy", "skipped_rules"]

if __name__ == "__main__":  # python -m evo_agent.session.gitleaks_rules --refresh
    if sys.argv[1:] != ["--refresh"]:
        sys.exit("usage: python -m evo_agent.session.gitleaks_rules --refresh")
    refresh_json()
