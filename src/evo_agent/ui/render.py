"""Rich renderables for what the app prints into the terminal's scrollback, one function per kind.

Every string that comes from a transcript, a model or a tool goes through `safe()` (the one
terminal sanitiser, then a plain `Text`), so neither escape sequences nor Rich markup in model
text can act on the terminal. Nothing here forces a background colour: the terminal's own
colours stay, and with NO_COLOR set Rich drops the colours that are left.

    console.print(user_prompt("fix the test"))
    console.print(answer("Line one\\nline two"))        # single line breaks kept
    console.print(tool_call("bash", {"command": "ls"}))
    console.print(tool_result("bash", {"command": "ls"}, "a\\nb", is_error=False))
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, Group, RenderableType
from rich.text import Text
from rich.theme import Theme

from evo_agent.safe_text import terminal_line, terminal_safe
from evo_agent.session import INTERRUPTED_MARKER, SUMMARY_PREFIX, SUMMARY_SUFFIX, one_line
from evo_agent.tools import call_argument, facts_of
from evo_agent.tools.approval import REFUSED

if TYPE_CHECKING:
    from .answer import Answer

__all__ = [
    "THEME", "INTERRUPTED_MARKER", "SUMMARY_OPEN", "Answer", "answer", "approval_detail", "clip", "diff_lines",
    "error_line", "is_answer", "TERMINAL_WRAPS", "PROMPT_SHOWN_LINES", "PROMPT_SHOWN_CHARS",
    "interrupted_notice", "is_interrupted_result", "make_console", "notice", "safe",
    "summary_block", "thinking_line", "tool_call", "tool_call_full", "tool_label", "tool_output_full", "tool_result",
    "user_prompt", "welcome_line",
]

SUMMARY_OPEN = SUMMARY_PREFIX.rstrip("\n")      # session.summary_message's first line
PREVIEW_LINES = 3          # lines of a tool result shown under its call
DIFF_MAX_LINES = 40        # diff lines shown for one edit (the rest are counted)
LABEL_MAX = 100            # cells of a tool call's argument

# Foreground colours and text attributes only: no background anywhere, so light and dark themes both work.
THEME = Theme({
    "markdown.code": "bold cyan",
    "markdown.code_block": "cyan",
    "evo.user": "bold",
    "evo.tool": "bold",
    "evo.dim": "dim",
    "evo.error": "red",
    "evo.warn": "yellow",
    "evo.added": "green",
    "evo.removed": "red",
    "evo.hunk": "cyan",
    "evo.queued": "dim italic",
})


ColorSystem = Literal["auto", "standard", "256", "truecolor", "windows"]  # what Rich's Console takes


def make_console(file: Any = None, *, width: int | None = None, force_terminal: bool | None = None,
                 record: bool = False, color_system: ColorSystem | None = "auto") -> Console:
    """A Console with the app's theme; NO_COLOR (in the environment) is honoured by Rich itself."""
    return Console(file=file, width=width, force_terminal=force_terminal, record=record, theme=THEME,
                   color_system=color_system, highlight=False, emoji=False, markup=False, soft_wrap=False)


def safe(text: object, style: str = "") -> Text:
    """Untrusted text as a plain `Text`: control sequences made visible, no markup interpreted."""
    return Text(terminal_safe(str(text)), style=style)


def clip(text: Text, width: int | None) -> Text:
    """Each line of `text` cut to `width` cells, ending in … when cut (None: unchanged).

    Tool calls and result previews are one screen line each: a long command wrapped by the terminal
    reads as two entries. The whole text stays one key away (Ctrl+O).
    """
    if width is None:
        return text
    lines = text.split("\n")
    for line in lines:
        line.truncate(max(width, 1), overflow="ellipsis")
    return Text("\n").join(lines)


# ---------------------------------------------------------------- prompts and answers

PROMPT_SHOWN_LINES = 20     # a prompt longer by 5 lines or more (a pasted log) is echoed by its start and a count
PROMPT_SHOWN_CHARS = 4_000  # and so is one long line (a minified file; a long typed paragraph stays whole)


def user_prompt(text: str, *, queued: bool = False) -> Text:
    """`› the prompt` in bold; later lines of a multi-line prompt indented under the first.

    A long one (a pasted log, a minified file) shows its start and `… N more lines not shown (all sent)`, as
    Claude Code shows `[Pasted text +N lines]`: echoed whole, a 5,000-line paste pushed the whole conversation
    out of the terminal's scrollback, and a resume printed it all again."""
    body, rest = _prompt_start(text.rstrip("\n"))
    out = Prose()  # wrapped between words in the app, as a notice, each wrapped line indented under the first
    out.hang = 2
    out.append("› ", style="evo.dim")
    out.append(terminal_safe(body).replace("\n", "\n  "), style="evo.queued" if queued else "evo.user")
    if rest:
        out.append(f"\n  … {rest} not shown (all sent)", style="evo.dim")
    if queued:
        out.append("  (queued)", style="evo.dim")
    return out


