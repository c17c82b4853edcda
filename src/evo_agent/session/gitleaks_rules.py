"""gitleaks' rule set as data: its vendored `gitleaks_rules.toml`, read with gitleaks' own semantics.

gitleaks keeps a maintained list of vendor secret shapes (221 rules), each a Go
RE2 regex with keywords for a cheap first pass, an optional entropy floor, the
group holding the secret and allowlists. Rather than grow a hand-written list,
redaction reads that file (vendored with its licence, `gitleaks_rules.LICENSE`)
and applies it as gitleaks does when it scans stdin (no file path):

1. keywords: a rule runs only when one of its keywords occurs in the text (ASCII
   case-insensitively), found by one Aho-Corasick pass (ahocorasick-rs) over the
   lower-cased bytes for all keywords at once;
2. the rule's regex, translated from RE2 to Python `re` (`translate`), finds
   matches; the secret is `secretGroup`, else the first non-empty group, else the
   whole match;
3. a secret is dropped when its Shannon entropy is at or below the rule's
   `entropy`, when a `generic-*` secret has no digit, and when the global or the
   rule's allowlist allows it (regexes on the secret, the match or the line;
   stopwords; AND conditions). Rules and allowlists that need a file path never
   apply: a transcript has none.

Rules are compiled lazily, one at a time, the first time a keyword asks for them
(importing this module reads nothing). A rule whose regex does not translate is
kept in `skipped_rules()` with the reason, and a test asserts that list.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .jsonio import decode

GITLEAKS_VERSION = "8.30.1"
RULES_FILE = "gitleaks_rules.toml"
RULES_JSON = "gitleaks_rules.json"

_FLAGS = re.ASCII  # RE2's \w, \d, \s and \b are ASCII, as Python's are with re.ASCII


# --------------------------------------------------------------------------- RE2 → Python


def translate(go: str) -> str:
    """A Go RE2 pattern as an equivalent Python `re` pattern.

    Differences handled: POSIX classes (`[[:alnum:]]`); `(?i)` (any flag group without `:`) in the middle of a
    pattern, which Python refuses, becomes a scoped `(?i:…)` around the rest of
    each alternative of its group; `\\z` becomes `\\Z`; `[` and doubled `&|~-`
    inside a class are escaped (Python reserves them for set operations).
    """
    out: list[str] = []
    # Per open group: how many scoped-flag wrappers are open in the current alternative, and their flags.
    stack: list[list[str]] = [[]]
    i, n = 0, len(go)
    in_class = False
    while i < n:
        c = go[i]
        if c == "\\" and i + 1 < n:
            pair = go[i:i + 2]
            out.append("\\Z" if pair == "\\z" else pair)
            i += 2
            continue
        if in_class:
            posix = re.match(r"\[:(\^?)([a-z]+):\]", go[i:])
            if posix and posix.group(2) in _POSIX:
                if posix.group(1):
                    raise ValueError("negated POSIX class")
                out.append(_POSIX[posix.group(2)])
                i += posix.end()
                continue
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
                out.append(c)
            elif c == "[":
                out.append("\\[")
            elif c in "&|~-" and i + 1 < n and go[i + 1] == c:
                out.append(c + "\\" + c)
                i += 1
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            if go.startswith("[^", i):
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            if i < n and go[i] == "]":  # a leading ] is a literal member
                out.append("\\]")
                i += 1
            continue
        if c == "(":
            flags = re.match(r"\(\?([imsU-]+)\)", go[i:])
            if flags:
                spec = flags.group(1)
                if "U" in spec:
                    raise ValueError("ungreedy flag (?U) has no Python equivalent")
                out.append(f"(?{spec}:")
                stack[-1].append(spec)
                i += flags.end()
                continue
            stack.append([])
            if go.startswith("(?P<", i):
                out.append("(?P<")
                i += 4
            else:
                out.append(c)
                i += 1
            continue
        if c == "|":
            wrappers = stack[-1]
            out.append(")" * len(wrappers) + "|" + "".join(f"(?{spec}:" for spec in wrappers))
            i += 1
            continue
        if c == ")":
            out.append(")" * len(stack[-1]))
            stack.pop()
            if not stack:
                raise ValueError("unbalanced )")
            out.append(")")
            i += 1
            continue
        out.append(c)
        i += 1
    if in_class or len(stack) != 1:
        raise ValueError("unterminated class or group")
    out.append(")" * len(stack[0]))
    return "".join(out)


_POSIX = {"alnum": "A-Za-z0-9", "alpha": "A-Za-z", "digit": "0-9", "xdigit": "0-9A-Fa-f", "upper": "A-Z",
          "lower": "a-z", "space": r"\t\n\v\f\r ", "word": r"\w", "punct": r"!-/:-@\[-`{-~", "blank": r" \t",
          "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~", "ascii": r"\x00-\x7f"}

# A leading `[\w.-]{0,50}?` (lazy, may be empty) changes where a match starts, never whether
# there is one or which group holds the secret; Python would retry it 50 times at each
# position, so it is dropped, and put back (`_extend_left`) for allowlists that read the match.
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
        prefix = re.match(r"[A-Za-z0-9_ -]*", literal).group().lower()
        if not prefix:
            return None
        out.append(prefix)
    return out


# --------------------------------------------------------------------------- rules


def shannon_entropy(text: str) -> float:
    """Bits per character, as gitleaks computes it."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(count / total * math.log2(count / total) for count in Counter(text).values())


