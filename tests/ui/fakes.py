"""A scripted stand-in for the agent, shaped like `evo_agent.ui.bridge.AgentLike`."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from evo_agent.agent.resuming import Resumed


class FakeAgent:
    """Each turn replays `script` (a list of (callback name, args) steps).

    `block=True` makes a turn wait on its cancel event after the script
    (so a test can press Ctrl+C while it runs); `started` is set once the
    turn is inside `run_turn`.
    """

    def __init__(self, project_dir: Path, script: list[tuple[str, tuple]] | None = None, *, block: bool = False,
                 gate: threading.Event | None = None):
        self.project_dir = Path(project_dir)
        self.session_id = "1780000000000_aaaaaaaa"
        self.model = "fake-model"
        self.total_tokens = 1234
        self.context_chars = 5000
        self.compact_threshold = 50000
        self.messages: list[dict[str, Any]] = []
        self.script = script or [("on_text", ("Hello ",)), ("on_text", ("**world**",))]
        self.block = block
        self.gate = gate  # when given, a turn waits for it (or for its cancel event) after the script
        self.decisions: list = []  # what on_approval answered, for ("on_approval", (request,)) steps
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.turns: list[str] = []
        self.resumed: list[str] = []
        self.compacted: list[str | None] = []
        self.cleared = 0

    def run_turn(self, prompt, callbacks, cancel) -> None:
        self.turns.append(prompt)
        self.messages.append({"role": "user", "content": prompt})
        self.started.set()
        for name, args in self.script:
            result = getattr(callbacks, name)(*args)
            if name == "on_approval":
                self.decisions.append(result)
        if self.gate is not None:
            while not (self.gate.wait(0.02) or cancel.is_set()):
                pass
        if self.block and cancel.wait(10):
            self.cancelled.set()
            return
        self.total_tokens += 100

    def resume(self, session_id: str, *, confirm=None) -> Resumed:  # noqa: ANN001
        if not session_id.startswith("17"):
            raise ValueError(f"invalid session id {session_id!r}")
        self.resumed.append(session_id)
        self.session_id = "1780000099999_bbbbbbbb"
        self.messages = [
            {"role": "user", "content": "restored question"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "restored answer"},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]},
        ]
        return Resumed(session_id, self.session_id, len(self.messages), list(self.messages))

    def clear(self) -> None:
        self.cleared += 1
        self.session_id = "1780000088888_cccccccc"
        self.messages = []

    def compact(self, focus, cancel=None) -> None:
        self.compacted.append(focus)

    def cost_text(self) -> str:
        return f"tokens: {self.total_tokens:,}"

    def mcp_text(self) -> str:
        return "MCP servers:\n  docs (user, stdio) — failed: it exited"

    def mcp_reconnect(self, name: str) -> str:
        self.reconnected = [*getattr(self, "reconnected", []), name]
        return f"MCP server {name}: connected"
