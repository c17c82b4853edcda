"""`sessions export --format html`: one self-contained page a person would rather look at than read.

- No network and no script: the CSS is inline, a Content-Security-Policy
  forbids loading anything but inline styles and data: images, and there is
  not one `<script>` element. Tool results, thinking, restored messages and
  subagent runs fold with `<details>`, which needs no JavaScript.
- Everything from the transcript is escaped. Message text is Markdown and is
  rendered by markdown-it with raw HTML off (so `</script>` in a message is
  text) and images off (a remote image would be a network request).
"""

from __future__ import annotations

from html import escape

from markdown_it import MarkdownIt

from evo_agent import __version__
from evo_agent.safe_text import terminal_safe

from .common import fmt_ms, fmt_stamp, plural, short
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
    Tokens,
    ToolCall,
    Transcript,
    Turn,
)
from .render_text import input_text

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
PREVIEW_CHARS = 100

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"]).disable("image")

CSS = """
:root { --bg: #fbfbfa; --fg: #1f2328; --muted: #656d76; --line: #d8dee4; --card: #fff;
  --user: #0969da; --assistant: #1a7f37; --tool: #9a6700; --error: #cf222e; --sub: #8250df;
  --code: #f3f4f6; --boundary: #fff8c5; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #8d96a0; --line: #30363d; --card: #161b22;
    --user: #4493f8; --assistant: #3fb950; --tool: #d29922; --error: #f85149; --sub: #a371f7;
    --code: #1f242c; --boundary: #2e2a18; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.page { max-width: 60rem; margin: 0 auto; padding: 2rem 1.25rem 4rem; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
pre { background: var(--code); padding: .6rem .8rem; border-radius: 6px; overflow-x: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; margin: .4rem 0; }
header.session h1 { font-size: 1.35rem; margin: 0 0 .25rem; overflow-wrap: anywhere; }
header.session .id { color: var(--muted); margin: 0 0 1rem; }
.live { color: var(--assistant); font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table.tokens { border-collapse: collapse; margin: 0 0 1.5rem; font-variant-numeric: tabular-nums; }
table.tokens th, table.tokens td { border-bottom: 1px solid var(--line); padding: .2rem .8rem; text-align: right; }
table.tokens th:first-child, table.tokens td:first-child { text-align: left; }
table.tokens tr.total td { font-weight: 600; }
.turn { background: var(--card); border: 1px solid var(--line); border-left: 4px solid var(--line);
  border-radius: 8px; padding: .6rem 1rem; margin: .9rem 0; }
.turn.user { border-left-color: var(--user); }
.turn.assistant { border-left-color: var(--assistant); }
.turn > header { display: flex; gap: .75rem; align-items: baseline; font-size: 13px; color: var(--muted); }
.turn > header .role { font-weight: 700; text-transform: capitalize; }
.turn.user > header .role { color: var(--user); }
.turn.assistant > header .role { color: var(--assistant); }
.turn > header .tokens { margin-left: auto; font-variant-numeric: tabular-nums; }
.md > :first-child { margin-top: .3rem; } .md > :last-child { margin-bottom: .3rem; }
.md table { border-collapse: collapse; } .md th, .md td { border: 1px solid var(--line); padding: .2rem .5rem; }
.md code { background: var(--code); padding: .05rem .3rem; border-radius: 4px; }
.md pre code { background: none; padding: 0; }
.tool { border: 1px solid var(--line); border-radius: 6px; padding: .4rem .7rem; margin: .5rem 0; }
.tool .call { font-size: 13px; }
.tool .call .name { color: var(--tool); font-weight: 700; font-family: ui-monospace, monospace; }
.tool .call .tid { color: var(--muted); }
details { margin: .35rem 0; }
details > summary { cursor: pointer; color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
details > summary .preview { font-family: ui-monospace, monospace; }
details.result.error > summary, .error-text { color: var(--error); }
details.subagent { border-left: 3px solid var(--sub); padding-left: .8rem; }
details.subagent > summary { color: var(--sub); font-weight: 600; }
details.restored { border: 1px dashed var(--line); border-radius: 8px; padding: .3rem .8rem; }
.missing { color: var(--error); font-size: 13px; }
.boundary { background: var(--boundary); border-radius: 8px; padding: .6rem 1rem; margin: 1.2rem 0; }
.boundary h2 { font-size: 14px; margin: 0; }
.marker { color: var(--muted); font-size: 13px; text-align: center; margin: 1.2rem 0;
  border-top: 1px solid var(--line); padding-top: .4rem; }
.warn { color: var(--error); font-size: 13px; }
details.thinking .md { color: var(--muted); font-style: italic; }
.path { color: var(--muted); font-size: 12px; margin: .2rem 0; }
footer { color: var(--muted); font-size: 12px; margin-top: 3rem;
         border-top: 1px solid var(--line); padding-top: .5rem; }
"""


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def markdown(text: str) -> str:
    return _md.render(text)


