"""Mask well-known secret shapes in what a session writes to disk.

A coding agent reads `.env` files, prints `git remote -v`, cats key files:
its transcript is a magnet for credentials. Before a record is written, every
string in it is scanned for the shapes below, and each match is replaced by
`[REDACTED:<kind>]`. Only the copy on disk is masked: the in-memory history,
and so the model in the live turn, keeps the real value. The price is
fidelity (SPEC §4): a resumed session sends the masked text.

What is caught (ASCII, case-sensitive unless said otherwise; the README's
"Secrets and redaction" says the same for users):

| kind | shape |
|---|---|
| `anthropic-key` | `sk-ant-` + 20 or more of `[A-Za-z0-9_-]` |
| `openai-key` | `sk-` + 20 or more of `[A-Za-z0-9_-]` with at least one digit (OpenAI's `sk-proj-`, `sk-svcacct-`, `sk-admin-`, legacy keys, and the providers that copied the shape) |
| `aws-access-key-id` | `AKIA` or `ASIA` + 16 of `[A-Z0-9]` |
| `github-token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 or more alphanumerics; `github_pat_` + 22 or more of `[A-Za-z0-9_]` |
| `slack-token` | `xoxa-`, `xoxb-`, `xoxe-`, `xoxo-`, `xoxp-`, `xoxr-`, `xoxs-` + 10 or more of `[A-Za-z0-9-]` with a digit |
| `google-api-key` | `AIza` + 35 of `[A-Za-z0-9_-]` |
| `stripe-key` | `sk_live_` or `rk_live_` + 16 or more alphanumerics |
| `jwt` | three dot-separated base64url parts, the first two starting `eyJ` |
| `private-key` | a whole `-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----` block (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … KEY BLOCK); without its END line (a cut output), the BEGIN line and the base64 and header lines that follow it |
| `bearer-token` | the token after `Bearer ` (any case), 16 or more of `[A-Za-z0-9._~+/-]` |
| `url-password` | the password in `scheme://user:password@host` |
| `secret` | the value of an assignment whose name ends in `password`, `passwd`, `secret`, `secret_key`, `token`, `api_key`/`apikey`/`api-key`, `access_key` or `private_key` (any case, any prefix: `DB_PASSWORD`, `aws_secret_access_key`, `accessToken`), written `name=value`, `name: value`, `name := value`, `"name": "value"`: a quoted value whatever it holds, an unquoted one when it has 4 or more characters, a digit, and is not a call (so code such as `token = None`, `password=password` or `token = next_token()` stays); and the string value of a JSON/dict key with such a name |

Only the secret itself is replaced: `password=[REDACTED:secret]`,
`Authorization: Bearer [REDACTED:bearer-token]`. The pass is idempotent and
never touches dictionary keys, the envelope (`type`, `timestamp`, `cwd`, …:
metadata, not content) or the fields the format needs verbatim (ids,
`tool_use_id`, session ids, thinking signatures, base64 payloads).

The append path stays fast: a record is first encoded as usual, and only when
its bytes contain one of the cheap trigger shapes (`_TRIGGERS`, a superset of
everything above) is it walked and re-encoded.
"""

from __future__ import annotations

import re
from typing import Any

from .jsonio import encode_line

MASK = "[REDACTED:{}]"
_MASKED = re.compile(r"\[REDACTED:[a-z-]+\]\Z")

_NAME_WORD = r"(?:passw(?:or)?d|secret(?:[_-]?key)?|token|api[_-]?key|access[_-]?key|private[_-]?key)"
_NOT_MASK = r"(?!\[REDACTED:[a-z-]+\])"

# The shapes, as branches of one regex scanned once per string. Every branch
# starts with a literal character, so the engine skips from candidate to
# candidate instead of trying each branch at each position (~70x faster than
# leading look-behinds); the word-boundary checks come right after it.
# A branch ending in an empty group `k_<kind>` masks its whole match; one with
# a group `s_<kind>...` masks only that group (`password=`, `Bearer `, `user:` stay).
_VALUE = (r"[\"']?[ \t]*(?::=|=|:)(?!=)[ \t]*"
          r"(?:\"" + _NOT_MASK + r"(?P<s_secret_dq_{n}>(?:[^\"\\\r\n]|\\.)+)\""
          r"|'" + _NOT_MASK + r"(?P<s_secret_sq_{n}>[^'\r\n]+)'"
          r"|(?=[^\s\"'`,;&()\[\]{{}}<>]*[0-9])(?P<s_secret_{n}>[^\s\"'`,;&()\[\]{{}}<>]{{4,}}+)(?![(\[]))")
