"""What the app prints, rendered by Rich into a recording console (80 columns): text and colours.

Deterministic: no terminal, no clock, a fixed width and colour system.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from evo_agent.ui import render
from evo_agent.ui.stream import MarkdownStream
from evo_agent.ui.transcript_view import history_renderables


def console(**kwargs) -> Console:
    return render.make_console(width=80, record=True, force_terminal=True, color_system="standard", **kwargs)


def shown(*items, **kwargs) -> str:
    c = console(**kwargs)
    for item in items:
        c.print(item)
    return c.export_text(styles=False)


def ansi(*items) -> str:
    c = console()
    for item in items:
        c.print(item)
    return c.export_text(styles=True)


def test_markdown_keeps_single_line_breaks_and_renders_markup():
    text = shown(render.answer("first line\nsecond line\n\n**bold** and `code`"))
    assert "first line\nsecond line\n" in text
    assert "bold and code" in text and "**" not in text


def test_model_text_cannot_inject_rich_markup_or_escape_sequences():
    hostile = "[bold red]x[/] \x1b]0;pwned\x07 \x1b[2J \u202eevil"
    out = ansi(render.answer(hostile), render.user_prompt(hostile), render.tool_result("bash", {}, hostile, is_error=False))
    assert "\x1b]0" not in out and "\x1b[2J" not in out and "\u202e" not in out and "\x07" not in out
    assert "[bold red]x[/]" in shown(render.user_prompt(hostile))
    assert "^[]0;pwned^G" in shown(render.answer(hostile))


def test_no_background_colours_anywhere():
    items = [render.user_prompt("hi"), render.answer("`code`\n\n```python\nx = 1\n```"),
             render.tool_call("bash", {"command": "ls"}), render.tool_result("bash", {}, "a\nb", is_error=False),
             render.summary_block("<previous-conversation-summary>\nS\n</previous-conversation-summary>")]
    out = ansi(*items)
    assert not any(f"\x1b[{code}m" in out or f";{code}m" in out for code in range(40, 48))
    assert "\x1b[4" not in out.replace("\x1b[49m", "")  # 49 = the terminal's own background


def test_no_color_drops_every_colour(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    import io

    c = render.make_console(io.StringIO(), width=80, force_terminal=True)
    c.print(render.tool_result("edit_file", {"path": "a", "old_string": "x\n", "new_string": "y\n"},
                               "Edited a at line 3: replaced 1 line(s) with 1 line(s)", is_error=False))
    out = c.file.getvalue()
    assert "-x" in out and "\x1b[2m" in out  # dim stays: NO_COLOR is about colour
    assert not any(f"\x1b[{n}m" in out or f";{n}m" in out for n in list(range(30, 38)) + list(range(90, 98)))


def test_tool_call_labels_and_one_line_previews():
    assert shown(render.tool_call("grep", {"pattern": "def main", "path": "src"})) == '● grep("def main" in src)\n'
    assert shown(render.tool_call("read_file", {"path": "README.md"}, depth=1)) == "  ● read_file(README.md)\n"
    out = shown(render.tool_result("bash", {"command": "seq 10"}, "\n".join(map(str, range(1, 11))), is_error=False))
    assert out == "  └  1\n     2\n     3\n     … +7 lines (Ctrl+O shows all)\n"


def test_an_interrupted_tool_is_interrupted_not_an_error():
    for text in ("Not run: the user interrupted the turn (Ctrl+C) before this tool started.",
                 "partial output\n[interrupted; process group killed]",
                 "The tool was interrupted before it returned a result (the session ended while it ran)."):
        assert shown(render.tool_result("bash", {}, text, is_error=True)) == "  └  interrupted\n"
    assert "error: boom" in shown(render.tool_result("bash", {}, "boom", is_error=True))


def test_edit_file_is_a_coloured_unified_diff_numbered_from_the_edited_line():
    edit = {"path": "app.py", "old_string": "a = 1\nb = 2\nc = 3\n", "new_string": "a = 1\nb = 20\nc = 3\n"}
    result = render.tool_result("edit_file", edit, "Edited app.py at line 10: replaced 3 line(s) with 3 line(s)",
                                is_error=False)
    text = shown(result)
    assert text.splitlines() == [
        "  └  Edited app.py at line 10: replaced 3 line(s) with 3 line(s)",
        "       10  a = 1",
        "       11 -b = 2",
        "          +b = 20",
        "       12  c = 3",
    ]
    coloured = ansi(result)
    assert "\x1b[31m-b = 2" in coloured and "\x1b[32m+b = 20" in coloured


def test_write_file_shows_its_lines_as_added():
    text = shown(render.tool_result("write_file", {"path": "n.txt", "content": "one\ntwo\n"},
                                    "Wrote n.txt: 8 bytes, 2 lines", is_error=False))
    assert "+one" in text and "+two" in text


def test_restored_history_shows_prompts_answers_tools_notices_and_the_folded_summary():
    messages = [
        {"role": "user", "content": "<previous-conversation-summary>\n# Goal\nship it\n</previous-conversation-summary>"},
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": [{"type": "text", "text": "Listing."},
                                          {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "README.md",
                                      }]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "sleep 9"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "is_error": True,
                                      "content": "Not run: the user interrupted the turn (Ctrl+C) before this tool started."},
                                     {"type": "text", "text": "[Request interrupted by user]"}]},
    ]
    text = shown(*history_renderables(messages))
    assert "▸ summary of the earlier conversation" in text and "<previous-conversation-summary>" not in text
    assert "› list the files" in text and "› [Request" not in text
    order = ["▸ summary", "› list the files", "Listing.", "● bash(ls)", "└  README.md", "● bash(sleep 9)",
             "└  interrupted", "└  Interrupted by user"]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)


def test_parallel_tool_calls_are_drawn_each_above_its_own_result_as_they_ran():
    calls = [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {"command": f"echo {i}"}} for i in range(3)]
    messages = [
        {"role": "user", "content": "run three"},
        {"role": "assistant", "content": [{"type": "text", "text": "Running."}, *calls]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": f"out-{i}"}
                                     for i in range(3)]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    text = shown(*history_renderables(messages))
    order = ["Running.", "bash(echo 0)", "out-0", "bash(echo 1)", "out-1", "bash(echo 2)", "out-2", "Done."]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)


def test_a_long_history_shows_its_tail_and_counts_the_rest():
    messages = []
    for i in range(25):
        messages += [{"role": "user", "content": f"question {i}"},
                     {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}]
    text = shown(*history_renderables(messages, tail=10))
    assert "15 earlier exchanges in this transcript" in text
    assert "question 14\n" not in text and "› question 15" in text and "answer 24" in text


def _streamed(chunks: list[str]) -> str:
    """What the app prints for an answer arriving in `chunks`: each finished piece as it comes, then the rest."""
    from evo_agent.ui.turn_view import answer_parts

    stream, parts = MarkdownStream(), []
    for chunk in chunks:
        parts += answer_parts(stream.feed(chunk))
    parts += answer_parts(stream.finish())
    return shown(*parts)


def test_markdown_stream_prints_whole_blocks_as_soon_as_the_next_begins():
    stream = MarkdownStream()
    assert stream.feed("para one\nstill one\n\npara tw") == []  # "para tw" is not a whole line yet
    (piece,) = stream.feed("o\n")
    assert piece.text == "para one\nstill one\n\n" and not piece.gap_before and stream.tail == "para two\n"
    assert stream.feed("```py\n" + "".join(f"x{i}\n" for i in range(40))) == [piece.__class__("para two\n", True)]
    assert stream.tail.startswith("```py\nx0\n")  # a code block stays whole until it closes


def test_a_streamed_numbered_list_is_one_list():
    items = "".join(f"{i}. item {i}\n\n" for i in range(1, 13))
    whole = shown(render.answer(items + "Done."))
    assert _streamed([line + "\n" for line in (items + "Done.").split("\n")]) == whole
    assert " 9 item 9" in whole and "12 item 12" in whole  # one width for every number


def test_a_fence_inside_a_longer_fence_is_one_block():
    answer = "Example:\n\n````md\n```py\nx = 1\n```\n````\n\nThat is all."
    assert _streamed(list(answer)) == shown(render.answer(answer))


def test_a_long_line_shows_its_newest_words_in_the_live_region():
    from evo_agent.ui.turn_view import wrapped_tail

    line = " ".join(f"w{i}" for i in range(200))
    rows = wrapped_tail(line, 40, 3)
    assert len(rows) == 3 and rows[-1].endswith("w199") and all(len(r) <= 40 for r in rows)
    assert wrapped_tail("漢字" * 30, 10, 2) == ["漢字漢字漢", "字漢字漢字"]


_STREAMED = st.lists(st.sampled_from(["a", "b", " ", " ", "漢", "字", "é", "🎉", "\n", "xyzzy", "superlongwordthatgoeson"]),
                     max_size=120).map("".join)


@settings(max_examples=200, deadline=None)
@given(_STREAMED, st.integers(min_value=4, max_value=100), st.integers(min_value=1, max_value=30))
def test_the_live_region_wraps_a_streaming_line_between_words(text, width, rows):
    """The streaming tail was cut at the screen's last cell: ` w17 …` started a row with the blank, and a word
    could show in two pieces until its block was printed again, wrapped between words."""
    from rich.cells import cell_len

    from evo_agent.ui.turn_view import wrapped_tail

    shown_rows = wrapped_tail(text, width, rows)
    assert len(shown_rows) <= rows and all(cell_len(row) <= width for row in shown_rows), shown_rows
    if len(wrapped_tail(text, width, 10_000)) <= rows:  # all of it shows: its words, in order, each whole
        words = [w for line in text.split("\n") for w in line.split()]
        fitting = [w for w in words if cell_len(w) <= width and not any(c in w for c in "漢字")]
        shown_words = [w for row in shown_rows for w in row.split()]
        assert all(w in shown_words for w in fitting), (shown_rows, fitting)
        assert "".join(shown_words) == "".join(words), shown_rows


def test_a_streaming_row_never_starts_with_the_blank_between_two_words():
    from evo_agent.ui.turn_view import wrapped_tail

    rows = wrapped_tail("Streaming starts here. " + " ".join(f"w{j}" for j in range(60)), 80, 10)
    assert rows[1].startswith("w17 ") and not any(row.startswith(" ") for row in rows), rows


_BLOCKS = st.sampled_from([
    "A paragraph with `code` and **bold**.", "Two lines\nof one paragraph.", "# A heading", "Title\n=====",
    "- a\n- b", "1. one\n2. two", "3. three\n\n4. four", "> a quote\n> goes on", "---",
    "```py\nx = 1\n\ny = 2\n```", "````\n```\ninner\n```\n````", "| a | b |\n|---|---|\n| 1 | 2 |",
    "    indented code", "- item\n\n  more of the item", "~~~\ntilde\n~~~", "src/**/*.py and **/*.md",
])


@settings(max_examples=60, deadline=None)
@given(st.lists(_BLOCKS, min_size=1, max_size=6), st.lists(st.integers(min_value=0, max_value=400), max_size=12),
       st.sampled_from(["\n\n", "\n"]))
def test_any_answer_split_anywhere_prints_as_the_whole_answer(blocks, cuts, gap):
    answer = gap.join(blocks)
    points = sorted({c % (len(answer) + 1) for c in cuts})
    chunks = [answer[a:b] for a, b in zip([0, *points], [*points, len(answer)]) if answer[a:b]]
    assert _streamed(chunks) == shown(render.answer(answer))


def test_the_welcome_line_fits_the_terminal():
    line = shown(render.welcome_line("claude-sonnet-4-5", "anthropic", "/tmp/" + "deep/" * 30 + "project", 80))
    assert len(line.rstrip("\n")) <= 80 and line.startswith("evo-agent · anthropic/claude-sonnet-4-5 · …")
    assert line.rstrip().endswith("/project · /help for help")


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80), st.sampled_from(["anthropic", "openai", "demo"]),
       st.text(min_size=1, max_size=120), st.integers(min_value=10, max_value=220))
def test_the_welcome_line_is_one_line_whatever_the_model_directory_and_width(model, provider, directory, width):
    """A long model name (`--model claude-sonnet-4-5-20250929-…`) wrapped the line at 80 columns (`/he` / `lp`); a
    directory of Chinese characters or escapes took more cells than its length."""
    line = render.welcome_line(model, provider, "/" + directory, width)
    assert "\n" not in line.plain and line.cell_len <= width - 1, (line.plain, line.cell_len)
    assert line.plain.startswith("evo-agent")
    if width >= 20:
        assert line.plain.endswith(" · /help") or line.plain.endswith(" · /help for help"), line.plain


def test_a_long_model_name_is_cut_in_the_welcome_not_the_help_hint():
    line = render.welcome_line("claude-sonnet-4-5-20250929-with-a-really-long-suffix-for-a-proxy", "anthropic",
                               "/tmp/project", 80).plain
    assert line.startswith("evo-agent · anthropic/claude-sonnet-4-5-20250929") and line.endswith("… · /help")
    assert len(line) == 79, line
    chinese = render.welcome_line("claude-sonnet-4-5", "anthropic", "/home/项目/" + "很长的目录名" * 10, 80)
    assert chinese.cell_len <= 79 and chinese.plain.endswith("很长的目录名 · /help for help"), chinese.plain


def test_a_long_prompt_is_echoed_by_its_start_and_a_count_of_the_rest():
    """A 5,000-line paste was echoed whole: the conversation before it left the terminal's scrollback."""
    log = "\n".join(f"line {i}: ERROR something failed" for i in range(5000))
    lines = shown(render.user_prompt("what is wrong here?\n" + log)).splitlines()
    assert lines[0] == "› what is wrong here?" and lines[1] == "  line 0: ERROR something failed", lines
    assert len(lines) == render.PROMPT_SHOWN_LINES + 1 and lines[-1] == "  … 4,981 more lines not shown (all sent)"
    minified = shown(render.user_prompt("x" * 10_000)).splitlines()
    assert minified[-1] == "  … 6,000 more characters not shown (all sent)", minified[-1]
    typed = "\n".join(f"row {i}" for i in range(render.PROMPT_SHOWN_LINES + 4))  # never 4 lines or fewer hidden
    assert shown(render.user_prompt(typed)).splitlines()[-1] == f"  row {render.PROMPT_SHOWN_LINES + 3}"