@dataclass
class Allowlist:
    target: str  # "secret", "match" or "line"
    sources: list[str]  # Go patterns, compiled at first use
    stopwords: tuple[str, ...]
    needs_path: bool  # an AND with paths or commits: never true for a transcript
    and_condition: bool
    _regexes: list[re.Pattern] | None = field(default=None, repr=False)

    @property
    def regexes(self) -> list[re.Pattern]:
        if self._regexes is None:
            self._regexes = [re.compile(translate(r), _FLAGS) for r in self.sources]
        return self._regexes

    def allows(self, secret: str, match: str, line: str) -> bool:
        if self.and_condition and self.needs_path:
            return False
        target = {"secret": secret, "match": match, "line": line}[self.target]
        by_regex = any(r.search(target) for r in self.regexes)
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
    _compiled: re.Pattern | None = field(default=None, repr=False)

    @property
    def pattern(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(translate(self.source), _FLAGS)
        return self._compiled


def _allowlist(spec: dict) -> Allowlist:
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

    keyword_automaton: Any = field(repr=False)  # an ahocorasick_rs.BytesAhoCorasick
    keyword_automaton_str: Any = field(repr=False)  # the same over str (for text that is not ASCII)


def load_toml() -> dict:
    """The vendored file, parsed (~50 ms: what `refresh_json` caches)."""
    import tomllib

    return tomllib.loads(Path(__file__).with_name(RULES_FILE).read_text(encoding="utf-8"))


def _load() -> dict:
    """The rules from `gitleaks_rules.json`, the toml's parse kept beside it (orjson reads it in ~1 ms)."""
    return decode(Path(__file__).with_name(RULES_JSON).read_bytes())


def refresh_json() -> None:
    """Rewrite `gitleaks_rules.json` from the toml (after updating the toml; a test checks they agree)."""
    path = Path(__file__).with_name(RULES_JSON)
    path.write_text(json.dumps(load_toml(), indent=None, separators=(",", ":"), sort_keys=False) + "\n")


@lru_cache(maxsize=1)
def _data() -> dict:
    return _load()


def _applies(spec: dict) -> bool:
    """Whether a rule can ever match a transcript (it has a regex and needs no file path)."""
    return "regex" in spec and "path" not in spec


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """Every keyword of the rules that apply (lower case): `rule_set().keywords` without building the rules.

    Redaction's fast path needs only these (~1 ms) to tell that a record holds no secret; the
    rules themselves (~6 ms: 221 of them) are built when a record holds a keyword.
    """
    return frozenset(k.lower() for spec in _data()["rules"] if _applies(spec) for k in spec.get("keywords", []))


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
        source, names = _strip_lazy_prefix(spec["regex"])
        allowlists = [_allowlist(a) for a in spec.get("allowlists", [])]
        keywords = tuple(k.lower() for k in spec.get("keywords", []))
        prefixes = name_prefixes(names) if names is not None else None
        anchors = tuple(sorted(set(prefixes))) if prefixes else None
        rules.append(Rule(rid, source, keywords, float(spec.get("entropy", 0)), int(spec.get("secretGroup", 0)),
                          allowlists, source != spec["regex"], anchors))
    by_keyword: dict[str, list[Rule]] = {}
    for rule in rules:
        for kw in rule.keywords:
            by_keyword.setdefault(kw, []).append(rule)
    keywords_, automaton, automaton_str = _keyword_automata()
    return RuleSet(rules, global_allowlist, skipped, by_keyword, keywords_, automaton, automaton_str)


@lru_cache(maxsize=1)
def _keyword_automata() -> tuple[tuple[str, ...], Any, Any]:
    """(the keywords, sorted; an automaton over bytes; one over str): gitleaks' first pass, without the rules."""
    import ahocorasick_rs  # imported here: importing this module stays cheap

    words = tuple(sorted(keywords()))
    return (words, ahocorasick_rs.BytesAhoCorasick([kw.encode() for kw in words],
                                                   implementation=ahocorasick_rs.Implementation.DFA),
            ahocorasick_rs.AhoCorasick(list(words)))


def compile_all() -> dict[str, str]:
    """Compile every rule now; {rule id: why it is not applied} for the rules that cannot be (tests, fsck)."""
    rs = rule_set()
    out = dict(rs.skipped)
    for allowlist in [rs.global_allowlist]:
        allowlist.regexes  # noqa: B018 - a global allowlist that does not translate is a bug: let it raise
    for rule in rs.rules:
        try:
            rule.pattern  # noqa: B018 - compiles and caches
            for allowlist in rule.allowlists:
                allowlist.regexes  # noqa: B018
        except (re.error, ValueError) as exc:
            out[rule.id] = f"regex does not translate: {exc}"
    return out


def skipped_rules() -> dict[str, str]:
    return compile_all()


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    rule_id: str


def _line_around(text: str, start: int, end: int) -> str:
    return text[text.rfind("\n", 0, start) + 1: (lambda e: len(text) if e < 0 else e)(text.find("\n", end))]


def _extend_left(text: str, start: int) -> int:
    """Where the dropped lazy `[\\w.-]{0,50}?` prefix would have started the match."""
    i = start
    while i > 0 and start - i < 50 and (text[i - 1].isascii() and (text[i - 1].isalnum() or text[i - 1] in "_.-")):
        i -= 1
    return i


def _secret_span(match: re.Match, group: int) -> tuple[int, int]:
    """gitleaks' secret: `secretGroup`, else the first non-empty group, else the match.

    One departure: a first group shorter than 6 characters is a repeated piece of
    the shape (microsoft-teams-webhook's `([a-z0-9]{4}-){3}`), not the secret;
    the whole match is masked instead.
    """
    if group and group <= (match.re.groups or 0):
        return match.span(group)
    for g in range(1, (match.re.groups or 0) + 1):
        if match.group(g):
            start, end = match.span(g)
            return (start, end) if end - start >= 6 else match.span()
    return match.span()


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def keyword_hits(text: str) -> dict[str, list[int]]:
    """{keyword: sorted start positions (str indices)} of the keywords in `text`, ASCII case-insensitively."""
    words, automaton, automaton_str = _keyword_automata()
    if text.isascii():  # bytes.lower() folds ASCII only, as the regexes do
        hits = automaton.find_matches_as_indexes(text.encode("ascii").lower(), overlapping=True)
    else:  # lower-case ASCII only, so that positions do not move
        hits = automaton_str.find_matches_as_indexes(text.translate(_ASCII_LOWER), overlapping=True)
    out: dict[str, list[int]] = {}
    for index, start, _end in hits:
        out.setdefault(words[index], []).append(start)
    return out


def rules_for(text: str, hits: dict[str, list[int]] | None = None) -> list[Rule]:
    """The rules whose keywords occur in `text` (gitleaks' first pass)."""
    rs = rule_set()
    found: dict[str, Rule] = {}
    for kw in sorted(keyword_hits(text) if hits is None else hits):
        for rule in rs.rules_by_keyword[kw]:
            found[rule.id] = rule
    return list(found.values())


def _folded(text: str) -> bytes | str:
    """`text` with ASCII letters in lower case and every position kept (bytes when it is ASCII: faster)."""
    return text.encode("ascii").lower() if text.isascii() else text.translate(_ASCII_LOWER)


def _occurrences(folded: bytes | str, anchor: str) -> Iterator[int]:
    needle = anchor.encode() if isinstance(folded, bytes) else anchor
    pos = folded.find(needle)  # type: ignore[arg-type]
    while pos >= 0:
        yield pos
        pos = folded.find(needle, pos + 1)  # type: ignore[arg-type]


def _matches(rule: Rule, text: str, folded: bytes | str) -> Iterator[re.Match]:
    """`rule.pattern.finditer(text)`; for a rule with anchors, tried only where one begins.

    gitleaks' semi-generic rules read `[\\w.-]{0,50}?(?:name1|name2…)…`: once the lazy prefix is
    dropped, a match begins with one of the names (`name_prefixes`), so only their positions can
    start one; Python's `re` would otherwise try the case-insensitive names at every position.
    tests/session/test_redaction_corpus.py checks this against the full scan, rule by rule.
    """
    if rule.anchors is None:
        yield from rule.pattern.finditer(text)
        return
    positions = sorted({p for anchor in rule.anchors for p in _occurrences(folded, anchor)})
    end = 0
    for pos in positions:
        if pos < end:
            continue
        match = rule.pattern.match(text, pos)
        if match is not None:
            end = max(match.end(), pos + 1)
            yield match


def find(text: str) -> Iterator[Hit]:
    """Every secret the gitleaks rules find in `text`, as gitleaks would report it (stdin, no path)."""
    hits = keyword_hits(text)
    if not hits:  # no keyword, no rule: the rules are not even built (start-up: `-p hi` never needs them)
        return
    rs = rule_set()
    folded = _folded(text)
    for rule in rules_for(text, hits):
        try:
            rule.pattern  # noqa: B018 - compiles it
            for allowlist in rule.allowlists:
                allowlist.regexes  # noqa: B018 - compiled with the rule, so a bad one skips the rule
        except (re.error, ValueError):
            continue  # reported by compile_all()
        for match in _matches(rule, text, folded):
            start, end = _secret_span(match, rule.secret_group)
            if start == end:
                continue
            secret = text[start:end]
            if rule.entropy and shannon_entropy(secret) <= rule.entropy:
                continue
            if rule.id.startswith("generic") and not any(ch.isdigit() for ch in secret):
                continue
            m_start = _extend_left(text, match.start()) if rule.stripped_prefix else match.start()
            whole = text[m_start:match.end()]
            line = _line_around(text, match.start(), match.end())
            if rs.global_allowlist.allows(secret, whole, line):
                continue
            if any(a.allows(secret, whole, line) for a in rule.allowlists):
                continue
            yield Hit(start, end, rule.id)


__all__ = ["GITLEAKS_VERSION", "Hit", "compile_all", "find", "rule_set", "rules_for", "shannon_entropy",
           "skipped_rules", "translate"]

if __name__ == "__main__":  # python -m evo_agent.session.gitleaks_rules --refresh
    if sys.argv[1:] != ["--refresh"]:
        sys.exit("usage: python -m evo_agent.session.gitleaks_rules --refresh")
    refresh_json()
