"""Redaction's shortcuts find what the full scan finds.

`_may_hold_shapes`: a text in which the one literal pass (`_literal_hits`) finds no gitleaks keyword or
literal and no shape's anchor is not scanned by the shapes and rules at all, nor one in which no hit meets the
start plan of the rules its keywords select (`_prefilter`); `find_shapes` compiles nothing without a candidate. Texts built from keywords,
anchors, secret-looking values and plain words give the same spans with and without the shortcut.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.session import redact

PIECES = ["hello", "they", "ask", "token", "api_key", " = ", ": ", "'", '"', "\n", "private", "PRIVATE", "é", "中",
          "sk-ant-abcdefghijklmnopqrstuvwxyz0123", "ghp_" + "a1" * 20, "AKIAABCDEFGHIJKLMNOP", "password",
          "Xabcdefgh1jklmnopqrstuvw", "-----BEGIN PRIVATE KEY-----", "Bearer ", "xyz", "_KEY", "DB_PASS",
          "https://user:pw123456@host/", "eyJhbGciOiJIUzI1NiJ9", ".", "0123456789abcdef"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_the_shortcut_finds_what_the_full_scan_finds(pieces):
    text = "".join(pieces)
    fast = redact.find_secrets(text)
    original = redact._may_hold_shapes
    redact._may_hold_shapes = lambda hits: True
    redact._prefilter = False
    try:
        full = redact.find_secrets(text)
    finally:
        redact._may_hold_shapes = original
        redact._prefilter = True
    assert fast == full


def test_plain_words_and_digests_need_no_scan():
    for text in ("e3b0c44298fc1c14", "ok", "hi", "12345", "中文"):
        assert not redact._may_hold_shapes(redact._literal_hits(text)[1])
    for text in ("the token", "they", "PRIVATE", "api"):
        assert redact._may_hold_shapes(redact._literal_hits(text)[1])


_VALUES = {"DEPLOY_TOKEN": "Zq8vT3nLw0pXr7", "DB_PASSWORD": "pässwörd-中文-12345", "API_KEY": "sk-proj-ABCdef123456"}
_FORMS = [form for value in _VALUES.values() for form in redact.secret_forms(value)]
_VALUE_PIECES = PIECES + _FORMS + [f.upper() for f in _FORMS] + [f[:-1] for f in _FORMS] + ["\u212a", "ſ", "ÿ"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_VALUE_PIECES), max_size=8))
def test_the_exact_values_are_looked_for_wherever_the_literal_pass_may_have_missed_them(pieces):
    """The values' regex runs only where the one literal pass saw one of their forms (lowered, as the haystack
    reads it): the same spans as running it on every text, whatever the case, script or neighbours."""
    text = "".join(pieces)
    redact.use_environment(_VALUES)
    original = redact._scan
    try:
        fast = redact.find_secrets(text)
        masked = redact.redact_text(text)
        redact._scan = lambda text, literal_pass, prefilter=True: (*original(text, literal_pass, prefilter)[:2], True)
        full = redact.find_secrets(text)
    finally:
        redact._scan = original
        redact.use_environment(None)
    assert fast == full
    assert not [form for form in _FORMS if form in masked]


def test_the_keys_known_not_to_be_secret_names_are_not():
    """`_secret_names` starts with the format's own keys, answered without the regex: the regex agrees."""
    for key, known in list(redact._secret_names.items()):
        assert known == (redact._SECRET_NAME.match(key) is not None), key


_ODD_TYPES = st.one_of(st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(),
                                                                                    max_size=2), st.none(), st.integers())


@settings(max_examples=100, deadline=None)
@given(_ODD_TYPES, st.sampled_from(["hello", "token=ghp_" + "a1" * 20]))
def test_a_block_whose_type_is_no_string_is_written_and_its_secret_masked(kind, text):
    """The walk reads each block's `type` (tool_use, opaque data): a list or an object there (a hostile MCP server's
    or endpoint's block) is content like any other, never an unhashable-type crash of the recorder. Before the walk
    ran on every record, a record without a trigger literal was written as it was."""
    record = {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": kind, "text": text}]}]}}
    clean, line = redact.encode_redacted(record)
    assert b"ghp_" not in line and (b"hello" in line) == (text == "hello")
    assert clean["message"]["content"][0]["content"][0]["type"] == kind


# --------------------------------------------------------------------------- gitleaks' allowlists, merged

def _allowed_one_by_one(allowlist, secret: str, match: bytes, line: bytes, secret_bytes: bytes) -> bool:
    """gitleaks' test of one allowlist, written out as it was before the plan: every pattern, every stopword."""
    if allowlist.and_condition and allowlist.needs_path:
        return False
    target = {"secret": secret_bytes, "match": match, "line": line}[allowlist.target]
    by_regex = any(r.search(target) is not None for r in allowlist.regexes)
    by_stopword = any(word in secret.lower() for word in allowlist.stopwords)
    if allowlist.and_condition:
        checks = ([by_regex] if allowlist.sources else []) + ([by_stopword] if allowlist.stopwords else [])
        return bool(checks) and all(checks)
    return by_regex or by_stopword


_ALLOW_PIECES = ["API_KEY", "token", "_", "=", ": ", '"', "'", "\n", " ", "$", "${", "}", "{{ ", " }}", "%", "@",
                 "/usr/bin/", "/Users/ada/", "true", "null", "aaaaaaaaaa", "***", "example", "changeme", "public",
                 "access_id", "keyVault", "LICENSE = \"", "SRC_URI = \"", "--mount=type=secret,", "import { a } from ",
                 "monkey", "MONKEY", "Zq8vT3nLw0pXr7", "9f8e7d6c5b4a", "中", "é", "secrets.", "csrf_token",
                 "\udc80", "İ", "ﬃ", "\u212a",  # a lone surrogate (json.loads makes them), and lowerings that grow
                 "import { a } from 'b'", 'LICENSE = "MIT', 'SRC = "abc123', "\n", "\n"]  # lines allowed whole


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ALLOW_PIECES), min_size=1, max_size=14), st.data())
def test_the_merged_allowlists_decide_as_each_one_asked_in_turn(pieces, data):
    """`find` asks one `_AllowPlan` (the patterns of one target as one alternation, all stopwords as one
    automaton, the line searched once for the candidates of one line); each rule that has allowlists decides
    every candidate as asking them one by one would. Three candidates of one text, in order, share `find`'s
    memo of the last line."""
    from evo_agent.session import gitleaks_rules as g

    text = "".join(pieces)
    haystack = g.haystack(text)
    rules = [r for r in g.rule_set().rules if r.allowlists]
    generic = [r for r in rules if r.id == "generic-api-key"]  # the rule with stopwords and three targets: half the draws
    rule = data.draw(st.sampled_from(rules + generic * len(rules)))
    plan = rule.allow_plan(g.rule_set().global_allowlist)
    lists = [g.rule_set().global_allowlist, *rule.allowlists]
    line_seen = list(g.LINE_MEMO)
    for _ in range(3):
        m_start = data.draw(st.integers(0, len(text) - 1))
        m_end = data.draw(st.integers(m_start + 1, len(text)))
        start = data.draw(st.integers(m_start, m_end - 1))
        end = data.draw(st.integers(start + 1, m_end))
        secret = text[start:end]
        whole = haystack[g._extend_left(haystack, m_start) if rule.stripped_prefix else m_start:m_end]
        line = g._line_around(haystack, m_start, m_end)
        expected = any(_allowed_one_by_one(a, secret, whole, line, haystack[start:end]) for a in lists)
        assert plan.allows(secret, haystack, start, end, m_start, m_end, rule.stripped_prefix, line_seen) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcdefgh0123456789XYZé中"), min_size=1, max_size=700))
