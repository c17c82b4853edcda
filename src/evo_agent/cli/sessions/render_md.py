"""`sessions export --format md`: the whole session as one Markdown document.

Message text is Markdown already and is kept as written; tool inputs and
results go in code fences long enough that no backtick run inside can close
them; a subagent run is a block quote under its call; restored messages sit
in a `<details>` block, which the common renderers fold.
"""

from __future__ import annotations

import re

from evo_agent.safe_text import terminal_line, terminal_safe

from .common import fmt_ms, fmt_stamp, plural
from .model import (
    NOTES,
    Boundary,
    Item,
    OrphanResult,
    Other,
    Restored,
    ResultView,
    ResumeMarker,
    SessionView,
    Skipped,
    SubagentRun,
    Text,
    ToolCall,
    Transcript,
    Turn,
)
from .render_text import fmt_tokens

_TICKS_RE = re.compile(r"`{3,}")


def fence(text: str, lang: str = "") -> str:
    longest = max((len(m.group()) for m in _TICKS_RE.finditer(text)), default=2)
    ticks = "`" * max(3, longest + 1)
    body = text[:-1] if text.endswith("\n") else text
    return f"{ticks}{lang}\n{body}\n{ticks}"


def inline_code(text: str) -> str:
    """`text` as one inline code span: on one line (a blank line would end the span and the paragraph, and the
    rest of a name would read as the export's own heading), fenced by more backticks than any run inside it."""
    text = terminal_line(text)
    if "`" not in text:
        return f"`{text}`"
    ticks = "`" * (max(len(run) for run in re.findall(r"`+", text)) + 1)
    return f"{ticks} {text} {ticks}"


def quote(chunks: list[str]) -> str:
    """Chunks as one block quote (a subagent run nested under its call)."""
    return "\n".join(f"> {line}".rstrip() for line in "\n\n".join(chunks).split("\n"))


