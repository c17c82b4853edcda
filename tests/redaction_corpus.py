"""The redaction corpus shared by tests/session/test_redaction_corpus.py and benchmarks/redaction.py.

- rule samples: for every gitleaks rule, secrets synthesized from its own regex
  (a small generator walks the parsed pattern), each written in five settings:
  the rule's own shape (the whole generated match), alone on a line, `NAME=…`,
  in JSON, after a telling name;
- carrier files: realistic files a coding agent reads (tests/fixtures/redaction/,
  fake secrets only), with the secrets each one holds listed in secrets.json;
- real code: the lines of Python source files, for the false-positive rate.

A secret counts as caught when none of its text survives intact in the output.
"""

from __future__ import annotations

import json
import random
import re
import string
import sys
import sysconfig
import warnings
from dataclasses import dataclass
from pathlib import Path
from re import _constants as C  # noqa: N812 - the parser's opcodes
from re import _parser

from evo_agent.session import gitleaks_rules

FIXTURES = Path(__file__).parent / "fixtures" / "redaction"
SETTINGS = ("own shape", "alone on a line", "NAME=…", "in JSON", "after a telling name")
_PRINTABLE = [chr(c) for c in range(32, 127)]
_WORDISH = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Sample:
    source: str  # rule id, or carrier file name
    setting: str
    text: str
    secret: str


# --------------------------------------------------------------------------- a generator for regexes


class _Gen:
    def __init__(self, rng: random.Random, ignorecase: bool):
        self.rng = rng
        self.groups: dict[int, str] = {}
        self.ignorecase = ignorecase

    def charset(self, items) -> list[str]:
        negate = False
        allowed: set[str] = set()
        for op, av in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                allowed.add(chr(av))
            elif op is C.RANGE:
                allowed.update(chr(c) for c in range(av[0], av[1] + 1))
            elif op is C.CATEGORY:
                allowed.update(self.category(av))
        if negate:
            return [c for c in _PRINTABLE if c not in allowed] or ["x"]
        return sorted(allowed) or ["x"]

    @staticmethod
    def category(cat) -> list[str]:
        name = str(cat)
        if "DIGIT" in name:
            chars = list(string.digits)
        elif "SPACE" in name:
            chars = [" "]
        elif "WORD" in name:
            chars = list(_WORDISH + "_")
        else:
            chars = list(_WORDISH)
        if "NOT" in name:
            return [c for c in _PRINTABLE if c not in chars and c not in " \t"] or ["x"]
        return chars

    def pick(self, chars: list[str]) -> str:
        # Secrets are mostly alphanumeric: prefer those, so that entropy and shapes look real.
        good = [c for c in chars if c.isalnum()]
        return self.rng.choice(good if good and self.rng.random() < 0.97 else chars)

    def emit(self, pattern) -> str:
        out = []
        for op, av in pattern:
            out.append(self.one(op, av))
        return "".join(out)

    def one(self, op, av) -> str:
        rng = self.rng
        if op is C.LITERAL:
            return chr(av)
        if op is C.NOT_LITERAL:
            return self.pick([c for c in _WORDISH if ord(c) != av])
        if op is C.ANY:
            return "." if rng.random() < 0.5 else self.pick(list(_WORDISH))
        if op is C.IN:
            return self.pick(self.charset(av))
        if op is C.BRANCH:
            return self.emit(rng.choice(av[1]))
        if op is C.SUBPATTERN:
            group, _add, _del, sub = av
            text = self.emit(sub)
            if group:
                self.groups[group] = text
            return text
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            hi = lo + 12 if hi is C.MAXREPEAT else hi
            if lo == 0 and hi <= 60 and self.rng.random() < 0.6:
                count = min(hi, self.rng.choice([0, 0, 1]))  # optional filler: mostly none
            else:
                count = rng.randint(lo, min(hi, lo + 12))
            return "".join(self.emit(sub) for _ in range(count))
        if op is C.GROUPREF:
            return self.groups.get(av, "")
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            return ""
        if op is C.CATEGORY:
            return self.pick(self.category(av))
        raise ValueError(f"cannot generate {op}")


# Python's parser reads RE2's syntax but for these: POSIX classes, `\\z`, and `(?i)` after the start.
_POSIX = {"alnum": "A-Za-z0-9", "alpha": "A-Za-z", "digit": "0-9", "xdigit": "0-9A-Fa-f", "upper": "A-Z",
          "lower": "a-z", "space": r"\t\n\v\f\r ", "word": r"\w", "punct": r"!-/:-@\[-`{-~"}


def full_scan_spans(rule: gitleaks_rules.Rule, data: bytes) -> list[list[tuple[int, int]]]:
    """Every match of `rule` in `data` by the binding's own `finditer` over the whole text, as `_matches` yields
    them: the whole match's span, then each group's ((-1, -1) for a group that took no part)."""
    groups = range(rule.pattern.groups + 1)
    return [[m.span(g) for g in groups] for m in rule.pattern.finditer(data)]


