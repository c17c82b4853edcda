"""The session picker (SPEC §5): row text, filtering, sizes, the tail preview, and the keys in-process.

The real console script in a real terminal is in test_picker_tmux.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import tracemalloc

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from evo_agent.session import SessionInfo, SessionMeta, SessionStore
from evo_agent.ui import picker
from evo_agent.ui.picker import (
    cell_len,
    filter_rows,
    format_row,
    format_tokens,
    format_updated,
    header_row,
    pick_session,
    plan_heights,
    read_last_exchange,
    run_picker,
    truncate_cells,
    wrap_cells,
)
from evo_agent.ui.picker_view import PickerView
from tests.builders import write_sessions_fast

from .picker_helpers import BASE_MS, DAY_MS, plant, three_out_of_order

OSC_TITLE = "\x1b]0;PWNED\x07"


def info(first_prompt: str | None, *, created_ms: int = BASE_MS, updated_ms: int = BASE_MS + DAY_MS,
         tokens: tuple[int, int] = (12_000, 450), messages: int = 12, branch: str | None = "main",
         **extra) -> SessionInfo:
    meta = SessionMeta(id=f"{created_ms}_0123abcd", created_ms=created_ms, updated_ms=updated_ms,
                       first_prompt=first_prompt, total_input_tokens=tokens[0], total_output_tokens=tokens[1],
                       message_count=messages, git_branch=branch)
    for key, value in extra.items():
        setattr(meta, key, value)
    return SessionInfo(meta, "/nonexistent")


# Row text -------------------------------------------------------------------------------------------


def test_row_shows_last_update_count_tokens_branch_and_prompt_in_plain_quotes():
    row = format_row(info("fix the flaky upload test"), 100)
    assert row.startswith(format_updated(BASE_MS + DAY_MS))  # the update, not the creation
    assert format_updated(BASE_MS) not in row
    assert "  12  " in row and "12.4k" in row and " main " in row
    assert row.endswith('"fix the flaky upload test"')
    assert "「" not in row and "」" not in row
    assert cell_len(row) <= 100


def test_header_lines_up_with_the_rows():
    row, head = format_row(info("x"), 100), header_row(100)
    assert head.index("Msgs") + 4 == row.index("12") + 2  # right-aligned columns
    assert head.index("Branch") == row.index("main")
    assert "Branch" not in header_row(60) and "main" not in format_row(info("x"), 60)


@pytest.mark.parametrize("width", [58, 70, 78, 118])
def test_row_fits_its_width_and_cuts_the_prompt_with_an_ellipsis(width):
    long = info("fix the flaky upload test that fails every third run on CI " * 3)
    text = format_row(long, width)
    assert cell_len(text) <= width and text.endswith('…"')
    wide = format_row(info("添加中文支持" * 20), width)
    assert cell_len(wide) <= width and wide.endswith('…"')


def test_row_shows_the_name_when_the_session_has_one():
    assert 'nightly-fix: "fix the flaky upload test"' in format_row(info("fix the flaky upload test",
                                                                          name="nightly-fix"), 100)
    assert ": " not in format_row(info("fix it"), 100).split("main", 1)[1]


def test_control_sequences_from_a_session_are_made_harmless():
    row = format_row(info(f"retitle {OSC_TITLE} now\u202eevil", branch="x\x1b[2Jy"), 120)
    assert "\x1b" not in row and "\x07" not in row and "\u202e" not in row
    assert "^[]0;PWNED^G" in row and "x^[[2Jy" in row


def test_missing_prompt_and_token_formats():
    assert format_row(info(None), 80).endswith('"(no prompt)"')
    assert [format_tokens(n) for n in (0, 950, 12_450, 250_000, 3_100_000)] == ["0", "950", "12.4k", "250k", "3.1M"]


def test_truncate_and_wrap_by_cells():
    assert truncate_cells("hello", 5) == "hello"
    assert truncate_cells("hello world", 6) == "hello…"
    assert truncate_cells("中文中文", 5) == "中文…"
    assert wrap_cells("one two three four five six", 9, 2) == ["one two", "three…"]
    assert wrap_cells("line one\nline two", 20, 5) == ["line one", "line two"]
    assert all(cell_len(x) <= 7 for x in wrap_cells("averyveryverylongword and more", 7, 9))


# Sizes ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [15, 16, 24, 30, 40, 60])
def test_the_picker_fits_the_terminal_height(rows):
    listed, preview = plan_heights(rows, 10_000)
    assert 4 + listed + preview <= rows - 1  # title, filter, header, status; the cursor's line spare
    assert listed >= 5
    assert preview >= 4 if rows >= 15 else True


def test_more_rows_on_a_taller_terminal_and_few_sessions_take_few_rows():
    assert plan_heights(40, 10_000)[0] > plan_heights(24, 10_000)[0] > 12  # not always 15 rows
    assert plan_heights(24, 3)[0] == 3


# Filtering --------------------------------------------------------------------------------------------


def test_filter_matches_prompt_name_branch_and_id_case_insensitively():
    rows = [info("Fix the Flaky upload", created_ms=BASE_MS + 1), info("add docs", created_ms=BASE_MS + 2,
            branch="feature/Parser"), info("other", created_ms=BASE_MS + 3, name="Nightly")]
    assert filter_rows(rows, "flaky  UPLOAD") == [rows[0]]
    assert filter_rows(rows, "parser") == [rows[1]]
    assert filter_rows(rows, "nightly") == [rows[2]]
    assert filter_rows(rows, str(BASE_MS + 3)) == [rows[2]]
    assert filter_rows(rows, "") is rows and filter_rows(rows, "nothing like it") == []


# The preview: the last exchange, from the tail ----------------------------------------------------


def test_preview_is_the_last_human_prompt_and_the_start_of_its_answer(store):
    s = plant(store, created_ms=BASE_MS, updated_ms=BASE_MS + DAY_MS, prompt="first", exchanges=3,
              last_prompt="the last question", answer=f"an answer {OSC_TITLE}\nsecond line")
    rec_dir = store.sessions_dir / s.id
    exchange = read_last_exchange(rec_dir)
    assert exchange.prompt == "the last question"
    assert exchange.answer.startswith("an answer ^[]0;PWNED^G\nsecond line")


def test_preview_skips_tool_results_and_the_interruption_notice(store):
    rec = store.create(model="m", provider="demo", git_branch=None)
    rec.user({"role": "user", "content": "list the files"})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                   {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]})
    rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"}]})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "Two files."}]})
    rec.user({"role": "user", "content": "[Request interrupted by user]"})
    exchange = read_last_exchange(store.sessions_dir / rec.session_id)
    assert exchange.prompt == "list the files"
    assert exchange.answer == "Looking.\nTwo files."


def test_preview_reads_only_the_tail_of_a_huge_transcript(store):
    s = plant(store, created_ms=BASE_MS, updated_ms=BASE_MS, prompt="old prompt")
    path = store.sessions_dir / s.id / "messages.jsonl"
    with open(path, "r+b") as f:  # 1 GiB of hole before the last exchange
        f.truncate(1 << 30)
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + json.dumps({"type": "user", "message": {"role": "user", "content": "recent"}}).encode()
                + b"\n" + json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "yes"}}).encode()
                + b"\n")
    tracemalloc.start()
    try:
        exchange = read_last_exchange(path.parent)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert exchange.prompt == "recent" and exchange.answer == "yes"
    assert peak < 1 << 20  # a 64 KiB read, not the file


def test_preview_when_the_prompt_is_further_back_than_the_tail(store):
    rec = store.create(model="m", provider="demo", git_branch=None)
    rec.user({"role": "user", "content": "the prompt"})
    for n in range(30):  # 300 KB of tool output after the prompt
        rec.assistant({"role": "assistant", "content": [{"type": "text", "text": f"step {n}"},
                       {"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {"command": "cat"}}]})
        rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                               "content": "y" * 10_000}]})
    exchange = read_last_exchange(store.sessions_dir / rec.session_id)
    assert exchange.prompt is None and exchange.answer.startswith("step 2")
    assert read_last_exchange(store.sessions_dir / "nowhere") is None


def test_preview_of_one_answer_longer_than_the_tail(store):
    s = plant(store, created_ms=BASE_MS, updated_ms=BASE_MS, prompt="the prompt", answer="x" * 100_000)
    exchange = read_last_exchange(store.sessions_dir / s.id)
    assert exchange.prompt == "the prompt" and exchange.answer == "x" * 600


# The keys, in-process (prompt_toolkit's pipe input; the terminal is in test_picker_tmux.py) -----------

UP, DOWN, HOME, END, PGDN, ENTER, ESC = "\x1b[A", "\x1b[B", "\x1b[H", "\x1b[F", "\x1b[6~", "\r", "\x1b"


async def pick(store: SessionStore, keys: str, *, rows: int = 24, columns: int = 80, exclude=()) -> str | None:
    """Run `pick_session` on a pipe input holding `keys`; a screen of `rows`×`columns`."""
    with create_pipe_input() as inp:
        out = Vt100_Output(io.StringIO(), lambda: Size(rows=rows, columns=columns), term="xterm", enable_cpr=False)
        inp.send_text(keys)
        return await asyncio.wait_for(pick_session(store.project_dir, store=store, input=inp, output=out,
                                                  exclude=exclude), 20)


async def test_enter_resumes_the_newest_update_and_arrows_move(store):
    readme, parser, upload = three_out_of_order(store)
    assert await pick(store, ENTER) == readme.id
    assert await pick(store, DOWN + DOWN + DOWN + UP + ENTER) == parser.id


async def test_home_end_and_page_down(store):
    ids = write_sessions_fast(store, 50, base_ms=BASE_MS)
    assert await pick(store, END + ENTER) == ids[0]
    assert await pick(store, END + HOME + ENTER) == ids[-1]
    listed, _ = plan_heights(24, 50)
    assert await pick(store, PGDN + ENTER) == ids[-listed]  # one page less one row down


async def test_typing_filters_and_esc_cancels(store):
    readme, parser, upload = three_out_of_order(store)
    assert await pick(store, "UPLOAD" + ENTER) == upload.id
    assert await pick(store, "no such thing" + ENTER + ESC) is None  # Enter with no row keeps it open
    assert await pick(store, DOWN + ESC) is None


async def test_the_live_session_is_not_offered_and_an_empty_project_draws_nothing(store, tmp_path):
    readme, parser, upload = three_out_of_order(store)
    assert await pick(store, ENTER, exclude=[readme.id]) == parser.id
    assert await pick_session(tmp_path / "nowhere") is None  # no terminal touched: nothing to show


def test_run_picker_with_no_session_returns_none_without_a_terminal(tmp_path):
    assert run_picker(tmp_path / "nowhere") is None


async def wait_until(predicate, what: str, timeout: float = 20) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def test_ten_thousand_sessions_first_screen_then_the_whole_list(store):
    ids = write_sessions_fast(store, 10_000, base_ms=BASE_MS)
    with create_pipe_input() as inp:
        out = Vt100_Output(io.StringIO(), lambda: Size(rows=24, columns=80), term="xterm", enable_cpr=False)
        view = PickerView.for_project(store.project_dir, store=store, input=inp, output=out)
        assert len(view.all_rows) == plan_heights(24, 10_000)[0] and view.rest_pending  # the first screen only
        rows_text = "".join(t for _, t in view.list_fragments()).splitlines()
        assert rows_text[0].startswith("> ") and rows_text[0].rstrip().endswith('"prompt number 9999"')
        assert len(rows_text) == len(view.all_rows)
        task = asyncio.create_task(view.run())
        inp.send_text(END)  # pressed before the rest arrives: the end of the whole list all the same
        await wait_until(lambda: not view.rest_pending, "the whole list")
        await wait_until(lambda: view.highlighted_info.id == ids[0], "End to reach the oldest session")
        assert len(view.all_rows) == 10_000 and [r.id for r in view.all_rows] == [r.id for r in store.list()]
        inp.send_text("number 42")
        await wait_until(lambda: len(view.rows) == 111, "the filter over the whole list")  # 42, 420-429, 4200-4299
        inp.send_text(DOWN + ENTER)
        assert await asyncio.wait_for(task, 20) == ids[4298]  # newest first: 4299, then 4298


def test_importing_the_picker_loads_neither_prompt_toolkit_nor_textual():
    code = ("import sys, evo_agent.ui.picker; "
            "print(sorted(m for m in ('prompt_toolkit', 'textual', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_module_exports_the_two_entry_points():
    assert callable(picker.run_picker) and asyncio.iscoroutinefunction(picker.pick_session)


async def test_sigterm_ends_pick_session_and_the_loops_own_handlers_come_back(store):
    """Inside the app: SIGTERM/SIGHUP end the picker with SignalExit, then the app's handlers are back."""
    import signal

    three_out_of_order(store)
    loop = asyncio.get_running_loop()
    app_handled: list[int] = []
    for signum in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, app_handled.append, signum)
    try:
        with create_pipe_input() as inp:
            out = Vt100_Output(io.StringIO(), lambda: Size(rows=24, columns=80), term="xterm", enable_cpr=False)
            view = PickerView.for_project(store.project_dir, store=store, input=inp, output=out)
            painted = asyncio.Event()
            view.app.after_render += lambda _app: painted.set()
            task = asyncio.create_task(view.run())
            await asyncio.wait_for(painted.wait(), 20)
            os.kill(os.getpid(), signal.SIGTERM)
            with pytest.raises(picker.SignalExit) as ended:
                await asyncio.wait_for(task, 20)
            assert ended.value.exit_code == 143 and app_handled == []
        os.kill(os.getpid(), signal.SIGHUP)  # the picker is gone: the app's handler answers again
        await wait_until(lambda: app_handled == [signal.SIGHUP], "the app's own SIGHUP handler")
    finally:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)


