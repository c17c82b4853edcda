"""Sessions for the `sessions` subcommand tests, written by the session library as the agent writes them.

`rich_session` holds one of everything `show` and the exports render: text,
thinking, tool calls with results (one an error, one never answered), a
subagent run with its own tool call, a compaction, and a resume of it all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.builders import quiet_store

HOSTILE = "</script><script>alert(1)</script> <img src=x onerror=alert(2)> & \x1b[31mred\x1b[0m"


@dataclass
class Rich:
    source: str  # the session with everything in it
    resumed: str  # a resume of it, with one more turn
    sidechain: str  # the subagent's file, relative to the source's directory


def rich_session(project: Path) -> Rich:
    store = quiet_store(project)
    rec = store.create(model="claude-sonnet-4-5", provider="anthropic")
    rec.prompt_id = "turn-1"
    rec.user({"role": "user", "content": "Find the flaky upload test and explain it"})
    rec.assistant({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Search for the test first.", "signature": "c2ln"},
        {"type": "text", "text": "Let me look for it.\n\n```sh\ngrep -r upload tests/\n```"},
        {"type": "tool_use", "id": "toolu_01", "name": "grep", "input": {"pattern": "def test_upload", "path": "tests"}},
    ]}, input_tokens=1200, output_tokens=64, cache_read_input_tokens=800)
    rec.user({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01",
         "content": "tests/test_upload.py:12:def test_upload_retries():\n" + "\n".join(f"line {i}" for i in range(1, 15))},
    ]})
    rec.assistant({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_02", "name": "bash", "input": {"command": "cat tests/missing.py"}},
        {"type": "tool_use", "id": "toolu_03", "name": "task",
         "input": {"description": "read the test", "prompt": "Explain test_upload_retries", "subagent_type": "explore"}},
    ]}, input_tokens=1400, output_tokens=80)
    rec.user({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": "cat: tests/missing.py: No such file or directory",
         "is_error": True},
    ]})
    side = rec.start_subagent("explore", "toolu_03", model="claude-sonnet-4-5", provider="anthropic")
    side.user({"role": "user", "content": "Explain test_upload_retries"})
    side.assistant({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_s1", "name": "read_file", "input": {"path": "tests/test_upload.py"}},
    ]}, input_tokens=300, output_tokens=20)
    side.user({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_s1", "content": "def test_upload_retries():\n    sleep(0.1)"},
    ]})
    side.assistant({"role": "assistant", "content": [{"type": "text", "text": "It sleeps instead of waiting."}]},
                   input_tokens=350, output_tokens=12)
    rec.end_subagent(side, "toolu_03", "It sleeps instead of waiting.")
    rec.user({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_03", "content": "It sleeps instead of waiting."},
    ]})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": f"The test sleeps. Hostile text: {HOSTILE}"}]},
                  input_tokens=1600, output_tokens=40)
    rec.compact_boundary("The upload test sleeps instead of waiting for the retry.", compact_count=1, trigger="manual")
    rec.prompt_id = "turn-2"
    rec.user({"role": "user", "content": "Fix it"})
    rec.assistant({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_04", "name": "bash", "input": {"command": "pytest -q tests/test_upload.py"}},
    ]}, input_tokens=200, output_tokens=10)  # the process "died" while this ran: no result
    rec.checkpoint()
    resumed = store.resume(rec.session_id, model="claude-sonnet-4-5", provider="anthropic")
    rec2 = resumed.recorder
    rec2.user({"role": "user", "content": "Did it pass?"})
    rec2.assistant({"role": "assistant", "content": [{"type": "text", "text": "It was interrupted; run it again."}]},
                   input_tokens=90, output_tokens=9)
    rec2.checkpoint()
    return Rich(rec.session_id, rec2.session_id, side.relative_path)


_ID_RE = re.compile(r"\d{13}_[0-9a-f]{8}")
_SIDECHAIN_RE = re.compile(r"\d{13}_([a-z0-9-]+)_[0-9a-f]{4}\.jsonl")


def normalise(text: str, project: Path) -> str:
    """Ids, sidechain names, times and the project path replaced by stable placeholders."""
    text = text.replace(str(project), "<PROJECT>")
    text = _SIDECHAIN_RE.sub(r"<MS>_\1_<HEX>.jsonl", text)
    ids: dict[str, str] = {}
    text = _ID_RE.sub(lambda m: ids.setdefault(m.group(), f"<SESSION-{len(ids) + 1}>"), text)
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?", "<DATE>", text)
    return re.sub(r"\b\d\d:\d\d:\d\d\b", "<TIME>", text)