def _prompt_start(text: str) -> tuple[str, str]:
    """The start of a prompt that is echoed, and what is left out (`4,988 more lines`; empty: nothing)."""
    lines = text.split("\n")
    shown = text if len(lines) < PROMPT_SHOWN_LINES + 5 else "\n".join(lines[:PROMPT_SHOWN_LINES])
    shown = shown[:PROMPT_SHOWN_CHARS]
    left = text[len(shown):]
    if not left:
        return text, ""
    more = left.count("\n")
    if more:
        return shown, f"{more:,} more line{'s' if more != 1 else ''}"
    return shown, f"{len(left):,} more characters"


TERMINAL_WRAPS = "evo_terminal_wraps"  # set on a Console that prints an answer's code lines uncropped (ui/answer.py)


def is_answer(item: object) -> bool:
    """Whether `item` is an answer (without importing ui/answer.py, which loads rich.markdown, to find out)."""
    module = sys.modules.get("evo_agent.ui.answer")
    return module is not None and isinstance(item, module.Answer)


def answer(text: str) -> Answer:
    """The model's Markdown (ui/answer.py: rich.markdown and Pygments load at the first answer, not at start-up)."""
    from .answer import Answer

    return Answer(text)


def __getattr__(name: str) -> Any:
    if name == "Answer":  # `render.Answer`, as before the split, without importing it at start-up
        from .answer import Answer

        return Answer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def thinking_line(text: str) -> Text:
    """Thinking folded to one dim line (its size), as Claude Code shows it."""
    return Text(f"✻ thinking ({len(text):,} characters)", style="evo.dim italic")


# A Chinese or Japanese character (with its combining marks) is a word of its own; any other run of non-blanks is one.
_WIDE = "\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uf900-\ufaff\ufe30-\ufe4f" \
        "\uff00-\uff60\uffe0-\uffe6\U00020000-\U0003fffd"  # not Hangul: Korean puts spaces between its words
_WORDS = re.compile(f"[{_WIDE}][\u0300-\u036f\u3099\u309a]*|[^\\s{_WIDE}]+")