def preview(text: str) -> str:
    first = next((line for line in text.split("\n") if line.strip()), "")
    return short(first, PREVIEW_CHARS)


def token_cells(tokens: Tokens, cache: bool) -> str:
    values = (tokens.input, tokens.output, tokens.total) + ((tokens.cache_read, tokens.cache_creation) if cache else ())
    return "".join(f"<td>{n:,}</td>" for n in values)


class HtmlRenderer:
    def session(self, view: SessionView) -> str:
        meta = view.meta
        title = (short(meta.name, 80) if meta and meta.name else
                 short(meta.first_prompt, 80) if meta and meta.first_prompt else f"Session {view.id}")
        facts: list[tuple[str, str]] = []
        if meta is not None:
            facts += [("Created", esc(fmt_ms(meta.created_ms))), ("Updated", esc(fmt_ms(meta.updated_ms))),
                      ("Model", f"<code>{esc(meta.model or '?')}</code>"
                       + (f" ({esc(meta.provider)})" if meta.provider else "")),
                      ("Branch", f"<code>{esc(meta.git_branch or '-')}</code>"),
                      ("Directory", f"<code>{esc(meta.cwd or '?')}</code>")]
        facts.append(("Messages", f"{view.transcript.message_count:,}"))
        if view.lineage:
            chain = " ← ".join(f"<code>{esc(s)}</code>" for s in view.lineage)
            chain += " ← …" if view.lineage_missing else ""
            facts.append(("Resumed from", chain))
        if view.resumed_as:
            facts.append(("Resumed as", ", ".join(f"<code>{esc(s)}</code>" for s in view.resumed_as)))
        live = ' <span class="live">● live</span>' if view.live else ""
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="referrer" content="no-referrer">',
            f'<meta name="generator" content="evo-agent {esc(__version__)}">',
            f"<title>{esc(title)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            '<div class="page">',
            '<header class="session">',
            f"<h1>{esc(title)}</h1>",
            f'<p class="id">Session <code>{esc(view.id)}</code>{live}</p>',
            '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>",
            self.tokens_table(view),
            "</header>",
            "<main>",
            self.transcript(view.transcript),
        ]
        for run in view.unlinked:
            parts.append('<p class="warn">A sidechain file that no marker in the transcript names:</p>')
            parts.append(self.run(run, open_=False))
        parts += [
            "</main>",
            f"<footer>Exported by evo-agent {esc(__version__)}. Tool results, thinking and subagent runs "
            "fold: click a grey line to open it.</footer>",
            "</div>",
            "</body>",
            "</html>",
        ]
        return "\n".join(parts) + "\n"

    def tokens_table(self, view: SessionView) -> str:
        rows = [("This session", view.transcript.tokens, "")]
        if view.subagent_tokens:
            rows += [("Subagents", view.subagent_tokens, ""), ("Total", view.all_tokens, "total")]
        cache = any(t.cache_read or t.cache_creation for _, t, _ in rows)
        body = "".join(f'<tr class="{cls}"><td>{label}</td>{token_cells(t, cache)}</tr>' for label, t, cls in rows)
        heads = "<th>input</th><th>output</th><th>total</th>"
        heads += "<th>cache read</th><th>cache write</th>" if cache else ""
        return f'<table class="tokens"><thead><tr><th>Tokens</th>{heads}</tr></thead><tbody>{body}</tbody></table>'


    def transcript(self, transcript: Transcript) -> str:
        return "\n".join(self.item(item) for item in transcript.items)

    def item(self, item: Item) -> str:
        if isinstance(item, Turn):
            return self.turn(item)
        if isinstance(item, Boundary):
            head = " · ".join(p for p in ("Compacted", f"#{item.compact_count}" if item.compact_count else "",
                                          item.trigger or "", fmt_stamp(item.timestamp),
                                          f"summary {item.tokens.input:,} in / {item.tokens.output:,} out"
                                          if item.tokens else "") if p)
            return (f'<section class="boundary"><h2>{esc(head)}</h2>'
                    f'<div class="md summary">{markdown(item.summary)}</div></section>')
        if isinstance(item, ResumeMarker):
            count = f" · {plural(item.restored_count, 'message')} restored" if item.restored_count is not None else ""
            return (f'<p class="marker">Resumed from <code>{esc(item.from_session_id or "?")}</code>'
                    f"{esc(count)} · {esc(fmt_stamp(item.timestamp))}</p>")
        if isinstance(item, Restored):
            if not item.items:
                return ""
            inner = "\n".join(self.item(sub) for sub in item.items)
            return (f'<details class="restored"><summary>{esc(plural(item.message_count, "restored message"))}'
                    f"</summary>{inner}</details>")
        if isinstance(item, SubagentRun):
            return self.run(item, open_=False)
        if isinstance(item, NOTES):
            return f'<p class="marker">{esc(item.line)} · {esc(fmt_stamp(item.timestamp))}</p>'
        if isinstance(item, Skipped):
            what = "torn last line (an interrupted write)" if item.torn else "unreadable line"
            return f'<p class="warn">⚠ {esc(item.file)} line {item.line}: {what}, {item.size:,} bytes, skipped</p>'
        return ""

    def turn(self, turn: Turn) -> str:
        tokens = (f'<span class="tokens">{turn.tokens.input:,} in / {turn.tokens.output:,} out</span>'
                  if turn.tokens else "")
        restored = " · restored" if turn.restored else ""
        body = []
        for block in turn.blocks:
            if isinstance(block, Text):
                if block.kind == "thinking":
                    body.append(f'<details class="thinking"><summary>Thinking</summary>'
                                f'<div class="md">{markdown(block.text)}</div></details>')
                elif block.kind == "summary":
                    body.append('<p class="path">Summary of the earlier conversation:</p>'
                                f'<div class="md">{markdown(block.text)}</div>')
                elif block.kind == "reminder":
                    body.append(f'<details class="thinking"><summary>Reminder (evo-agent told the model)</summary>'
                                f'<pre>{esc(block.text)}</pre></details>')
                else:
                    body.append(f'<div class="md">{markdown(block.text)}</div>')
            elif isinstance(block, ToolCall):
                body.append(self.call(block))
            elif isinstance(block, OrphanResult):
                body.append(f'<div class="tool"><div class="call">Result for <code>{esc(block.tool_use_id)}</code> '
                            f"(its call is not in this file)</div>{self.result(block.result)}</div>")
            elif isinstance(block, Other):
                body.append(f'<p class="missing">[{esc(block.description)}]</p>')
        return (f'<article class="turn {esc(turn.role)}"><header><span class="role">{esc(turn.role)}</span>'
                f"<time>{esc(fmt_stamp(turn.timestamp))}</time>{esc(restored)}{tokens}</header>"
                + "".join(body) + "</article>")

    def call(self, call: ToolCall) -> str:
        runs = "".join(self.run(run, open_=False) for run in call.runs)
        result = self.result(call.result) if call.result is not None else (
            '<p class="missing">No result: the tool was interrupted, or is still running.</p>')
        return (f'<div class="tool" data-tool-id="{esc(call.id)}">'
                f'<div class="call"><span class="name">{esc(call.name)}</span> '
                f'<code class="tid">{esc(call.id)}</code></div><pre class="input">{esc(input_text(call))}</pre>'
                f"{runs}{result}</div>")

    def result(self, result: ResultView) -> str:
        text = result.text or "(empty)"
        label = "Error" if result.is_error else "Result"
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        cls = "result error" if result.is_error else "result"
        return (f'<details class="{cls}"><summary>{label} · {esc(plural(lines, "line"))} · '
                f'<span class="preview">{esc(preview(text))}</span></summary>'
                f'<pre class="output">{esc(text)}</pre></details>')

    def run(self, run: SubagentRun, *, open_: bool) -> str:
        head = f"Subagent {run.agent_name}"
        if run.transcript is not None:
            head += f" · {plural(run.transcript.message_count, 'message')}"
            if run.transcript.tokens:
                head += f" · {run.transcript.tokens.input:,} in / {run.transcript.tokens.output:,} out"
        if not run.finished:
            head += " · never finished"
        parts = [f'<details class="subagent"{" open" if open_ else ""}><summary>{esc(head)}</summary>',
                 f'<p class="path"><code>{esc(run.path)}</code></p>']
        if run.problem:
            parts.append(f'<p class="warn">⚠ {esc(run.problem)}</p>')
        if run.transcript is not None:
            parts.append(self.transcript(run.transcript))
        parts.append("</details>")
        return "".join(parts)


def render_html(view: SessionView) -> str:
    return terminal_safe(HtmlRenderer().session(view))  # control characters are not allowed in HTML text
