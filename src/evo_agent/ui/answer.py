"""The model's answer as Rich Markdown, with single line breaks kept and code blocks on the terminal's colours.

Its own module because rich.markdown, markdown-it and Pygments (rich.syntax) cost ~250 M
instructions (~55 ms) to import: render.answer() imports it at the first answer, so the app
draws its first screen and takes keys without them (start-up, issue #14).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, Paragraph, TableElement
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table

from evo_agent.safe_text import terminal_safe

from .render import TERMINAL_WRAPS, Prose

__all__ = ["Answer"]


class _PlainCodeBlock(CodeBlock):
    """A fenced code block without the theme's background (the terminal's own colours stay).

    Printed by the app (a console marked `TERMINAL_WRAPS`, printing with crop=False), a line wider than the
    screen is left whole for the terminal to wrap, as a command in an approval is: Rich's wrap put a line
    break and an indent inside it, so a long `docker run …` copied from the answer into a shell ran its first
    half alone. Nested in a list or a quote (narrower than the screen), or elsewhere, it is wrapped."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        if not getattr(console, TERMINAL_WRAPS, False) or options.max_width < console.width:
            yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 2),
                         background_color="default")
            return
        highlighted = Syntax(code, self.lexer_name, theme=self.theme, background_color="default").highlight(code)
        highlighted.rstrip()
        for line in highlighted.split("\n", allow_blank=True):
            yield Segment("  ")
            yield from line.render(console)
            yield Segment.line()


class _Paragraph(Paragraph):
    """A paragraph whose word wider than the screen (a long URL, a path) is left whole for the terminal to wrap,
    when the app prints it (as a code block's line, above): Rich folded it at the edge with a line break, and
    the URL copied from the screen was two pieces. Nested in a list or a quote, where Rich crops what is wider
    than the room it gives, it is still folded."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not getattr(console, TERMINAL_WRAPS, False) or options.max_width < console.width:
            yield from super().__rich_console__(console, options)
            return
        prose = Prose()  # wrapped between words, a word wider than the screen left whole (render.Prose)
        prose.append_text(self.text)
        wrapped = prose.wrapped(options.max_width)
        wrapped.overflow = "ignore"  # Rich wraps it no further, and crops nothing
        yield wrapped


class _Heading(Heading):
    """Every heading at the left edge, as Claude Code and Codex put theirs: Rich centres a `#` heading, which
    stood alone in the middle of a left-aligned conversation (and further off after the terminal widened)."""

    LEVEL_ALIGN: ClassVar[dict[str, Any]] = dict.fromkeys(Heading.LEVEL_ALIGN, "left")


class _Table(TableElement):
    """A table without Rich's blank top and bottom edges, its cells folded instead of cut.

    Rich's own drew an empty row above and below the table, so with the blank line between blocks two empty
    lines stood on each side; and a cell's word wider than its column (a file's path, the reason the table
    was written) was cut to `src/evo_agent/ui/…`. A folded path still reads whole.
    """

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=box.SIMPLE, pad_edge=False, style="markdown.table.border", show_edge=False,
                      collapse_padding=True)
        if self.header is not None and self.header.row is not None:
            for column in self.header.row.cells:
                heading = column.content.copy()
                heading.stylize("markdown.table.header")
                table.add_column(heading, overflow="fold")
        for row in self.body.rows if self.body is not None else ():
            table.add_row(*(cell.content for cell in row.cells))
        yield table


def _path_stars(state: Any, silent: bool) -> bool:
    """An inline rule: a `*` run inside a path or glob (`src/**/*.py`) is text, never emphasis.

    CommonMark lets a run with non-space on both sides both open and close emphasis, so two globs in
    one paragraph (`**/*.py and **/*.md`) pair up and the text between them turns italic or bold, the
    stars gone. Rich renders what CommonMark says, so the answer no longer shows what the model wrote.
    Such a run that also touches a `/` is a path, not markup: it stays literal. Emphasis as people
    write it (`**bold**`, `*word*`, `**/etc/hosts**`) opens after a space or closes before one, so it
    is never both-flanking and is left alone; `**/*.py` alone was never emphasised and still is not.
    """
    pos, src = state.pos, state.src
    if src[pos] != "*":
        return False
    scanned = state.scanDelims(pos, True)
    end = pos + scanned.length
    before = src[pos - 1] if pos > 0 else " "
    after = src[end] if end < state.posMax else " "
    if not (scanned.can_open and scanned.can_close and "/" in (before, after)):
        return False
    if not silent:
        state.push("text", "", 0).content = src[pos:end]
    state.pos = end
    return True


def _make_parser() -> Any:
    """Rich's own parser (CommonMark with strikethrough and tables) plus `_path_stars`."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt().enable("strikethrough").enable("table")
    parser.inline.ruler.before("emphasis", "path_stars", _path_stars)
    return parser


_PARSER = _make_parser()  # built once, when the first answer imports this module


class Answer(Markdown):
    """The model's Markdown with single line breaks kept (line-by-line output stays line by line) and
    the stars of paths and globs shown as written (see `_path_stars`)."""

    elements: ClassVar[dict] = {**Markdown.elements, "fence": _PlainCodeBlock, "code_block": _PlainCodeBlock,
                                "table_open": _Table, "heading_open": _Heading, "paragraph_open": _Paragraph}

    def __init__(self, markup: str) -> None:
        markup = terminal_safe(markup)
        super().__init__("", hyperlinks=False, code_theme="ansi_dark", justify="default")
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"
