"""Sessions for the picker tests: written by the library's Recorder, then dated.

A session's rows show its last update, so the tests need sessions whose update order differs from
their creation order, by more than a minute (rows show minutes). `plant` records a real exchange
through `tests.builders.write_session`, then sets the meta's `updated_ms` and the transcript's mtime to
the wanted moment (both say when the transcript was last appended to).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from evo_agent.session import SessionStore
from tests.builders import write_session

DAY_MS = 86_400_000
BASE_MS = 1_780_000_000_000  # 2026-05-28


@dataclass
class Planted:
    id: str
    prompt: str
    created_ms: int
    updated_ms: int


def plant(store: SessionStore, *, created_ms: int, updated_ms: int, prompt: str, answer: str = "done",
          branch: str | None = "main", tokens: tuple[int, int] = (1000, 50), exchanges: int = 1,
          last_prompt: str | None = None, suffix: str = "0000abcd") -> Planted:
    """A real session created at `created_ms` and last updated at `updated_ms`."""
    sid = f"{created_ms:013d}_{suffix}"
    prompts = [prompt if n == 0 else (last_prompt if n == exchanges - 1 and last_prompt else f"{prompt} #{n}")
               for n in range(exchanges)]
    write_session(store, *[(text, answer) for text in prompts], model="test-model", provider="demo", tokens=tokens,
                  session_id=sid, git_branch=branch)
    session_dir = store.sessions_dir / sid
    meta_path = session_dir / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["updated_ms"] = updated_ms
    meta_path.write_text(json.dumps(meta))
    os.utime(session_dir / "messages.jsonl", ns=(updated_ms * 1_000_000, updated_ms * 1_000_000))
    return Planted(sid, prompt, created_ms, updated_ms)


def three_out_of_order(store: SessionStore) -> list[Planted]:
    """Three sessions whose update order is not their creation order.

    Created: parser (day 0), readme (day 1), upload (day 2). Updated: upload (day 3),
    parser (day 5), readme (day 6). Newest update first: readme, parser, upload.
    """
    parser = plant(store, created_ms=BASE_MS, updated_ms=BASE_MS + 5 * DAY_MS, prompt="refactor the parser",
                   branch="feature/parser", tokens=(3000, 50), suffix="000000a1")
    readme = plant(store, created_ms=BASE_MS + DAY_MS, updated_ms=BASE_MS + 6 * DAY_MS,
                   prompt="add a README section", branch="docs", tokens=(2000, 50), suffix="000000a2",
                   exchanges=3, last_prompt="now shorten the install part", answer="Shortened it to four lines.")
    upload = plant(store, created_ms=BASE_MS + 2 * DAY_MS, updated_ms=BASE_MS + 3 * DAY_MS,
                   prompt="fix the flaky upload test", branch="main", tokens=(1000, 50), suffix="000000a3")
    return [readme, parser, upload]
