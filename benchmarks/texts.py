"""Generated text for the benchmarks' inputs: real source code (quotes, backslashes, newlines) with a little CJK."""

from __future__ import annotations

import os
import random
from datetime import timedelta, timezone
from pathlib import Path

TZ = timezone(timedelta(hours=8))  # the generated records' local time, as SPEC §2's example


_CJK = ("修复上传测试中偶发失败的问题，并补充一个回归测试。", "会话持久化：追加写入、压缩边界、侧链文件。",
        "为什么恢复之后少了一条工具结果？", "请把这个函数拆成两个，保持行为不变。")


def text_pool() -> str:
    """~1.5 MB of real source text (quotes, backslashes, newlines) with a little CJK."""
    libdir = Path(os.__file__).parent
    names = ["argparse.py", "typing.py", "subprocess.py", "tarfile.py", "inspect.py", "pathlib.py",
             "datetime.py", "collections/__init__.py", "json/decoder.py", "asyncio/base_events.py",
             "email/message.py", "logging/__init__.py", "unittest/case.py", "zipfile.py", "shutil.py"]
    parts = []
    for name in names:
        try:
            parts.append((libdir / name).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    text = "".join(parts) or ("def f(x):\n    return \"x\" * 2  # \\ tab\t\n" * 40000)
    rng = random.Random(7)
    chunks = [text[i:i + 4000] for i in range(0, len(text), 4000)]
    for i in range(0, len(chunks), 9):
        chunks[i] = chunks[i] + "\n" + rng.choice(_CJK) + "\n"
    return "".join(chunks)


class Texts:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.pool = text_pool()

    def take(self, n: int) -> str:
        start = self.rng.randrange(0, len(self.pool) - n - 1)
        return self.pool[start:start + n]

    def loguniform(self, lo: int, hi: int) -> int:
        return int(lo * (hi / lo) ** self.rng.random())


def dense_env(size: int, kind: str, seed: int = 1) -> str:
    """`size` characters of `.env`-style text, a candidate of gitleaks' generic rule on every line or closer:
    the densest redaction inputs we know.

    "dropped": `KEY_i=value…` and `SECRET_i='xxx…'` lines (~27 bytes), values the entropy floor drops;
    "credentials": `API_KEY_i=<16-40 random letters and digits>` lines (~33 bytes), nearly every one a secret;
    "packed": `key=<12 distinct letters and digits, one a digit>;` 100 to a line (17 bytes a secret).
    """
    import string

    rng = random.Random(seed)
    names = ("API_KEY", "AUTH_TOKEN", "DB_PASSWORD", "SECRET", "ACCESS_KEY", "CREDENTIALS")
    alphabet = string.ascii_letters + string.digits
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        if kind == "packed":
            value = "".join(rng.sample(alphabet[:52], 11)) + rng.choice(string.digits)
            part = f"key={value};" + ("\n" if i % 100 == 99 else "")
        elif kind == "credentials":
            value = "".join(rng.choice(alphabet) for _ in range(rng.randrange(16, 40)))
            part = f"{rng.choice(names)}_{i}={value}\n"
        elif i % 2 == 0:
            part = f"KEY_{i}=value{rng.randrange(10 ** 6)}abc\n"
        else:
            part = f"SECRET_{i}='{'x' * rng.randrange(10, 20)}'\n"
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)[:size]
