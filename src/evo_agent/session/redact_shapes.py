"""evo-agent's own secret shapes: what it finds beyond (or better than) gitleaks' rules.

gitleaks' vendored rules (gitleaks_rules.py) know vendor token formats; these
shapes know where credentials sit in the files and commands a coding agent
sees: whole PEM blocks (and base64 ones, as in kubeconfig `client-key-data`),
URL passwords (`redis://:pw@host` too), connection strings, `NAME=value`
assignments and JSON fields with telling names (`…password`, `…secret`,
`…token`, `…api_key`, `…_KEY`, `…_PASS`, `…_PWD`; quoted, unquoted, escaped
`\\"password\\": \\"…\\"`, or cut before the closing quote), base64
`user:pass` (docker `"auth"`, `.npmrc` `_auth`, `Authorization: Basic`, git
`extraheader`), `.netrc` `password x`, `mysql -pPASS`.

Each branch of one regex names its kind in its group: a group `k_<kind>` masks
the whole match, `s_<kind>…` only that group. `find_shapes` yields the spans
after the plausibility checks that keep code (`ENV_API_KEY = "ANTHROPIC_API_KEY"`,
Pygments' `Token: "#f8f8f2"`, `password = "%s"`) unmasked.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from functools import lru_cache

from .lazyre import lazy_re

MASKED = lazy_re(r"\[REDACTED:[a-z0-9-]+\]")
_NOT_MASK = r"(?!\[REDACTED:[a-z0-9-]+\])"

# name=value in .env, YAML, JSON (plain or escaped), shell and code.
_VALUE = (r"(?:\\?[\"'])?[ \t]*(?::=|=|:)(?!=)[ \t]*"
          r"(?:\\\"" + _NOT_MASK + r"(?P<s_secret_esc_{n}>(?:[^\"\\\r\n]|\\[^\"\r\n])+)\\\""
          r"|\"" + _NOT_MASK + r"(?P<s_secret_dq_{n}>(?:[^\"\\\r\n]|\\[^\r\n])+)\""
          r"|'" + _NOT_MASK + r"(?P<s_secret_sq_{n}>[^'\r\n]+)'"
          # a quoted value cut before its closing quote: one token up to the end of the line
          r"|[\"']" + _NOT_MASK + r"(?P<s_secret_cut_{n}>[^\s\"'\\(),;]+)(?=[\r\n]|\Z)"
          r"|(?=[^\s\"'`,;&()\[\]{{}}<>]*[0-9])(?P<s_secret_{n}>[^\s\"'`,;&()\[\]{{}}<>]{{4,}}+)(?![(\[])"
          # no digit: still a secret when it is 20+ base64 characters of mixed case (an AWS secret key)
          r"|(?=[A-Za-z+/]*[a-z])(?=[A-Za-z+/]*[A-Z])(?=[A-Za-z]{{32}}|[A-Za-z]*[+/=])"
          r"(?P<s_secret_b64_{n}>[A-Za-z+/]{{20,}}+={{0,2}})"
          r"(?![^\s\"'`,;&()\[\]{{}}<>]))")

# Telling names, split by their first letter in either case so that every branch starts with a
# literal (the engine then skips from candidate to candidate); any prefix may come before them.
_NAME_BRANCHES = [
    (first, rest) for letter, rest in (
        ("p", r"assw(?:or)?d|rivate[_-]?key"), ("s", r"ecret(?:[_-]?key)?"), ("t", r"oken"),
        ("a", r"pi[_-]?key|ccess[_-]?key"))
    for first in (letter, letter.upper())
]
_NAME_BRANCHES += [
    ("_", r"(?<=[A-Z0-9]_)(?-i:KEY)(?![A-Za-z0-9_])"),  # AWS_KEY, STRIPE_SECRET_KEY, MY_KEY (upper case only)
    ("_", r"(?<=[A-Za-z0-9]_)(?:pass|pwd)(?![A-Za-z0-9_])"),  # DB_PASS, smtp_pwd (any case)
]

_B64 = r"[A-Za-z0-9+/]{8,}={0,2}"
SHAPES = [
    r"-----BEGIN[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"
    r"(?:.*?-----END[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"
    r"|(?:(?:[ \t]*(?:\r?\n|(?:\\r)?\\n))+[ \t]*(?:[A-Za-z-]+:[ \t]*[^\r\n\\]*|[A-Za-z0-9+/=]++(?![_-])))*)"
    r"(?P<k_private_key>)",
    r"LS0tLS1CRUdJTi(?<![A-Za-z0-9+/]LS0tLS1CRUdJTi)[A-Za-z0-9+/]*={0,2}(?P<k_private_key_b64>)",
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
    # base64 user:pass (checked by decoding): Authorization: Basic, git extraheader, docker "auth", .npmrc _auth
    r"B(?<![A-Za-z0-9_]B)(?i:asic)[ \t]+(?P<s_basic_auth_B>" + _B64 + r")(?![A-Za-z0-9+/=])",
    r"b(?<![A-Za-z0-9_]b)(?i:asic)[ \t]+(?P<s_basic_auth_b>" + _B64 + r")(?![A-Za-z0-9+/=])",
    r"\"(?<![A-Za-z0-9_]\")auth\\?\"[ \t]*:[ \t]*\\?\"(?P<s_basic_auth_json>" + _B64 + r")\\?\"",
    r"_auth[ \t]*=[ \t]*[\"']?(?P<s_basic_auth_npmrc>" + _B64 + r")(?![A-Za-z0-9+/=])",
    r"d(?<![A-Za-z0-9_]d)iscord(?:app)?\.com/api/webhooks/[0-9]+/(?P<s_discord_webhook>[A-Za-z0-9_-]{20,})",
    r"://[^\s/@:]*:" + _NOT_MASK + r"(?P<s_url_password>[^\s/@]+)@",
    # .netrc: `machine h login u password p`, or a line `password p` (checked: alone on its line)
    r"l(?<![A-Za-z0-9_]l)ogin[ \t]+\S+[ \t]+password[ \t]+" + _NOT_MASK + r"(?P<s_netrc_password>\S+)",
    r"p(?<![A-Za-z0-9_]p)assword[ \t]+" + _NOT_MASK + r"(?P<s_netrc_password_line>\S+)[ \t]*(?=\r?\n|\Z)",
    # mysql -pPASS (the password glued to -p), mysqldump, mysqladmin, mariadb
    r"m(?<![A-Za-z0-9_]m)(?:ysql(?:dump|admin)?|ariadb)\b[^\r\n|;&]*?[ \t]-p(?P<s_mysql_password>[^\s'\"-][^\s'\"]*"
    r"|'[^'\r\n]+'|\"[^\"\r\n]+\")",
    # One group of names (each branch starts with a literal) before one value: compiling ten copies of
    # the value pattern cost ~100 ms at first use. The `…_KEY` names are captured to be checked harder.
    "(?:" + "|".join(f"{first}(?i:{rest})" for first, rest in _NAME_BRANCHES[:-2])
    + f"|(?P<n_key>_(?i:{_NAME_BRANCHES[-2][1]}))|_(?i:{_NAME_BRANCHES[-1][1]}))" + _VALUE.format(n=0),
]


@lru_cache(maxsize=1)
def scan_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    """(the shapes as one regex, the kind each masking group names), compiled at first use (~30 ms)."""
    scan = re.compile("|".join(SHAPES), re.ASCII | re.DOTALL)
    return scan, {name: _kind_of(name) for name in scan.groupindex if name[:2] in ("k_", "s_")}

_KINDS = ("private_key", "anthropic_key", "openai_key", "aws_access_key_id", "github_token", "slack_token",
          "google_api_key", "stripe_key", "jwt", "bearer_token", "basic_auth", "url_password", "netrc_password",
          "mysql_password", "discord_webhook", "secret")


def _kind_of(group: str) -> str:
    """`k_github_token_pat` → github-token, `s_secret_dq_3` → secret: the kind named in the mask."""
    name = group[2:]
    for kind in _KINDS:
        if name.startswith(kind):
            return kind.replace("_", "-")
    raise AssertionError(group)



# --------------------------------------------------------------------------- plausibility

# gitleaks' global allowlist says these are not secrets (placeholders, variables, booleans).
_NOT_A_VALUE = lazy_re(
    r"(?i:true|false|null|none|nil|undefined)"
    r"|(?i:a+|b+|c+|d+|e+|f+|x+|\*+|\.+|-+|_+|=+)"
    r"|\$(?:\d+|\{\d+\}|[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\})"
    r"|\{\{.*\}\}|\$\{\{.*\}\}|%[A-Za-z_]+%|@[A-Za-z_]+@|<[^<>]+>|\{\d{0,2}\}|\{[A-Za-z_][A-Za-z0-9_.]*\}"
    r"|%[-+#0 ]?[bcdeEfFgGoOpqstTUvxXr]|%\([A-Za-z_]+\)[sdr]"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # an environment variable's name: ENV_API_KEY = "ANTHROPIC_API_KEY"
    r"|[a-z_]+(?:\.[a-z_]+)+"  # a dotted attribute or setting name: token = "auth.token"
    r"|(?:(?:[a-z]+:)?#[0-9A-Fa-f]{3,8}|bold|italic|underline|no[a-z]+|bg:|border:|roman|sans|mono)"
    r"(?:[ \t]+(?:(?:[a-z]+:)?#[0-9A-Fa-f]{3,8}|bold|italic|underline|no[a-z]+|bg:|border:|roman|sans|mono))*"
    r"|/(?:bin|etc|home|opt|tmp|usr|var|run|dev|proc)/[\w ./-]+",  # a path, not a password (a Pygments color above)
    re.ASCII)


_PLACEHOLDER = lazy_re(r"%[-+#0 ]?[0-9.]*[sdrfxX]|%\([A-Za-z_]+\)|\{[A-Za-z0-9_.]*\}", re.ASCII)
_DOTTED_NAME = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", re.ASCII)
_WORD = lazy_re(r"[A-Za-z]+[.,:;!?]?", re.ASCII)


def plausible_value(value: str) -> bool:
    """False for what a telling name is often given in code and config but is no secret."""
    stripped = value.strip()
    return (any(ch.isalnum() for ch in stripped) and not MASKED.search(value) and value[0] not in " ,);%"
            and not stripped.startswith("+ ")
            and _NOT_A_VALUE.fullmatch(stripped) is None and _PLACEHOLDER.search(stripped) is None)


_TYPE_NAMES = frozenset({"str", "string", "bytes", "int", "integer", "bool", "boolean", "float", "number", "object",
                         "any", "optional", "text", "secret", "password", "token"})
_REGEX_LIKE = lazy_re(r"\[\^?[^\]]*[a-zA-Z0-9]-[a-zA-Z0-9][^\]]*\][*+?{]|\\[dwsbDWS]|\(\?[:=!<P]", re.ASCII)
_SNAKE_NAME = lazy_re(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", re.ASCII)


def plausible_named_value(name: str, value: str) -> bool:
    """`plausible_value`, and not the name itself (`TOKEN = "token"`, `token: "Token"`), a type, or a regex."""
    folded = value.strip().lower().replace("-", "_")
    return (plausible_value(value) and folded not in name.lower().replace("-", "_") and folded not in _TYPE_NAMES
            and _REGEX_LIKE.search(value) is None)


def is_code_name(value: str) -> bool:
    """`win32api.RegEnumKey`, `x509_safe_environment_headers`: names in code, not credentials.

    Asked of every generic secret: a dotted name has a `.` and a snake_case one a `_`, looked for first (C
    calls), so a token with neither is not tried by either regex (a dense MB of `key=…;` has 60,000).
    """
    if "." in value and _DOTTED_NAME.fullmatch(value) is not None:
        return True
    # snake_case words, each with at most 3 digits (x509_safe_headers; not live_pub_80d1469ee8105…)
    return "_" in value and _SNAKE_NAME.fullmatch(value) is not None and all(
        sum(ch.isdigit() for ch in part) <= 3 for part in value.split("_"))


def plausible_key_value(value: str) -> bool:
    """A value named only `…_KEY` (SORT_KEY, CACHE_KEY…) must look random: 8+ characters, a digit or mixed case."""
    return (len(value) >= 8 and " " not in value and plausible_value(value)
            and (any(ch.isdigit() for ch in value) or (value.lower() != value and value.upper() != value)))


def is_dotted_name(value: str) -> bool:
    """`win32api.RegEnumKey`, `settings.SECRET_KEY`: code, not a credential."""
    return _DOTTED_NAME.fullmatch(value) is not None


def _basic_pair(b64: str) -> bool:
    """True when `b64` decodes to printable `user:password` (the shape of every Basic credential)."""
    try:
        raw = base64.b64decode(b64 + "=" * (-len(b64) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return ":" in text and text.isprintable() and len(text) >= 3


def _b64_private_key(b64: str) -> bool:
    """True when `b64` is a base64 PEM private key (kubeconfig `client-key-data`), not a certificate."""
    head = b64[:96]
    try:
        decoded = base64.b64decode(head[: len(head) - len(head) % 4], validate=True)
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in decoded


def _name_start(text: str, start: int) -> int:
    """Where the identifier that ends in the matched name word begins (`GRANT_TYPE_REFRESH_` + `TOKEN`)."""
    i = start
    while i > 0 and start - i < 80 and (text[i - 1].isascii() and (text[i - 1].isalnum() or text[i - 1] in "_.-")):
        i -= 1
    return i


def _alone_on_line(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    return text[line_start:start].strip() == ""


# Where a match of SCAN can begin (lower case): every branch starts with one of these, so the
# regex is tried only there (`_matches`) instead of at every position (~0.4 µs per byte). redact.py
# finds them in the same Aho-Corasick pass as gitleaks' literals.
ANCHORS = ("-----begin", "ls0tls1crudjt", "sk-", "sk_live_", "rk_live_", "akia", "asia", "ghp_", "gho_", "ghu_",
           "ghs_", "ghr_", "github_pat_", "xox", "aiza", "eyj", "bearer", "basic", '"auth', "_auth", "discord", "://",
           "login", "mysql", "mariadb", "passw", "private", "secret", "token", "api", "access", "_key", "_pass", "_pwd")


def _matches(scan: re.Pattern[str], text: str, candidates: list[int]) -> Iterator[re.Match[str]]:
    """What `scan.finditer(text)` yields, trying the regex only at `candidates` (sorted positions where an
    anchor begins, ASCII case-insensitively)."""
    end = 0
    for pos in candidates:
        if pos < end:
            continue
        match = scan.match(text, pos)
        if match is not None:
            end = max(match.end(), pos + 1)
            yield match


def find_shapes(text: str, candidates: list[int]) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of every secret these shapes find in `text`; `candidates`: where an anchor begins."""
    if not candidates:  # no shape can begin anywhere: nothing to compile (~10 ms) or try
        return
    scan, kind_of_group = scan_pattern()
    for match in _matches(scan, text, candidates):
        group = match.lastgroup
        assert group is not None
        kind = kind_of_group[group]
        if group.startswith("k_"):
            if group == "k_private_key_b64" and not _b64_private_key(match.group()):
                continue
            yield match.start(), match.end(), kind
            continue
        start, end = match.span(group)
        value = match.group(group)
        if kind == "secret":
            name = text[_name_start(text, match.start()):start]
            if not (plausible_key_value(value) if match.group("n_key") else plausible_named_value(name, value)):
                continue
        if kind == "basic-auth" and not _basic_pair(value):
            continue
        if kind in ("netrc-password", "mysql-password"):
            if not plausible_value(value.strip("'\"")):
                continue
            if group == "s_netrc_password_line" and (not _alone_on_line(text, match.start()) or _WORD.fullmatch(value)):
                continue  # `password x` alone on its line, and not a word of prose ("password combination.")
        yield start, end, kind


__all__ = ["MASKED", "find_shapes", "scan_pattern", "is_dotted_name", "plausible_value"]