def test_the_entropy_from_its_table_is_the_same_float(text):
    import math
    from collections import Counter

    from evo_agent.session.gitleaks_rules import shannon_entropy

    total = len(text)
    assert shannon_entropy(text) == -sum(c / total * math.log2(c / total) for c in Counter(text).values())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ALLOW_PIECES), min_size=1, max_size=24), st.data())
def test_the_allowlists_asked_at_once_decide_as_asked_one_by_one(pieces, data):
    """Dense output: `find` asks the allowlists of all of a rule's candidates at once (`allows_many`: each target's
    pieces joined by `\\n` and searched in multi-line mode, the stopwords in one pass). Each candidate gets the
    answer `allows` gives it alone, whatever its pieces hold (`\\n`, `$`, values the lists allow whole)."""
    from evo_agent.session import gitleaks_rules as g

    text = "".join(pieces)
    haystack = g.haystack(text)
    rules = [r for r in g.rule_set().rules if r.allowlists]
    generic = [r for r in rules if r.id == "generic-api-key"]
    rule = data.draw(st.sampled_from(rules + generic * len(rules)))
    plan = rule.allow_plan(g.rule_set().global_allowlist)
    found = []
    for _ in range(data.draw(st.integers(1, 12))):
        m_start = data.draw(st.integers(0, len(text) - 1))
        m_end = data.draw(st.integers(m_start + 1, len(text)))
        start = data.draw(st.integers(m_start, m_end - 1))
        found.append((start, data.draw(st.integers(start + 1, m_end)), m_start, m_end))
    one_by_one = [plan.allows(text[s:e], haystack, s, e, ms, me, rule.stripped_prefix, list(g.LINE_MEMO))
                  for s, e, ms, me in found]
    assert plan.allows_many(text, haystack, found, rule.stripped_prefix) == one_by_one


_LINEWISE_SOURCES = [r"^ab", r"ab$", r"\Aab", r"ab\z", r"\bab\b", r"a\sb", r"(?s)a.b", r"a[^x]b", r"^$", r"(?i)^x+$",
                     r"b\n", r"(?:\n|\z)a", r"\Bb", r"[\n]a", r"x*"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet="abx \n", max_size=6), min_size=1, max_size=10),
       st.lists(st.sampled_from(_LINEWISE_SOURCES), min_size=1, max_size=3))
def test_one_search_of_joined_pieces_finds_what_a_search_of_each_finds(pieces, sources):
    """`_pieces_matched`: anchors, word boundaries, `\\s`, `.` in single-line mode, negated classes and a `\\n`
    of the pattern's own meet the joints between pieces; the pieces found are those a search of each alone
    finds (a match across a joint, or in a piece holding `\\n`, has the pieces it touches asked alone)."""
    from evo_agent.session import gitleaks_rules as g

    each = g._compile("|".join(f"(?:{source})" for source in sources))
    raw = g._lines_search(sources)
    assert raw is not None
    pieces_b = [p.encode() for p in pieces]
    alone = {i for i, piece in enumerate(pieces_b) if each.search(piece) is not None}
    assert set(g._pieces_matched(raw, pieces_b, lambda piece: each.search(piece) is not None)) == alone


def test_patterns_that_set_multi_line_mode_are_asked_one_by_one():
    from evo_agent.session import gitleaks_rules as g

    assert g._linewise(r"(?m)^a") is None and g._linewise(r"(?im:a)") is None and g._linewise(r"\Qa$\E") is None
    assert g._linewise(r"[\z]") is None and g._linewise(r"[a") is None
    assert g._linewise(r"\Aa\\z[\]z$]\z") == r"^a\\z[\]z$]$"
