"""Redaction (session/redact.py): every documented secret shape is masked on disk, nothing else changes."""

from __future__ import annotations

import copy
import json
import re
import string
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evo_agent.session import load_for_resume
from evo_agent.session.jsonio import _stdlib_line, encode_line
from evo_agent.session.redact import encode_redacted, redact_record, redact_text
from evo_agent.session.redact_shapes import plausible_named_value
from evo_agent.session.store import SessionStore
from tests.api_rules import check_conversation
from tests.builders import quiet_store

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"
MASK_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def run(alphabet: str, min_size: int, max_size: int | None = None):
    return st.text(alphabet=alphabet, min_size=min_size, max_size=max_size or min_size)


@st.composite
def with_digit(draw, alphabet: str, min_size: int, max_size: int):
    body = draw(run(alphabet, min_size - 1, max_size - 1))
    at = draw(st.integers(0, len(body)))
    return body[:at] + draw(st.sampled_from(string.digits)) + body[at:]


# Each strategy gives (kind, the whole secret text, the part that must disappear).
def _key(kind: str, strategy):
    return strategy.map(lambda s: (kind, s, s))


SECRETS = {
    "anthropic-key": _key("anthropic-key", st.builds(
        lambda k, b: f"sk-ant-{k}-{b}", st.sampled_from(["api03", "admin01", "oat01"]), run(URLSAFE, 20, 100))),
    "openai-key": _key("openai-key", st.builds(
        lambda p, b: f"sk-{p}{b}", st.sampled_from(["proj-", "svcacct-", "admin-", ""]), with_digit(ALNUM, 20, 160))),
    "aws-access-key-id": _key("aws-access-key-id", st.builds(
        lambda p, b: p + b, st.sampled_from(["AKIA", "ASIA"]), run(UPPER_DIGITS, 16))),
    "github-token": _key("github-token", st.one_of(
        st.builds(lambda p, b: p + b, st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), run(ALNUM, 36)),
        st.builds(lambda a, b: f"github_pat_{a}_{b}", run(ALNUM, 22), run(ALNUM, 59)))),
    "slack-token": _key("slack-token", st.builds(
        lambda p, a, b, c: f"xox{p}-{a}-{b}-{c}", st.sampled_from("abeoprs"), run(string.digits, 10, 13),
        run(string.digits, 10, 13), run(ALNUM, 24))),
    "google-api-key": _key("google-api-key", run(URLSAFE, 35).map(lambda b: "AIza" + b)),
    "stripe-key": _key("stripe-key", st.builds(
        lambda p, b: f"{p}_live_{b}", st.sampled_from(["sk", "rk"]), run(ALNUM, 24, 99))),
    "jwt": _key("jwt", st.builds(
        lambda a, b, c: f"eyJ{a}.eyJ{b}.{c}", run(URLSAFE, 8, 60), run(URLSAFE, 8, 120), run(URLSAFE, 8, 86))),
    "private-key": st.builds(
        lambda label, lines, end: (
            "private-key",
            f"-----BEGIN {label}-----\n" + "\n".join(lines) + (f"\n-----END {label}-----" if end else ""),
            "\n".join(lines),
        ),
        st.sampled_from(["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                         "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]),
        st.lists(run(ALNUM + "+/", 16, 64), min_size=1, max_size=6),
        st.booleans(),
    ),
    "bearer-token": st.builds(
        lambda word, tok: ("bearer-token", f"Authorization: {word} {tok}", tok),
        st.sampled_from(["Bearer", "bearer", "BEARER"]), run(ALNUM + "._~+/-", 16, 80)),
    "url-password": st.builds(
        lambda scheme, user, pw, host: ("url-password", f"{scheme}://{user}:{pw}@{host}/x", pw),
        st.sampled_from(["https", "postgres", "redis"]), run(ALNUM + "._-", 1, 20),
        run(ALNUM + "!$%*+=~-", 4, 40).filter(lambda pw: not pw.startswith("[")), st.just("db.example.com")),
}