class MarkdownRenderer:
    """Each method returns chunks (paragraphs, fences, headings); they are joined by one blank line.

    Chunks keep their own text verbatim, so blank lines inside a message or
    a tool's output survive exactly.
    """

    def session(self, view: SessionView) -> str:
        meta = view.meta
        facts = []
        if meta is not None:
            if meta.name:
                facts.append(f"- **Name** {inline_code(meta.name)}")
            facts.append(f"- **Created** {fmt_ms(meta.created_ms)} · **Updated** {fmt_ms(meta.updated_ms)}")
            model = inline_code(meta.model or "?") + (f" ({meta.provider})" if meta.provider else "")
            facts.append(f"- **Model** {model} · **Branch** {inline_code(meta.git_branch or '-')}")
            facts.append(f"- **Directory** {inline_code(meta.cwd or '?')}")
        tokens = f"- **Messages** {view.transcript.message_count:,} · **Tokens** {fmt_tokens(view.transcript.tokens)}"
        if view.subagent_tokens:
            tokens += f" · **Subagents** {fmt_tokens(view.subagent_tokens)} · **Total** {view.all_tokens.total:,}"
        facts.append(tokens)
        if view.lineage:
            chain = " ← ".join(inline_code(s) for s in view.lineage) + (" ← …" if view.lineage_missing else "")
            facts.append(f"- **Resumed from** {chain}")
        if view.resumed_as:
            facts.append(f"- **Resumed as** {', '.join(inline_code(s) for s in view.resumed_as)}")
        chunks = [f"# Session {view.id}", "\n".join(facts)]
        chunks += self.transcript(view.transcript, level=2)
        for run in view.unlinked:
            chunks += ["*A sidechain file that no marker in the transcript names:*", *self.run(run, level=3)]
        return "\n\n".join(c for c in chunks if c) + "\n"

    def transcript(self, transcript: Transcript, level: int) -> list[str]:
        chunks: list[str] = []
        for item in transcript.items:
            chunks.extend(self.item(item, level))
        return chunks

    def item(self, item: Item, level: int) -> list[str]:
        h = "#" * min(level, 6)
        if isinstance(item, Turn):
            return self.turn(item, level)
        if isinstance(item, Boundary):
            head = " · ".join(p for p in ("Compacted", f"#{item.compact_count}" if item.compact_count else "",
                                          item.trigger or "", fmt_stamp(item.timestamp),
                                          f"summary {fmt_tokens(item.tokens)}" if item.tokens else "") if p)
            return ["---", f"{h} {head}", "*Summary of everything before this point:*", item.summary, "---"]
        if isinstance(item, ResumeMarker):
            count = f" · {plural(item.restored_count, 'message')} restored" if item.restored_count is not None else ""
            return [f"{h} Resumed from {inline_code(item.from_session_id or '?')}{count}"]
        if isinstance(item, Restored):
            if not item.items:
                return []
            chunks = [f"<details>\n<summary>{plural(item.message_count, 'restored message')}</summary>"]
            for sub in item.items:
                chunks.extend(self.item(sub, level + 1))
            return chunks + ["</details>"]
        if isinstance(item, SubagentRun):
            return self.run(item, level + 1)
        if isinstance(item, NOTES):
            return [f"*{item.line}* · {fmt_stamp(item.timestamp)}"]
        if isinstance(item, Skipped):
            what = "a torn last line (an interrupted write)" if item.torn else "an unreadable line"
            return [f"> ⚠ `{item.file}` line {item.line}: {what}, {item.size:,} bytes, skipped"]
        return []

    def turn(self, turn: Turn, level: int) -> list[str]:
        head = f"{'#' * min(level, 6)} {turn.role.capitalize()} · {fmt_stamp(turn.timestamp)}"
        if turn.tokens:
            head += f" · {fmt_tokens(turn.tokens)}"
        if turn.restored:
            head += " · restored"
        chunks = [head]
        for block in turn.blocks:
            if isinstance(block, Text):
                if block.kind == "thinking":
                    chunks += ["*Thinking:*", "\n".join(f"> {line}".rstrip() for line in block.text.split("\n"))]
                elif block.kind == "summary":
                    chunks += ["*Summary of the earlier conversation:*", block.text]
                elif block.kind == "reminder":
                    chunks += ["*Reminder (evo-agent told the model):*",
                               "\n".join(f"> {line}".rstrip() for line in block.text.split("\n"))]
                else:
                    chunks.append(block.text)
            elif isinstance(block, ToolCall):
                chunks += self.call(block, level)
            elif isinstance(block, OrphanResult):
                chunks += [f"Result for {inline_code(block.tool_use_id)} (its call is not in this file):",
                           *self.result(block.result)]
            elif isinstance(block, Other):
                chunks.append(f"*[{block.description}]*")
        return chunks

    def call(self, call: ToolCall, level: int) -> list[str]:
        chunks = [f"**Tool call {inline_code(call.name)}** ({inline_code(call.id)})", fence(call.input_json, "json")]
        for run in call.runs:
            chunks += self.run(run, level + 1)
        if call.result is None:
            return chunks + ["*No result: the tool was interrupted, or is still running.*"]
        return chunks + self.result(call.result)

    def result(self, result: ResultView) -> list[str]:
        label = "Error" if result.is_error else "Result"
        return [f"{label} · {fmt_stamp(result.timestamp)}:", fence(result.text or "(empty)")]

    def run(self, run: SubagentRun, level: int) -> list[str]:
        head = f"**Subagent {inline_code(run.agent_name)}** · {inline_code(run.path)}"
        if run.transcript is not None:
            head += f" · {plural(run.transcript.message_count, 'message')}"
            if run.transcript.tokens:
                head += f" · {fmt_tokens(run.transcript.tokens)}"
        inner = [head]
        if run.problem:
            inner.append(f"⚠ {run.problem}")
        if run.transcript is not None:
            inner += self.transcript(run.transcript, level)
        inner.append(f"*Finished · {fmt_stamp(run.ended)}*" if run.finished
                     else "*Never finished (interrupted, or still running).*")
        return [quote([c for c in inner if c])]


def render_markdown(view: SessionView) -> str:
    return terminal_safe(MarkdownRenderer().session(view))