def test_globs_and_paths_in_an_answer_keep_their_stars():
    # Two globs in one paragraph: CommonMark pairs their inner `*` runs and italicises what lies between.
    for written in ("run glob with **/*.py and **/*.md", "files: src/**/*.py, tests/**/*.py",
                    "run glob with **/*.py", "src/*.{js,ts} and lib/*.{js,ts}"):
        assert shown(render.answer(written)).strip() == written
    out = ansi(render.answer("run glob with **/*.py and **/*.md"))
    assert "\x1b[3m" not in out and "\x1b[1m" not in out  # neither italic nor bold


def test_emphasis_as_people_write_it_still_renders():
    assert shown(render.answer("**bold** and *it* beside **/*.py")).strip() == "bold and it beside **/*.py"
    assert shown(render.answer("the **/etc/hosts** file")).strip() == "the /etc/hosts file"
    assert shown(render.answer("**Input**/**Output**")).strip() == "Input/Output"
    assert shown(render.answer("use `**/*.py`")).strip() == "use **/*.py"


def test_a_tool_call_and_its_preview_fit_the_width_they_are_given():
    call = render.tool_call("bash", {"command": "echo " + "漢字" * 30}, width=40)
    assert shown(call).rstrip("\n").endswith("…") and call.cell_len <= 40
    result = render.tool_result("bash", {}, "x" * 200 + "\nsecond", is_error=False, width=40)
    lines = shown(result).splitlines()
    assert [len(line) for line in lines] == [40, 11] and lines[0].endswith("…") and lines[1] == "     second"
    assert shown(render.tool_call("bash", {"command": "ls"}, width=40)) == "● bash(ls)\n"