async def test_closed_input_ends_pick_session_as_a_hangup(store):
    three_out_of_order(store)
    with create_pipe_input() as inp:
        out = Vt100_Output(io.StringIO(), lambda: Size(rows=24, columns=80), term="xterm", enable_cpr=False)
        view = PickerView.for_project(store.project_dir, store=store, input=inp, output=out)
        painted = asyncio.Event()
        view.app.after_render += lambda _app: painted.set()
        task = asyncio.create_task(view.run())
        await asyncio.wait_for(painted.wait(), 20)
        inp.close()  # the write end: reads now hit EOF
        with pytest.raises(picker.SignalExit) as ended:
            await asyncio.wait_for(task, 20)
        assert ended.value.exit_code == 129


async def test_pick_session_inside_a_running_prompt_while_it_is_suspended(store, monkeypatch):
    """How the app calls it: from a key binding (or a /resume handler) of a running prompt_toolkit
    prompt, inside `in_terminal()`; the prompt comes back afterwards with its text intact."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import in_terminal
    from prompt_toolkit.key_binding import KeyBindings

    readme, parser, upload = three_out_of_order(store)
    chosen: list[str | None] = []
    views: list[PickerView] = []
    run = PickerView.run

    async def run_and_note(self):
        views.append(self)
        return await run(self)

    monkeypatch.setattr(PickerView, "run", run_and_note)
    with create_pipe_input() as inp:
        out = Vt100_Output(io.StringIO(), lambda: Size(rows=24, columns=80), term="xterm", enable_cpr=False)
        kb = KeyBindings()

        @kb.add("c-r")
        def _resume(event) -> None:
            async def pick() -> None:
                async with in_terminal():
                    chosen.append(await pick_session(store.project_dir, store=store, input=inp, output=out))
            event.app.create_background_task(pick())

        session = PromptSession(input=inp, output=out, key_bindings=kb)
        prompt = asyncio.create_task(session.prompt_async("> "))
        inp.send_text("ab\x12")  # typed text, then Ctrl+R
        await wait_until(lambda: session.app.is_running and session.default_buffer.text == "ab", "the prompt")
        await wait_until(lambda: views and views[0].painted, "the picker")
        inp.send_text(DOWN + ENTER)
        await wait_until(lambda: chosen, "the picker's answer")
        inp.send_text("c\r")
        assert await asyncio.wait_for(prompt, 20) == "abc"
    assert chosen == [parser.id]


# Content matches: the fallback group (issue #19) ------------------------------------------------------

async def _open_view(store: SessionStore, inp, rows: int = 24, columns: int = 80) -> PickerView:
    out = Vt100_Output(io.StringIO(), lambda: Size(rows=rows, columns=columns), term="xterm", enable_cpr=False)
    return PickerView.for_project(store.project_dir, store=store, input=inp, output=out)


async def test_typing_finds_sessions_by_content_after_the_title_matches(store):
    readme, parser, upload = three_out_of_order(store)
    deep = plant(store, created_ms=BASE_MS + 7 * DAY_MS, updated_ms=BASE_MS + 7 * DAY_MS, prompt="tidy the logs",
                 answer="The culprit was the zebra-unicorn cache in upload.py.", suffix="000000a4")
    with create_pipe_input() as inp:
        view = await _open_view(store, inp)
        task = asyncio.create_task(view.run())
        inp.send_text("upload")  # a first prompt ("fix the flaky upload test") and an answer both hold it
        await wait_until(lambda: deep.id in view.content and not view.search.running, "the content match")
        assert [r.id for r in view.rows] == [upload.id, deep.id]  # title matches first, then content ones
        rows = "".join(t for _, t in view.list_fragments()).splitlines()
        assert rows[0].startswith("> ") and '"fix the flaky upload test"' in rows[0]
        assert 'content: "' in rows[1] and "upload.py" in rows[1]
        assert "(1 by content)" in view.status_text()
        inp.send_text(DOWN)
        await wait_until(lambda: view.highlighted_info.id == deep.id, "the highlight on the content match")
        preview = "".join(t for _, t in view.preview_fragments())
        assert "found in an answer: The culprit was the zebra-unicorn cache in upload.py." in preview
        inp.send_text(ENTER)
        assert await asyncio.wait_for(task, 20) == deep.id


async def test_the_next_keystroke_replaces_a_content_search(store):
    three_out_of_order(store)
    deep = plant(store, created_ms=BASE_MS + 7 * DAY_MS, updated_ms=BASE_MS + 7 * DAY_MS, prompt="tidy the logs",
                 answer="zebra-unicorn", suffix="000000a4")
    with create_pipe_input() as inp:
        view = await _open_view(store, inp)
        task = asyncio.create_task(view.run())
        inp.send_text("zebra")
        await wait_until(lambda: deep.id in view.content, "the content match")
        inp.send_text("-x")  # matches nothing: the earlier match goes, and no late result brings it back
        await wait_until(lambda: not view.search.running and view.filter.text == "zebra-x", "the new search")
        assert view.content == {} and view.rows == []
        inp.send_text(ESC)
        assert await asyncio.wait_for(task, 20) is None


async def test_short_filters_are_not_searched_inside(store):
    three_out_of_order(store)
    with create_pipe_input() as inp:
        view = await _open_view(store, inp)
        task = asyncio.create_task(view.run())
        inp.send_text("zz")
        await wait_until(lambda: view.filter.text == "zz", "the filter")
        assert not view.search.running and view.rows == []
        inp.send_text(ESC)
        assert await asyncio.wait_for(task, 20) is None


async def test_a_team_store_that_cannot_be_read_is_one_line_in_the_team_view(store):
    readme, parser, upload = three_out_of_order(store)

    def unreachable():
        return [], "evo-agent: cannot connect to the team store postgresql://evo:***@127.0.0.1:9/x"

    with create_pipe_input() as inp:
        out = Vt100_Output(io.StringIO(), lambda: Size(rows=24, columns=80), term="xterm", enable_cpr=False)
        view = PickerView.for_project(store.project_dir, store=store, input=inp, output=out, team=unreachable)
        task = asyncio.create_task(view.run())
        inp.send_text("\t")
        await wait_until(lambda: view.team_error is not None, "the team store's answer")
        shown = "".join(t for _, t in view.list_fragments())
        assert "cannot connect to the team store" in shown and view.rows == []
        inp.send_text("\t" + ENTER)  # back to this machine's sessions
        assert await asyncio.wait_for(task, 20) == readme.id


def test_a_content_excerpt_starts_just_before_the_match():
    snippet = "…the long beginning of an answer that goes on and on before the zebra-unicorn cache was found"
    out = picker.excerpt(snippet, "unicorn", 24)
    assert out.startswith("…") and out.index("unicorn") <= 7 and out.endswith("was found")
    assert picker.excerpt("short unicorn", "unicorn", 24) == "short unicorn"
    assert picker.excerpt("no match\nhere", "absent", 24) == "no match here"