@st.composite
def assignments(draw):
    """`NAME<sep>VALUE` in the forms of .env files, YAML, JSON, shell and code."""
    word = draw(st.sampled_from(["password", "passwd", "secret", "secret_key", "token", "api_key", "apikey",
                                 "api-key", "access_key", "private_key"]))
    word = "".join(c.upper() if draw(st.booleans()) else c for c in word)
    name = draw(st.sampled_from(["", "DB_", "GITHUB_", "aws_secret_", "my.", "x-"])) + word
    if draw(st.booleans()):
        value = draw(st.text(alphabet=st.characters(blacklist_characters="\"'\r\n\\", blacklist_categories=["Cs"]),
                             min_size=1, max_size=30))
        assume(not MASK_RE.fullmatch(value))
        # What code gives a telling name but is no secret stays (issue #17): "%s", ":", "ANTHROPIC_API_KEY", "#f8f8f2".
        assume(plausible_named_value(name, value))
        quote = draw(st.sampled_from(["\"", "'"]))
        form = draw(st.sampled_from(["{n}={q}{v}{q}", "{n} = {q}{v}{q}", "{q}{n}{q}: {q}{v}{q}", "{n}: {q}{v}{q}",
                                     "{n} := {q}{v}{q}"]))
        text = form.format(n=name, q=quote, v=value)
    else:
        value = draw(with_digit(ALNUM + "!#$%*+.:=?^_|~/-", 4, 40))
        assume(not value.startswith("="))  # `==` is a comparison, not an assignment
        assume(plausible_named_value(name, value))
        text = draw(st.sampled_from(["{n}={v}", "{n}: {v}", "export {n}={v}", "{n}\t=\t{v}"])).format(n=name, v=value)
    return "secret", text, value


ANY_SECRET = st.one_of(*SECRETS.values(), assignments())
FILLER = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40)
BEFORE = st.sampled_from([" ", "\n", "\t", "\"", "'", "(", ",", ";", "\n\n"])
AFTER = st.sampled_from([" ", "\n", "\t", "\"", "'", ")", ",", ";", "\n\n"])  # `(` after a value makes it a call


@st.composite
def text_with_secrets(draw):
    """Random text with 1–3 secrets of any documented shape, each set off by a separator."""
    parts, found = [draw(FILLER)], []
    for _ in range(draw(st.integers(1, 3))):
        kind, whole, secret = draw(ANY_SECRET)
        parts += [draw(BEFORE), whole, draw(AFTER), draw(FILLER)]
        found.append((kind, whole, secret))
    return "".join(parts), found


# --------------------------------------------------------------------------- text


@settings(max_examples=400, deadline=None)
@given(case=text_with_secrets())
def test_every_generated_secret_is_masked_with_its_kind(case):
    text, found = case
    out = redact_text(text)
    for kind, _whole, secret in found:
        if len(secret) >= 8 and text.count(secret) == 1:  # a short value may also occur in the filler
            assert secret not in out, (kind, secret, out)
        labels = set(MASK_RE.findall(out))
        # A cut key block also takes the base64-looking lines after it, whatever they are.
        assert f"[REDACTED:{kind}]" in labels or "[REDACTED:private-key]" in labels or (kind == "secret" and labels), (
            kind, out)
    assert redact_text(out) == out  # idempotent


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_kind_alone_is_masked(kind):
    @settings(max_examples=40, deadline=None)
    @given(case=SECRETS[kind])
    def check(case):
        got_kind, whole, secret = case
        text = f"value: {whole}\n"
        out = redact_text(text)
        # counted outside the masks: a password `pass` is also in the mask's name, `[REDACTED:url-password]`
        assert MASK_RE.sub("", out).count(secret) == text.count(secret) - 1 and f"[REDACTED:{got_kind}]" in out, out

    check()


BENIGN = [
    "please look at the failing test and fix it; the tokens are counted per request",
    "token = None", "token=token", "password = get_password()", "if password == 'x':", "self.tokens += 1",
    "secret = config.lookup(name)", "def key(self):", "input_tokens: 812", '"output_tokens": 10',
    "max_tokens=8192", "Use a Bearer token in the Authorization header.", "Authorization: Bearer $TOKEN",
    "sk-learn-compatible-estimators", "task-abcdefghijklmnopqrstuvwxyz", "AKIA is the prefix of an access key id",
    "ghp_short", "xoxo-hugs-and-kisses-everyone", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----", "git@github.com:org/repo.git", "https://github.com/org/repo", "user@example.com",
    "http://localhost:8080/path?x=1", "toolu_01A09q90qw90lq917835lq9", "call_aBcDeF0123456789",
    "1780227556183_b525857d", "6f1c0a52-8f0e-4c59-9a2e-2f7f5e4c1a11", "2026-05-31T19:58:42.705+08:00",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "export PATH=/usr/bin:$PATH",
    "DB_PASSWORD_FILE=/run/secrets/db", "token_type=bearer", "passwords: 3 entries", "[REDACTED:secret]",
    "password=[REDACTED:secret]", 'api_key = "[REDACTED:openai-key]"',
]


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_text_and_code_are_left_exactly_as_they_are(text):
    assert redact_text(text) == text