def test_an_approvals_command_is_numbered_highlighted_whole_and_harmless():
    command = "for f in *; do\n  echo \"$f\" \x1b]0;pwned\x07 [bold]x[/]\ndone\n" + "true\n" * 30
    body, hidden = render.approval_detail("bash", command)
    text = shown(body)
    assert hidden == 0 and "  1 for f in *; do" in text and " 33 true" in text
    assert '  2   echo "$f" ^[]0;pwned^G [bold]x[/]' in text  # shown as written, acted on by nothing
    assert "\x1b]" not in ansi(body) and "\x07" not in ansi(body)
    assert "\x1b[" in ansi(body)  # coloured by the bash lexer
    cut, hidden = render.approval_detail("bash", command, limit=5)
    assert hidden == 28 and "… 28 more lines not shown (33 in all): Ctrl+O shows them all" in shown(cut)
    assert " 6 true" not in shown(cut)
    diff, hidden = render.approval_detail("edit_file", "--- a/x\n+++ b/x\n-old\n+new\n", limit=3)
    assert hidden == 1 and "-old" in shown(diff) and "+new" not in shown(diff)


_prose_words = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12), min_size=1,
                        max_size=40).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_prose_words, min_size=1, max_size=3), width=st.integers(20, 120))
def test_a_long_prompt_wraps_under_its_first_word(lines, width):
    """A prompt wider than the screen continues indented under its text, as Claude Code's does (it began at
    the left edge, under the `›`), and no line passes the width; the words stay in order."""
    prompt = "\n".join(lines)
    shown = render.user_prompt(prompt).wrapped(width).plain.split("\n")
    assert shown[0].startswith("› ")
    assert all(line.startswith("  ") for line in shown[1:])
    assert all(len(line) <= width for line in shown)
    assert " ".join(" ".join(shown)[2:].split()) == " ".join(prompt.split())
