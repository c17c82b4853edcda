#!/usr/bin/env python3
"""Redaction's output over a fixed corpus, as one digest: proof that a speed-up masks exactly what main masks.

    python benchmarks/redaction_digest.py --corpus /tmp/corpus.json            # this checkout
    python benchmarks/redaction_digest.py --corpus /tmp/corpus.json --src /work/main/src   # another one

The corpus is built once and kept in `--corpus` (built by the first run, read by the next), so that both
sides redact the very same texts whatever their code: real Python (the stdlib in 1.5 KB pieces), the
docs and README, the carrier files of tests/fixtures/redaction, texts generated from every gitleaks rule's
regex (tests/redaction_corpus.py's `raw_sample`, in its five settings), and generated texts that mix
prose, the rules' literals and anchors in random case, assignment operators, quotes, random tokens,
non-ASCII characters and spliced samples, of 20 characters to 40 KB.

Each text goes through `redact_text` and, as a user record's content, through `encode_redacted` (the
recorder's call: the record-level fast path, the walk, the re-encode), twice: with no credentials in the
environment and with a fake one (`use_environment`), whose values the corpus also holds in their
reversed and base64 forms. Printed: how many texts, how many each pass masked, a SHA-256 per pass and
of everything; two checkouts that print the same last line write the same bytes for every text.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE_ENV = {"DEPLOY_TOKEN": "Zq8vT3nLw0pXr7", "DATABASE_URL": "postgresql://app:s3cretPw9x@db.internal/main",
            "MY_SERVICE_PASSWORD": "hunter2-but-longer", "HOME": "/home/someone", "PATH": "/usr/bin:/bin"}
_PROSE = str.split("I think they changed the way the right panel handles a resize, so could you ask the layout code why "
          "the sidebar jumps when the window gets narrow? Check whether the height we compute includes the "
          "border. The key bindings for page up and page down seem to skip two rows at a time. Thanks.")
_OPS = ("=", ": ", " = ", ":=", "=>", " => ", '": "', "='", '="', " ", "\t", ":\n", ",", "?=", "||", " -p", "@", "/")
_ALPHABETS = ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
              "0123456789abcdef", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=",
              "éü中文ß€ abc123", "._~+/-:@")


def _random_token(rng: random.Random) -> str:
    alphabet = rng.choice(_ALPHABETS)
    return "".join(rng.choice(alphabet) for _ in range(rng.choice((3, 8, 16, 20, 24, 32, 36, 40, 64, 90))))


def _recase(rng: random.Random, word: str) -> str:
    how = rng.random()
    if how < 0.5:
        return word
    if how < 0.7:
        return word.upper()
    return "".join(ch.upper() if rng.random() < 0.5 else ch for ch in word)


def _generated(rng: random.Random, words: list[str], samples: list[str], size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        pick = rng.random()
        if pick < 0.35:
            piece = " ".join(rng.choice(_PROSE) for _ in range(rng.randint(1, 12)))
        elif pick < 0.7:
            piece = (_recase(rng, rng.choice(words)) + rng.choice(("", "_", "-", ".", "s", "_key", "KEY")) +
                     rng.choice(_OPS) + rng.choice(("", '"', "'", '\\"')) + _random_token(rng))
        elif pick < 0.8:
            piece = rng.choice(samples)
        elif pick < 0.9:
            piece = _random_token(rng)
        else:
            value = rng.choice([v for v in FAKE_ENV.values() if len(v) >= 8])
            piece = rng.choice((value, value[::-1], base64.b64encode(value.encode()).decode(), "x" + value + "y"))
        parts.append(piece)
        parts.append(rng.choice((" ", "\n", "\n\n", "; ", ", ", "\t", "", "\r\n")))
        length += len(piece) + 1
    return "".join(parts)


# What gitleaks' allowlists let through (the global one and generic-api-key's), as values and as lines around
# a candidate: the dense `.env` texts below put one of these beside most candidates.
_ALLOWED_VALUES = ("$HOME_DIR", "${API_TOKEN}", "$1", "${12}", "{{ .Values.token }}", "${{ secrets.NPM_TOKEN }}",
                   "%APPDATA%", "@SECRET_KEY@", "%s", "{1}", "/usr/local/bin/tool-2", "/Users/ada/keys/id.pem",
                   "true", "False", "NULL", "aaaaaaaaaaaa", "************", "..........", "public_key_0001",
                   "example_token_1234", "changeme123456", "abcdefghij1234", "0000000000001")
_ALLOWED_LINES = ("--mount=type=secret,id=npm_token=", 'LICENSE = "', 'SRC_URI_token = "', "import { token } from ",
                  "access_id", "keyVaultToStoreSecrets", "author_key", "foreign_key", "X-MS-Exchange-Organization-Auth",
                  "turkey", "monkey", "api_version", "csrf_token")


def _dense_env(rng: random.Random, words: list[str], lines: int) -> str:
    """`.env`-style lines, a gitleaks candidate on most: names, operators, values random or allowed, contexts."""
    out: list[str] = []
    for i in range(lines):
        name = _recase(rng, rng.choice(words + ["API_KEY", "token", "secret", "auth", "password", "credential"]))
        pick = rng.random()
        value = (rng.choice(_ALLOWED_VALUES) if pick < 0.4 else
                 rng.choice(_ALLOWED_VALUES) + _random_token(rng) if pick < 0.5 else _random_token(rng))
        line = f"{name}_{i}{rng.choice(_OPS)}{rng.choice(('', chr(34), chr(39)))}{value}"
        if rng.random() < 0.25:
            line = rng.choice(_ALLOWED_LINES) + rng.choice(("", " ", "\n")) + line
        out.append(line + rng.choice(("", chr(34), chr(39), ";")))
    return "\n".join(out) + "\n"


def build_corpus() -> list[str]:
    """The texts, in a fixed order (seeded: the same list on every machine with the same stdlib)."""
    from evo_agent.session import gitleaks_rules
    from evo_agent.session.redact_shapes import ANCHORS
    from tests.redaction_corpus import FIXTURES, in_settings, raw_sample

    rng = random.Random(30)
    texts: list[str] = []
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py"))[:120]:  # the top-level modules: ~3,000 pieces of real code
        source = path.read_text(encoding="utf-8", errors="replace")
        texts += [source[i:i + 1536] for i in range(0, len(source), 1536)]
    for path in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        doc = path.read_text(encoding="utf-8")
        texts += [doc[i:i + 4096] for i in range(0, len(doc), 4096)]
    texts += [(FIXTURES / name).read_text() for name in sorted(p.name for p in FIXTURES.iterdir() if p.is_file())]
    samples: list[str] = []
    for rule in gitleaks_rules.rule_set().rules:
        for _ in range(2):
            raw = raw_sample(rule, rng)
            samples.append(raw.strip())
            texts += [s.text for s in in_settings(rule.id, raw, raw.strip(), rng)]
    words = sorted(gitleaks_rules.literals() | set(ANCHORS))
    for size in [20, 60, 200, 1000, 1000, 1000, 3000] * 180 + [17000, 40000] * 3:
        texts.append(_generated(rng, words, samples, size))
    texts.append(" ".join(rng.choice(_PROSE) for _ in range(40)))  # prose with no secret at all
    texts += [_dense_env(rng, words, n) for n in [3, 10, 40, 200] * 40 + [2000, 2000]]
    return texts


def _digest_pass(texts: list[str]) -> tuple[int, str]:
    """(how many texts changed, SHA-256 of every output): `redact_text` and the recorder's `encode_redacted`."""
    from evo_agent.session.redact import encode_redacted, redact_text

    digest = hashlib.sha256()
    masked = 0
    envelope = {"type": "user", "timestamp": "2026-12-04T00:00:00.000Z", "agent_version": "0.1.0",
                "session_id": "00000000-0000-0000-0000-000000000000", "cwd": "/tmp", "git_branch": "main"}
    for text in texts:
        out = redact_text(text)
        masked += out != text
        _record, line = encode_redacted({**envelope, "message": {"role": "user", "content": text}}, "message")
        digest.update(out.encode("utf-8", "surrogatepass") + b"\0" + line + b"\0")
    return masked, digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src directory to redact with")
    ap.add_argument("--corpus", help="a JSON file of texts: read when it exists, else built and written there")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, args.src)
    if args.corpus and Path(args.corpus).exists():
        texts = json.loads(Path(args.corpus).read_text(encoding="utf-8"))
    else:
        texts = build_corpus()
        if args.corpus:
            Path(args.corpus).write_text(json.dumps(texts), encoding="utf-8")
    from evo_agent.session import redact

    print(f"src {args.src} ({redact.__file__})")
    corpus_sha = hashlib.sha256(json.dumps(texts).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    print(f"{len(texts)} texts, {sum(map(len, texts)):,} characters, corpus {corpus_sha}")
    total = hashlib.sha256()
    for name, environ in (("no credentials", {}), ("fake credentials", FAKE_ENV)):
        redact.use_environment(environ)
        t0 = time.process_time()
        masked, hexdigest = _digest_pass(texts)
        print(f"{name}: {masked} masked, {time.process_time() - t0:.2f} s CPU, sha256 {hexdigest}")
        total.update(hexdigest.encode())
    redact.use_environment(None)
    print(f"digest {total.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