_NAME_BRANCHES = [  # _NAME_WORD, split by its first letter in either case (any prefix may come before it)
    (first, rest) for letter, rest in (
        ("p", r"assw(?:or)?d|rivate[_-]?key"), ("s", r"ecret(?:[_-]?key)?"), ("t", r"oken"),
        ("a", r"pi[_-]?key|ccess[_-]?key"))
    for first in (letter, letter.upper())
]
_SHAPES = [
    r"-----BEGIN[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"
    r"(?:.*?-----END[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"
    r"|(?:(?:[ \t]*(?:\r?\n|(?:\\r)?\\n))+[ \t]*(?:[A-Za-z-]+:[ \t]*[^\r\n\\]*|[A-Za-z0-9+/=]++(?![_-])))*)"
    r"(?P<k_private_key>)",
    r"sk-ant-(?<![A-Za-z0-9_-]sk-ant-)[A-Za-z0-9_-]{20,}(?P<k_anthropic_key>)",
    r"sk-(?<![A-Za-z0-9_-]sk-)(?!ant-)(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}(?P<k_openai_key>)",
    r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])(?P<k_aws_access_key_id>)",
    r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{36,}(?P<k_github_token>)",
    r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{22,}(?P<k_github_token_pat>)",
    r"xox[abeoprs]-(?<![A-Za-z0-9_-]xox[abeoprs]-)(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,}(?P<k_slack_token>)",
    r"AIza(?<![A-Za-z0-9_-]AIza)[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])(?P<k_google_api_key>)",
    r"sk_live_(?<![A-Za-z0-9_]sk_live_)[A-Za-z0-9]{16,}(?P<k_stripe_key>)",
    r"rk_live_(?<![A-Za-z0-9_]rk_live_)[A-Za-z0-9]{16,}(?P<k_stripe_key_restricted>)",
    r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?P<k_jwt>)",
    r"B(?<![A-Za-z0-9_]B)(?i:earer)[ \t]+(?P<s_bearer_token_B>[A-Za-z0-9._~+/-]{16,}=*)",
    r"b(?<![A-Za-z0-9_]b)(?i:earer)[ \t]+(?P<s_bearer_token_b>[A-Za-z0-9._~+/-]{16,}=*)",
    r"://[^\s/@:]+:" + _NOT_MASK + r"(?P<s_url_password>[^\s/@]+)@",
    *(f"{first}(?i:{rest})" + _VALUE.format(n=n) for n, (first, rest) in enumerate(_NAME_BRANCHES)),
]
_SCAN = re.compile("|".join(_SHAPES), re.ASCII | re.DOTALL)


def _kind_of(group: str) -> str:
    """`k_github_token_pat` → github-token, `s_secret_dq_3` → secret: the kind named in the mask."""
    name = group[2:]
    for kind in ("private_key", "anthropic_key", "openai_key", "aws_access_key_id", "github_token", "slack_token",
                 "google_api_key", "stripe_key", "jwt", "bearer_token", "url_password", "secret"):
        if name.startswith(kind):
            return kind.replace("_", "-")
    raise AssertionError(group)


_KIND_OF_GROUP = {name: _kind_of(name) for name in _SCAN.groupindex}

# A key whose string value is a secret whatever it looks like.
_SECRET_NAME = re.compile(r"[A-Za-z0-9_.-]*" + _NAME_WORD + r"\Z", re.ASCII | re.IGNORECASE)

# Cheap triggers over the encoded JSON line: every shape above leaves one of
# these in the line's bytes (JSON escaping only touches `"`, `\\` and control
# characters, which the triggers allow for), so a line without any is clean.
# Each branch starts with one literal byte so that the regex engine can skip
# from candidate to candidate; case-insensitive words are anchored on a rare
# letter and checked backwards.
_SEP = rb"(?:\\t|[\\\"' ])*[:=]"
_TRIGGERS = re.compile(
    rb"-(?:(?<=sk-)|(?<=xox[abeoprs]-)|----BEGIN )"
    rb"|_(?:(?<=gh[pousr]_)|(?<=github_pat_)|(?<=[sr]k_live_))"
    rb"|A(?:[KS]IA|Iza)|J(?<=eyJ)|:(?=//[^\s/@]*@)|b(?i:earer)|B(?i:earer)"
    rb"|y(?<=[kK][eE]y)" + _SEP + rb"|Y(?<=[kK][eE]Y)" + _SEP
    + rb"|k(?<=[tT][oO]k)(?i:en)" + _SEP + rb"|K(?<=[tT][oO]K)(?i:en)" + _SEP
    + rb"|w(?<=[pP][aA][sS][sS]w)(?i:(?:or)?d)" + _SEP + rb"|W(?<=[pP][aA][sS][sS]W)(?i:(?:or)?d)" + _SEP
    + rb"|c(?<=[sS][eE]c)(?i:ret)" + _SEP + rb"|C(?<=[sS][eE]C)(?i:ret)" + _SEP
)