@settings(max_examples=500, deadline=None)
@given(parts=st.lists(st.one_of(FILLER, st.sampled_from(BENIGN), ANY_SECRET.map(lambda c: c[1])), max_size=8))
def test_redaction_only_replaces_spans_with_masks(parts):
    """Whatever the text, the output is the input with some spans replaced by masks, in order."""
    text = "".join(parts)
    out = redact_text(text)
    pos = 0
    for piece in MASK_RE.split(out):
        found = text.find(piece, pos)
        assert found >= 0, (piece, text, out)
        pos = found + len(piece)
    assert redact_text(out) == out


# --------------------------------------------------------------------------- records


def _skeleton(value):
    """Keys, list lengths and types: what redaction must never change."""
    if isinstance(value, dict):
        return {k: _skeleton(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_skeleton(v) for v in value]
    return type(value).__name__


@st.composite
def records(draw):
    """Records as the recorder writes them, with secrets anywhere a person or a tool could put one."""
    text = draw(text_with_secrets().map(lambda c: c[0]) | FILLER)
    other = draw(text_with_secrets().map(lambda c: c[0]) | FILLER)
    tool_id = "toolu_" + draw(run(ALNUM, 24))
    kind = draw(st.sampled_from(["user", "assistant", "results", "boundary", "subagent_end", "resume_marker"]))
    envelope = {"type": kind, "timestamp": "2026-05-31T19:58:42.705+08:00", "agent_version": "0.1.0",
                "session_id": "1780227556183_b525857d", "cwd": "/p", "prompt_id": "p1", "git_branch": "main"}
    if kind == "user":
        fields = {"message": {"role": "user", "content": text}}
    elif kind == "assistant":
        envelope["type"] = "assistant"
        fields = {"message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": other, "signature": "c2ln" + draw(run(ALNUM + "+/=", 0, 40))},
            {"type": "text", "text": text},
            {"type": "tool_use", "id": tool_id, "name": "bash",
             "input": {"command": other, "token": draw(run(ALNUM, 1, 20)), "nested": [text, {"id": other}]}},
        ]}, "input_tokens": 812, "output_tokens": 40}
    elif kind == "results":
        envelope["type"] = "user"
        fields = {"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": text},
            {"type": "tool_result", "tool_use_id": tool_id + "b", "content": [{"type": "text", "text": other}],
             "is_error": True},
        ]}}
    elif kind == "boundary":
        envelope["type"] = "compact_boundary"
        fields = {"summary": text, "compact_count": 2, "trigger": "auto"}
    elif kind == "subagent_end":
        fields = {"agent_name": "explore", "subagent_path": "subagent/1780227556183_explore_ab12.jsonl",
                  "tool_use_id": tool_id, "result": text}
    else:
        fields = {"from_session_id": "1780227556183_b525857d", "restored_count": 4, "first_prompt": text}
    return {**envelope, **fields}


VERBATIM = ("type", "id", "tool_use_id", "signature", "session_id", "timestamp", "cwd", "subagent_path",
            "from_session_id", "role")


def _verbatim_values(value, out=None):
    out = [] if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            if k in VERBATIM and isinstance(v, str):
                out.append((k, v))
            if k != "input":  # inside a tool input every string is content
                _verbatim_values(v, out)
    elif isinstance(value, list):
        for v in value:
            _verbatim_values(v, out)
    return out


@settings(max_examples=300, deadline=None)
@given(record=records())
def test_records_keep_their_structure_ids_and_signatures_and_the_input_is_untouched(record):
    before = copy.deepcopy(record)
    clean = redact_record(record)
    assert record == before  # the live history is never changed
    assert _skeleton(clean) == _skeleton(record)
    assert _verbatim_values(clean) == _verbatim_values(record)
    assert redact_record(clean) == clean
    encoded = json.loads(encode_line(clean))
    assert encoded == clean


@settings(max_examples=300, deadline=None)
@given(record=records())
def test_the_fast_path_never_skips_a_record_the_full_pass_would_change(record):
    """encode_redacted checks a cheap trigger first; it must agree with the full walk, with either encoder."""
    first_field = next(k for k in record if k not in ("type", "timestamp", "agent_version", "session_id", "cwd",
                                                      "prompt_id", "git_branch"))
    clean, line = encode_redacted(record, first_field)
    assert clean == redact_record(record)
    assert line == encode_line(clean)
    if redact_record(record) is not record:
        from evo_agent.session.redact import may_hold_secret

        assert may_hold_secret(_stdlib_line(record))  # the stdlib fallback escapes differently