def parsed(rule: gitleaks_rules.Rule):
    """The rule's regex parsed by Python's `re` parser, to generate text from (never to match with: RE2 does that).

    Flag groups are dropped (the generator writes literals as they are spelled), POSIX classes spelled out.
    """
    source = re.sub(r"\(\?[imsU-]+\)", "", rule.source)
    source = re.sub(r"\(\?[imsU-]+:", "(?:", source)
    source = re.sub(r"\[:([a-z]+):\]", lambda m: _POSIX[m.group(1)], source).replace(r"\z", r"\Z")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # `[` and doubled `&|~-` in a class: literals, as in RE2
        return _parser.parse(source, re.ASCII)


def raw_sample(rule: gitleaks_rules.Rule, rng: random.Random) -> str:
    """A text generated from the rule's regex, with a keyword in front when it holds none (no other check)."""
    text = _Gen(rng, False).emit(parsed(rule))
    if rule.keywords and not any(kw in text.lower() for kw in rule.keywords):
        text = f"{rule.keywords[0]}: {text}"
    return text + "\n"


def synthesize(rule: gitleaks_rules.Rule, rng: random.Random, tries: int = 60) -> tuple[str, str] | None:
    """(a text the rule matches, its secret), both passing the rule's entropy, digit and allowlist checks."""
    tree = parsed(rule)
    for _ in range(tries):
        text = _Gen(rng, False).emit(tree)
        if rule.keywords and not any(kw in text.lower() for kw in rule.keywords):
            text = f"{rule.keywords[0]}: {text}"  # the context the rule's keywords expect (facebook-access-token)
        hits = [h for h in gitleaks_rules.find(text + "\n") if h.rule_id == rule.id]
        if hits:
            secret = text[hits[0].start:hits[0].end]
            if len(secret) >= 6:
                return text, secret
    return None


_TELLING = ("token", "api key", "secret", "password", "key")


def _name_of(rule_id: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", rule_id.upper()).strip("_")


def in_settings(rule_id: str, text: str, secret: str, rng: random.Random) -> list[Sample]:
    name = _name_of(rule_id)
    return [
        Sample(rule_id, SETTINGS[0], text, secret),
        Sample(rule_id, SETTINGS[1], f"output:\n{secret}\n", secret),
        Sample(rule_id, SETTINGS[2], f"{name}={secret}\n", secret),
        Sample(rule_id, SETTINGS[3], json.dumps({"id": 7, rule_id.replace("-", "_"): secret}) + "\n", secret),
        Sample(rule_id, SETTINGS[4], f"here is my {rng.choice(_TELLING)}: {secret}\n", secret),
    ]


def rule_samples(per_rule: int = 3, seed: int = 17) -> list[Sample]:
    """`per_rule` synthesized secrets for every applicable gitleaks rule, each in the five settings."""
    rng = random.Random(seed)
    out: list[Sample] = []
    for rule in gitleaks_rules.rule_set().rules:
        for _ in range(per_rule):
            made = synthesize(rule, rng)
            if made is not None:
                out += in_settings(rule.id, made[0], made[1], rng)
    return out


def carrier_samples() -> list[Sample]:
    """One sample per secret in the carrier files: the whole file is the text."""
    expected = json.loads((FIXTURES / "secrets.json").read_text())
    out = []
    for name, secrets in sorted(expected.items()):
        text = (FIXTURES / name).read_text()
        for secret in secrets:
            assert secret in text, (name, secret)
            out.append(Sample(name, "carrier", text, secret))
    return out


def caught(masked: str, secret: str) -> bool:
    return secret not in masked


# --------------------------------------------------------------------------- real code


def python_sources(include_site_packages: bool = True) -> list[Path]:
    """The stdlib's .py files (tests and lib2to3 fixtures aside) and, optionally, the venv's site-packages."""
    roots = [Path(sysconfig.get_paths()["stdlib"])]
    if include_site_packages:
        roots.append(Path(sysconfig.get_paths()["purelib"]))
    files: list[Path] = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            rel = str(path.relative_to(root))
            if root == roots[0] and ("site-packages" in rel or "/test" in "/" + rel or "lib2to3/tests" in rel):
                continue
            files.append(path)
    return files


def masked_lines(text: str, masked: str) -> int:
    """How many lines of `text` redaction changed."""
    if masked == text:
        return 0
    return sum(1 for line in masked.splitlines() if "[REDACTED:" in line)


__all__ = ["SETTINGS", "Sample", "caught", "carrier_samples", "in_settings", "masked_lines", "python_sources",
           "raw_sample", "rule_samples", "synthesize"]

if __name__ == "__main__":  # pragma: no cover - a quick look
    samples = rule_samples(1)
    print(len(samples), file=sys.stderr)
