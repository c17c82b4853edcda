"""The model's answer as Rich Markdown, with single line breaks kept and code blocks on the terminal's colours.

Its own module because rich.markdown, markdown-it and Pygments (rich.syntax) cost ~250 M
instructions (~55 ms) to import: render.answer() imports it at the first answer, so the app
draws its first screen and takes keys without them (start-up, issue #14).
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.syntax import Syntax

from evo_agent.safe_text import terminal_safe

__all__ = ["Answer"]


class _PlainCodeBlock(CodeBlock):
    """A fenced code block without the theme's background (the terminal's own colours stay)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 2),
                     background_color="default")


class Answer(Markdown):
    """The model's Markdown with single line breaks kept (line-by-line output stays line by line)."""

    elements: ClassVar[dict] = {**Markdown.elements, "fence": _PlainCodeBlock, "code_block": _PlainCodeBlock}

    def __init__(self, markup: str) -> None:
        markup = terminal_safe(markup)
        super().__init__(markup, hyperlinks=False, code_theme="ansi_dark", justify="default")
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"
