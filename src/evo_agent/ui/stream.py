"""Streamed Markdown cut into pieces that can be printed for good while the rest is still arriving.

The app prints finished output into the terminal's scrollback and keeps only the unfinished tail
of an answer in its small live region. `MarkdownStream.feed()` returns the Markdown that is safe to
print now: whole blocks (up to a blank line outside a code fence), and — when the tail would not fit
the live region — whole lines (single line breaks are kept, so a paragraph cut at a line break looks
the same). A code block cut in the middle is closed in the printed piece and reopened in the tail.
"""

from __future__ import annotations

__all__ = ["MarkdownStream"]


def _fence_of(line: str) -> str | None:
    stripped = line.lstrip()
    for mark in ("```", "~~~"):
        if stripped.startswith(mark):
            return stripped
    return None


class MarkdownStream:
    """Feed fragments; get back printable Markdown pieces; `tail` is what stays live."""

    def __init__(self, max_tail_lines: int = 8) -> None:
        self.max_tail_lines = max(1, max_tail_lines)
        self._pending = ""        # text not printed yet (starts inside `_fence` when it is set)
        self._fence: str | None = None   # the opening line of a code block that is still open

    @property
    def tail(self) -> str:
        """The unprinted text, as the live region shows it."""
        return self._pending

    @property
    def empty(self) -> bool:
        return not self._pending

    def feed(self, fragment: str) -> list[str]:
        self._pending += fragment
        return self._cut(final=False)

    def finish(self) -> list[str]:
        """Everything left, as one last piece (an open code block is closed)."""
        pieces = self._cut(final=True)
        self._fence = None
        return pieces

    def _cut(self, *, final: bool) -> list[str]:
        text = self._pending
        if final:
            self._pending = ""
            return [self._wrap(text, self._fence)] if text.strip() else []
        end = text.rfind("\n")
        if end < 0:
            return []
        lines = text[: end + 1].splitlines(keepends=True)
        fence = self._fence
        cut = 0            # characters of `text` that can be printed as whole blocks
        cut_fence = fence  # the fence state at `cut`
        pos = 0
        for line in lines:
            pos += len(line)
            mark = _fence_of(line)
            if fence is None:
                if mark is not None:
                    fence = mark
                elif not line.strip():
                    cut, cut_fence = pos, None
            elif mark is not None and mark.strip("`~") == "":
                fence = None
                cut, cut_fence = pos, None
        pieces: list[str] = []
        if cut:
            pieces.append(self._wrap(text[:cut], self._fence))
            self._fence = cut_fence
            text = text[cut:]
        tail_lines = text.count("\n")
        if tail_lines >= self.max_tail_lines:
            # Too tall for the live region: print whole lines, keep the last few live.
            keep = self.max_tail_lines // 2
            split_lines = text.splitlines(keepends=True)
            head = "".join(split_lines[: len(split_lines) - keep - (0 if text.endswith("\n") else 1)])
            if head:
                fence_at_end = self._fence
                for line in head.splitlines():
                    mark = _fence_of(line)
                    if mark is not None:
                        fence_at_end = None if fence_at_end is not None and mark.strip("`~") == "" else (
                            mark if fence_at_end is None else fence_at_end)
                pieces.append(self._wrap(head, self._fence, close=fence_at_end is not None))
                self._fence = fence_at_end
                text = text[len(head):]
        self._pending = text
        return [p for p in pieces if p.strip()]

    @staticmethod
    def _wrap(text: str, fence: str | None, *, close: bool = False) -> str:
        """`text` as standalone Markdown: reopen a code block it continues, close one it leaves open."""
        if fence is not None:
            text = fence.rstrip("\n") + "\n" + text
        still_open = _open_after(text)
        if close or still_open:
            text = text.rstrip("\n") + "\n" + (still_open or "```")[:3] + "\n"
        return text


def _open_after(text: str) -> str | None:
    """The opening line of a code block left open at the end of `text`, else None."""
    fence = None
    for line in text.splitlines():
        mark = _fence_of(line)
        if mark is None:
            continue
        if fence is None:
            fence = mark
        elif mark.strip("`~") == "":
            fence = None
    return fence