class Prose(Text):
    """Text wrapped between words, as Claude Code and Codex wrap theirs (a notice, /cost, /memory): a word
    wider than the screen (a long path) is left whole for the terminal to wrap, so it still copies as one
    (Rich would fold it). Chinese and Japanese have no spaces between words: a line may break before any
    of their characters (a run of them was one "word", wrapped by the terminal to column 0, under the `›`).
    `hang`: the cells a line wrapped here is indented by (a prompt's under its text)."""

    hang = 0

    def wrapped(self, width: int) -> Text:
        """A copy with a line break at the last space before each line would pass `width` cells."""
        from rich.cells import cell_len

        out: list[Text] = []
        for line in self.split("\n", allow_blank=True):
            plain, offsets, used, start, limit = line.plain, [], 0, 0, width
            # Under the line's own indent at least: /help's `  /rewind [N] …` went on at column 0 on a narrow screen.
            hang = min(max(self.hang, len(plain) - len(plain.lstrip(" "))), width // 2)
            indent = " " * hang
            for match in _WORDS.finditer(plain):
                word_end = cell_len(plain[start:match.end()])
                if used and word_end > limit:  # this word starts the next line
                    offsets.append(match.start())
                    start, limit = match.start(), max(width - hang, 1)
                    word_end = cell_len(match.group())
                used = word_end
            for i, piece in enumerate(line.divide(offsets) if offsets else [line]):
                piece.rstrip()
                out.append(Text(indent) + piece if i and indent else piece)
        return Text("\n", style=self.style).join(out)


def notice(text: str) -> Text:
    return Prose(terminal_safe(text), style="evo.dim")


def error_line(text: str) -> Text:
    """An error in red, wrapped between words as a notice is (the terminal cut `the ke` / `y you gave`)."""
    return Prose(terminal_safe(str(text)), style="evo.error")


def interrupted_notice() -> Text:
    """`[Request interrupted by user]` in a history: a notice, never a prompt."""
    return Text("  └  Interrupted by user", style="evo.warn")


def summary_block(summary: str) -> Text:
    """A compaction summary as one folded line: the conversation before it was summarised."""
    body = summary
    if body.startswith(SUMMARY_OPEN):
        body = body[len(SUMMARY_OPEN):]
    body = body.replace(SUMMARY_SUFFIX.strip(), "").strip()
    first = next((line for line in body.splitlines() if line.strip()), "")
    out = Text()
    out.append("▸ summary", style="evo.tool")
    out.append(f" of the earlier conversation ({len(body):,} characters, folded)", style="evo.dim")
    if first:
        out.append("\n  ")
        out.append_text(safe(one_line(first.lstrip("# "), LABEL_MAX), "evo.dim italic"))
    return out


# ---------------------------------------------------------------- tools

def tool_label(name: str, tool_input: Any) -> str:
    """A one-line view of a call: `bash(ls -la)`, `grep("def main" in src)`, `read_file(README.md)`
    (what the parentheses hold is the tool's own fact: tools.call_argument)."""
    arg = call_argument(name, tool_input)
    return f"{terminal_line(name)}({one_line(terminal_safe(arg, keep_newlines=False).replace('^J', ' '), LABEL_MAX)})"


def tool_call(name: str, tool_input: Any, *, depth: int = 0, width: int | None = None) -> Text:
    """`● bash(ls -la)`; a subagent's calls are indented under its task (`depth` 1).

    With `width` (the app passes the terminal's), the line is cut to fit it.
    """
    out = Text()
    out.append("  " * depth + "● ", style="evo.dim" if depth else "")
    label = tool_label(name, tool_input)
    head, _, rest = label.partition("(")
    out.append(head, style="evo.tool")
    out.append("(" + rest)
    return clip(out, width)


def tool_call_full(name: str, tool_input: Any) -> Text:
    """The call with its whole argument (Ctrl+O): `● bash` and the full command, lines kept, indented."""
    out = Text()
    out.append("● ")
    out.append(terminal_line(name), style="evo.tool")  # the model's text: a hostile endpoint names any tool
    if isinstance(tool_input, dict):
        key = facts_of(name).label_arg
        value = tool_input.get(key) if key else None
        body = value if isinstance(value, str) and value else json.dumps(tool_input, ensure_ascii=False, indent=2)
    else:
        body = str(tool_input or "")
    if body.strip():
        out.append("\n")
        out.append_text(safe("\n".join("     " + line for line in body.splitlines()), "bold"))
    return out


def is_interrupted_result(text: str, is_error: bool) -> bool:
    """A result that says the tool was interrupted (Ctrl+C, or a session that ended while it ran)."""
    if not is_error:
        return False
    lowered = text.lower()
    return "interrupted" in lowered and ("not run" in lowered or "was interrupted" in lowered
                                          or "[interrupted" in lowered or lowered.startswith("interrupted"))


def _gutter(depth: int) -> str:
    return "  " * depth + "  └  "


def _preview(text: str, lines: int) -> tuple[list[str], int]:
    shown = [line for line in text.splitlines() if line.strip()]
    return shown[:lines], max(len(shown) - lines, 0)


def tool_result(name: str, tool_input: Any, result_text: str, *, is_error: bool, duration: float | None = None,
                depth: int = 0, expand_hint: bool = True, width: int | None = None) -> RenderableType:
    """The result under its call: a short preview, a coloured diff for edits, "interrupted" marked as such.

    With `width`, every preview line is cut to fit it (a diff's lines are code and wrap as they are).
    """
    gutter = _gutter(depth)
    pad = " " * len(gutter)
    text = result_text or ""
    if is_interrupted_result(text, is_error):
        return Text(gutter + "interrupted", style="evo.warn")
    if is_error and text.startswith(REFUSED):  # the user's no, not a failure: not its words to the model in red
        return Text(gutter + "not run: you said no", style="evo.warn")
    if is_error:
        first, more = _preview(text, 1)
        out = Text()
        out.append(gutter, style="evo.dim")
        out.append_text(safe("error: " + one_line(first[0] if first else "(no output)", 200), "evo.error"))
        if more:
            out.append(f" (+{more} line{'s' if more != 1 else ''})", style="evo.dim")
        return clip(out, width)
    if isinstance(tool_input, dict):
        diff = _edit_diff(name, tool_input, text, pad)
        if diff is not None:
            head = Text()
            head.append(gutter, style="evo.dim")
            head.append_text(safe(one_line(text.splitlines()[0] if text else "done", 200)))
            return Group(clip(head, width), diff)
    first, more = _preview(text, _preview_lines(name))
    if not first:
        return Text(gutter + "(no output)", style="evo.dim")
    out = Text()
    for i, line in enumerate(first):
        out.append(gutter if i == 0 else pad, style="evo.dim")
        out.append_text(safe(one_line(line, 200)))
        if i < len(first) - 1:
            out.append("\n")
    if more:
        hint = " (Ctrl+O shows all)" if expand_hint else ""
        out.append(f"\n{pad}… +{more} line{'s' if more != 1 else ''}{hint}", style="evo.dim")
    return clip(out, width)


def _edit_diff(name: str, tool_input: dict, result_text: str, pad: str) -> Text | None:
    """The change a call made as a diff, for a tool whose facts say what it changes (`change_of`), else None."""
    change_of = facts_of(name).change_of
    change = change_of(tool_input) if change_of is not None else None
    if change is None:
        return None
    old, new = change
    if old is None:  # the whole file written
        return diff_lines("", new, pad=pad, start=1)
    match = re.search(r"at line (\d+)", result_text)  # an edit's result says where
    return diff_lines(old, new, pad=pad, start=int(match.group(1)) if match else 1)


def diff_lines(old: str, new: str, *, pad: str = "     ", start: int = 1, limit: int = DIFF_MAX_LINES) -> Text:
    """A unified diff of `old` → `new`, coloured (- red, + green), numbered from line `start`."""
    a, b = old.splitlines(), new.splitlines()
    body = list(difflib.unified_diff(a, b, lineterm="", n=2))[2:]  # drop the ---/+++ header
    out = Text()
    shown = 0
    line_no = start
    for line in body:
        if shown >= limit:
            break
        if line.startswith("@@"):
            match = re.match(r"@@ -(\d+)", line)
            line_no = start + (int(match.group(1)) - 1 if match else 0)
            continue
        style = "evo.added" if line.startswith("+") else "evo.removed" if line.startswith("-") else "evo.dim"
        number = "" if line.startswith("+") else f"{line_no}"
        if not line.startswith("+"):
            line_no += 1
        if shown:
            out.append("\n")
        out.append(f"{pad}{number:>4} ", style="evo.dim")
        out.append_text(safe(line, style))
        shown += 1
    rest = len([x for x in body if not x.startswith("@@")]) - shown
    if rest > 0:
        out.append(f"\n{pad}… +{rest} more diff lines", style="evo.dim")
    if not body:
        out.append(f"{pad}(no change)", style="evo.dim")
    return out


def tool_output_full(result_text: str) -> Text:
    """A tool's whole output (Ctrl+O), indented: every line the model was given (the tools bound it already)."""
    lines = (result_text or "(no output)").splitlines()
    return safe("\n".join("     " + line for line in lines), "")


def hides_lines(name: str, tool_input: Any, result_text: str, *, is_error: bool) -> bool:
    """Whether `tool_result` shows this result cut, ending in "… +N lines (Ctrl+O shows all)"."""
    text = result_text or ""
    if is_error or is_interrupted_result(text, is_error):
        return False
    if isinstance(tool_input, dict) and _edit_diff(name, tool_input, text, "") is not None:
        return False
    return _preview(text, _preview_lines(name))[1] > 0


def _preview_lines(name: str) -> int:
    return facts_of(name).result_lines or PREVIEW_LINES


def approval_detail(tool: str, detail: str, limit: int | None = None, width: int | None = None) -> tuple[Text, int]:
    """What an approval shows under its question, and how many of its lines it leaves out (wholly or in part).

    A command is highlighted line by line (bash lexer, numbered; the terminal wraps it, nothing is cropped);
    a diff is coloured; anything else is dim. With `limit`, only the first `limit` rows are shown and a last
    line says how much more there is and that Ctrl+O shows it (never a silent cut). With `width` (the
    terminal's), a row is a screen row: a line the terminal wraps takes several, and one too long for the rows
    left is shown up to what fits. One line padded with thousands of blanks otherwise scrolled its start (the
    part that runs) off the screen above the question, showing only its harmless end.
    """
    lines = terminal_safe(detail).rstrip("\n").split("\n")
    number_width = len(str(len(lines)))
    gutter = number_width + 3 if facts_of(tool).approval == "bash" else 4
    shown, cut_chars = _rows_that_fit(lines, limit, None if width is None else max(width, gutter + 8), gutter)
    hidden = len(lines) - len(shown) + (1 if cut_chars else 0)
    out = Text()
    if facts_of(tool).approval == "bash":
        from rich.syntax import Syntax  # Pygments loads at the first command shown, not at start-up

        code = "\n".join(shown)
        highlighted = Syntax(code, "bash", theme="ansi_dark", background_color="default").highlight(code)
        for i, line in enumerate(highlighted.split("\n", allow_blank=True)[: len(shown)]):
            out.append(("\n" if i else "") + f"  {i + 1:>{number_width}} ", style="evo.dim")
            out.append_text(line)
    else:
        for i, row in enumerate(shown):
            style = ("evo.added" if row.startswith("+") and not row.startswith("+++") else
                     "evo.removed" if row.startswith("-") and not row.startswith("---") else "evo.dim")
            out.append(("\n" if i else "") + "    " + row, style=style)
    if cut_chars:
        more = len(lines) - len(shown)
        out.append("\n")
        out.append_text(_note(f"    … line {len(shown)} goes on: {cut_chars:,} more characters not shown"
                              + (f", and {more} more line{'s' if more != 1 else ''} ({len(lines)} in all)"
                                 if more else "") + ": Ctrl+O shows them all; yes waits until then", width))
    elif hidden:
        out.append("\n")
        out.append_text(_note(f"    … {hidden} more line{'s' if hidden != 1 else ''} not shown ({len(lines)} in all): "
                              "Ctrl+O shows them all; yes waits until then", width))
    return out, hidden


def _note(text: str, width: int | None) -> Text:
    """An approval's `… N more lines not shown` note, wrapped between words under its `…` (the terminal cut it
    mid-word: `yes waits un` / `til then`)."""
    note = Prose(text, style="evo.warn")
    note.hang = 6
    return note.wrapped(width) if width else note


def _rows_that_fit(lines: list[str], limit: int | None, columns: int | None,
                   gutter: int = 0) -> tuple[list[str], int]:
    """The lines shown within `limit` rows of `columns` cells, each after a `gutter` of that many cells (the
    last one cut when it does not fit whole), and how many characters of that last line were cut (0: every
    shown line is whole). The terminal wraps a line's rest to the screen's left edge: only its first row has
    the gutter (counting it on every row took a row too many and cut a command that fits)."""
    if limit is None:
        return lines, 0
    if columns is None:
        return lines[:limit], 0
    from rich.cells import cell_len

    shown: list[str] = []
    rows_left = limit
    for line in lines:
        rows = max(1, -(-(gutter + cell_len(line)) // columns))  # the rows the terminal wraps it into
        if rows <= rows_left:
            shown.append(line)
            rows_left -= rows
            continue
        if rows_left > 0:  # as much of it as the rows left hold
            kept = _cut_to_cells(line, rows_left * columns - gutter)
            shown.append(kept)
            return shown, len(line) - len(kept)
        break
    return shown, 0


def _cut_to_cells(text: str, cells: int) -> str:
    """The longest start of `text` that takes at most `cells` terminal cells."""
    from rich.cells import cell_len

    kept, used = 0, 0
    for char in text:
        used += cell_len(char)
        if used > cells:
            break
        kept += 1
    return text[:kept]


def welcome_line(model: str, provider: str, project_dir: str, width: int = 80) -> Text:
    """`evo-agent · anthropic/claude-sonnet-4-5 · ~/src/shop · /help for help`, one line of `width` cells.

    Measured in cells after the names' control characters are made visible: a dated or custom model name
    (`--model claude-sonnet-4-5-20250929-…`) left no room even without the directory, and the line wrapped
    at the edge (`/he` / `lp`); a Chinese directory's characters take two cells each."""
    from rich.cells import cell_len

    home = os.path.expanduser("~")
    where = "~" + project_dir[len(home):] if home not in ("", "/") and (
        project_dir == home or project_dir.startswith(home + os.sep)) else project_dir
    where = terminal_line(where)
    name = terminal_line(f"{provider}/{model}")
    cells = max(width - 1, 1)
    head, tail = "evo-agent", " · /help for help"
    room = cells - len(head) - cell_len(name) - 6 - len(tail)
    if room < 9:  # a narrow screen or a long model name: a shorter hint before no directory (it wrapped at 60)
        tail = " · /help"
        room = cells - len(head) - cell_len(name) - 6 - len(tail)
    if room < 9:
        where = ""
        most = cells - len(head) - 3 - len(tail)  # what the model's name may take: it is cut, never the hint
        if most < 2:
            return Text(head[:cells], style="bold")
        if cell_len(name) > most:
            name = _cut_to_cells(name, most - 1) + "…"
        middle = f" · {name}"
    else:
        if cell_len(where) > room:  # the directory's end names it: its start is cut
            where = "…" + _cut_to_cells(where[::-1], room - 1)[::-1]
        middle = f" · {name} · {where}"
    out = Text()
    out.append(head, style="bold")
    out.append(middle)
    out.append(tail, style="evo.dim")
    return out
