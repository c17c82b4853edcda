"""Redaction's start checks never let a secret through (SPEC §3: secrets must not reach disk).

Before RE2 is tried at a keyword's position, a rule's `StartChecks` (gitleaks_rules.start_checks) rule the place
out by a byte comparison: a word boundary where the regex begins with `\\b`, its exact first bytes, and for the
semi-generic rules an operator `=>:|?,` within (longest name + 24) bytes. A check that is wrong drops a real match.
The anchored tries run only when the text is long beside its keyword count (else one full scan is cheaper), so
each hostile spelling here sits in 5 KB of blanks on each side: the checks are what decides. Each spelling of each
rule's own sample must be found exactly where a full RE2 scan finds it: glued to word characters, beside
non-ASCII letters, after a BOM, in capitals and lower case, the name 0-21 characters from its operator with up to
3 quotes or blanks between, inside a JSON string (escaped quotes, `\\n`), in YAML and .env lines.
"""

from __future__ import annotations

import json
import random

from evo_agent.session import gitleaks_rules
from tests.redaction_corpus import full_scan_spans, raw_sample

PAD = " " * 5000
# Values the semi-generic rules take (`[a-z0-9]{32}`, `[a-f0-9]{40}`, a UUID…), for a name of their own.
VALUES = ("9f86d081884c7d659a2feaa0c55ad015", "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
          "9f86d081884c7d659a2feaa0c55ad0159f86d081884c7d659a2feaa0c55ad015",
          "123e4567-e89b-12d3-a456-426614174000", "Zx9Qw7Er5Ty3Ui1Op0AsDfGh")
OPERATORS = ("=", ">", ":::=", "||", ":", "=>", "?=", ",", ":=")


def spellings(sample: str, name: str, rng: random.Random) -> list[str]:
    gap = "x" * rng.choice((0, 1, 19, 20, 21)) + rng.choice(("", '"', " \"'", "\t\n'", "'''"))
    op = rng.choice(OPERATORS)
    return [sample, "x" + sample, "_" + sample + "y", "1" + sample, "é" + sample, sample + "é", "日本" + sample,
            "\ufeff" + sample, sample.upper(), sample.lower(), sample.swapcase(),
            f"{name}{gap}{op}{sample}", f"{name.upper()}{gap}{op} '{sample}';", f"é{name}{gap}{op}{sample}",
            json.dumps({name: sample}), json.dumps(json.dumps({name: sample})), json.dumps(f"a\n{name}={sample}\n"),
            f"{name}:\n  {sample}\n", f"export {name.upper()}=\"{sample}\"\n",
            *(f"{name}{'x' * 20}\"\" {op}{value}\n" for value in VALUES),  # the farthest operator
            *(f"{name}{'_' * 20}'\t'{op} '{value}'" for value in VALUES)]


def test_every_spelling_is_found_where_a_full_scan_finds_it():
    rng = random.Random(13)
    checked = 0
    for rule in gitleaks_rules.rule_set().rules:
        if not rule.anchors:
            continue
        for _ in range(2):
            sample = raw_sample(rule, rng)
            for name in (rng.choice(rule.anchors), max(rule.anchors, key=len), "api_key", "password"):
                for text in spellings(sample, name, rng):
                    data = gitleaks_rules.haystack(PAD + text + PAD)
                    hits = gitleaks_rules._hits_in(data.lower())
                    positions = gitleaks_rules._candidates(rule, data, hits)
                    assert positions is not None and len(positions) * gitleaks_rules._BYTES_PER_TRY <= len(data)
                    got = list(gitleaks_rules._matches(rule, data, hits))
                    assert got == full_scan_spans(rule, data), (rule.id, text[:160])
                    checked += bool(got)
    assert checked > 1000  # the control: the spellings do hold secrets the rules find