# The envelope (SPEC §2) is metadata the recorder itself writes: never content, never scanned.
ENVELOPE_KEYS = frozenset({"type", "timestamp", "agent_version", "session_id", "cwd", "prompt_id", "git_branch"})
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_]+\Z")

# Values the format needs byte for byte: never scanned, at any depth outside a tool input.
_VERBATIM_KEYS = ENVELOPE_KEYS | {
    "role", "id", "tool_use_id", "signature", "parent_session_id", "from_session_id", "subagent_path", "media_type",
}
_OPAQUE_DATA_TYPES = frozenset({"redacted_thinking", "base64"})


# A match that ends (starts) with one of these, glued to a non-space, may hide a
# neighbour whose look-behind (look-ahead) refused that character: `…KEY-----sk-ant-…`.
_GLUE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _masker(glued: list[bool]):
    def mask(match: re.Match) -> str:
        group = match.lastgroup
        assert group is not None
        whole_start, whole_end = match.span()
        text = match.string
        if (whole_end < len(text) and text[whole_end - 1] in _GLUE and not text[whole_end].isspace()) or (
                whole_start > 0 and text[whole_start] in _GLUE and not text[whole_start - 1].isspace()):
            glued[0] = True
        masked = MASK.format(_KIND_OF_GROUP[group])
        if group.startswith("k_"):
            return masked
        start, end = match.span(group)
        return text[whole_start:start] + masked + text[end:whole_end]

    return mask


def redact_text(text: str) -> str:
    """`text` with every secret shape replaced by its mask (the same object when there is none).

    Idempotent: when a mask was glued to what follows it, the scan runs again
    (the mask now separates them) until nothing changes.
    """
    if not text:
        return text
    glued = [False]
    masked = _SCAN.sub(_masker(glued), text)
    while glued[0]:
        glued[0] = False
        masked = _SCAN.sub(_masker(glued), masked)
    return text if masked == text else masked


def may_hold_secret(line: bytes, start: int = 0) -> bool:
    """False only when the encoded record certainly holds no secret shape from `start` on (the fast path)."""
    return _TRIGGERS.search(line, start) is not None


def _payload_start(line: bytes, first_field: str | None) -> int:
    """Where the field `first_field` begins in `line`: the envelope before it is never scanned.

    An unescaped `,"key":` can only be structure (inside a JSON string every
    `"` is escaped), so its first occurrence is the field itself.
    """
    if first_field is None:
        return 0
    found = line.find(b',"' + first_field.encode() + b'":') if _PLAIN_KEY.match(first_field) else -1
    return found if found >= 0 else 0


def _is_secret_name(key: object) -> bool:
    return isinstance(key, str) and _SECRET_NAME.match(key) is not None


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


def _redact_dict(data: dict, verbatim: bool) -> dict:
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
        if isinstance(value, str) and value and _is_secret_name(key) and not _MASKED.match(value):
            new: Any = MASK.format("secret")
        else:
            new = _redact_value(value, verbatim and not (is_tool_use and key == "input"))
        if new is not value:
            if out is None:
                out = dict(data)
            out[key] = new
    return data if out is None else out


def redact_record(record: dict) -> dict:
    """The record with every secret shape masked; `record` itself (not a copy) when it has none.

    Never mutates its argument: the caller's messages are the live history.
    """
    return _redact_dict(record, True)


def encode_redacted(record: dict, first_field: str | None = None) -> tuple[dict, bytes]:
    """(the record as it goes to disk, its line): the recorder's one call.

    `first_field` names the first field after the envelope, when the caller
    knows it, so the scan starts there. The common case costs one regex
    search over the encoded fields on top of the encoding itself; only a
    line with a trigger is walked and re-encoded.
    """
    line = encode_line(record)
    if _TRIGGERS.search(line, _payload_start(line, first_field)) is None:
        return record, line
    clean = redact_record(record)
    return clean, (line if clean is record else encode_line(clean))


__all__ = ["ENVELOPE_KEYS", "MASK", "encode_redacted", "may_hold_secret", "redact_record", "redact_text"]