def test_a_dict_value_named_like_a_secret_is_masked_whole():
    record = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "http",
         "input": {"url": "https://api.example.com", "headers": {"X-Api-Key": "plain words", "token": ""}}}]}}
    clean = redact_record(record)
    headers = clean["message"]["content"][0]["input"]["headers"]
    assert headers == {"X-Api-Key": "[REDACTED:secret]", "token": ""}


# --------------------------------------------------------------------------- the recorder


KEY = "sk-ant-api03-" + "Zx9" * 31


def test_on_disk_masked_in_memory_intact_meta_masked_and_resume_valid(project):
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    prompt = {"role": "user", "content": f"deploy with ANTHROPIC_API_KEY={KEY} please"}
    use = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_01AKIAIOSFODNN7EXAMPLEx", "name": "bash",
         "input": {"command": f"curl -H 'Authorization: Bearer {'q' * 40}' https://x"}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01AKIAIOSFODNN7EXAMPLEx",
                                           "content": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"}]}
    live = copy.deepcopy([prompt, use, result])
    for message in (prompt, use, result):
        assert (rec.user if message["role"] == "user" else rec.assistant)(message) is True
    rec.checkpoint()
    assert [prompt, use, result] == live  # the history the model is sent next is untouched

    raw = rec.path.read_text()
    assert KEY not in raw and "q" * 40 not in raw and "MIIEow" not in raw
    assert "toolu_01AKIAIOSFODNN7EXAMPLEx" in raw  # ids are not content
    meta = json.loads((rec.session_dir / "meta.json").read_text())
    assert meta["first_prompt"] == "deploy with ANTHROPIC_API_KEY=[REDACTED:secret] please"
    loaded = load_for_resume(rec.path).messages
    check_conversation(loaded)
    assert loaded[0]["content"] == "deploy with ANTHROPIC_API_KEY=[REDACTED:secret] please"
    assert loaded[1]["content"][0]["input"]["command"] == "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://x"
    assert loaded[2]["content"][0]["content"] == "[REDACTED:private-key]"


def test_off_keeps_everything_and_a_resume_with_it_on_masks_the_copy(project):
    raw_store = SessionStore(project, warn=lambda line: None, redact=False)
    rec = raw_store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": f"key {KEY}"})
    side = rec.start_subagent("explore", "toolu_1")
    side.user({"role": "user", "content": f"child sees {KEY}"})
    rec.end_subagent(side, "toolu_1", f"found {KEY}")
    assert KEY in rec.path.read_text() and KEY in side.path.read_text()

    resumed = quiet_store(project).resume(rec.id, model="m", provider="demo")
    assert resumed.loaded.messages == [{"role": "user", "content": f"key {KEY}"}]  # what is sent next: the real text
    copy_text = resumed.recorder.path.read_text()
    assert KEY not in copy_text and "key [REDACTED:anthropic-key]" in copy_text


def test_a_sidechain_and_the_subagent_markers_are_masked_too(project):
    rec = quiet_store(project).create(model="m", provider="demo")
    side = rec.start_subagent("explore", "toolu_1")
    side.user({"role": "user", "content": f"use {KEY}"})
    rec.end_subagent(side, "toolu_1", f"the key is {KEY}")
    rec.compact_boundary(f"the user shared {KEY}", 1, "manual")
    for path in (rec.path, side.path):
        assert KEY not in path.read_text() and "[REDACTED:anthropic-key]" in path.read_text()


def test_the_fast_path_keywords_are_the_rules_keywords():
    """Redaction's trigger pass reads the keywords without building the rules; both must agree."""
    from evo_agent.session import gitleaks_rules

    assert gitleaks_rules.keywords() == frozenset(gitleaks_rules.rule_set().keywords)


def test_a_record_without_a_keyword_is_written_without_building_the_rules():
    """Start-up: the first records of `-p hi` (no secret, no keyword) never pay for the 221 rules."""
    code = ("from evo_agent.session import gitleaks_rules, redact\n"
            "user = {'type': 'user', 'message': {'role': 'user', 'content': 'hi'}}\n"
            "assert redact.encode_redacted(user, 'message')[0] is user\n"
            "answer = {'type': 'assistant', 'message': {'role': 'assistant', 'content': [{'type': 'text', 'text': 'ok'}]},"
            " 'input_tokens': 10, 'output_tokens': 1}\n"  # `token` is a trigger: the record is walked
            "assert redact.encode_redacted(answer, 'message')[0] is answer\n"
            "print(gitleaks_rules.rule_set.cache_info().currsize)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "0"
