"""The /resume picker (SPEC §5): order, row format, filter, Enter, Esc, 10,000 sessions."""

from __future__ import annotations

from datetime import datetime

import pytest
from rich.cells import cell_len

from evo_agent.session import SessionInfo, SessionMeta, SessionStore
from evo_agent.ui.picker import PickerApp, SessionList, SessionPicker, format_row, run_picker, truncate_cells

from .conftest import make_session, write_sessions_fast

SIZE = (110, 30)
BASE_MS = 1_780_000_000_000


def three_sessions(store: SessionStore) -> list[str]:
    """Oldest first: ids with increasing creation times; updates happen in the same order."""
    prompts = ["fix the flaky upload test", "add a README section", "refactor the parser"]
    ids = []
    for i, prompt in enumerate(prompts):
        sid = f"{BASE_MS + i}_{i:08x}"
        make_session(store, prompt, tokens=(1000 * (i + 1), 50), session_id=sid)
        ids.append(sid)
    return ids


def visible_rows(lst: SessionList, count: int) -> list[str]:
    return [lst.render_line(y).text.rstrip() for y in range(count)]


# Row text -------------------------------------------------------------------


def info(first_prompt: str | None, *, created: datetime, tokens: tuple[int, int]) -> SessionInfo:
    ms = int(created.timestamp() * 1000)
    meta = SessionMeta(id=f"{ms}_0123abcd", created_ms=ms, updated_ms=ms, first_prompt=first_prompt,
                       total_input_tokens=tokens[0], total_output_tokens=tokens[1], message_count=2)
    return SessionInfo(meta, "/nonexistent")


def test_row_format_matches_spec():
    row = info("fix the flaky upload test", created=datetime(2026, 5, 31, 19, 58, 42), tokens=(12_000, 450))
    assert format_row(row) == "2026-05-31 19:58  tokens=12,450  「fix the flaky upload test」"


def test_row_truncates_first_prompt_with_ellipsis_to_fit():
    row = info("fix the flaky upload test that fails every third run on CI",
               created=datetime(2026, 5, 31, 19, 58), tokens=(12_000, 450))
    text = format_row(row, 70)
    assert text.startswith("2026-05-31 19:58  tokens=12,450  「fix the flaky upload test")
    assert text.endswith("…」")
    assert cell_len(text) <= 70
    wide = format_row(info("添加中文支持" * 10, created=datetime(2026, 1, 2, 3, 4), tokens=(0, 0)), 50)
    assert cell_len(wide) <= 50 and wide.endswith("…」")


def test_truncate_cells():
    assert truncate_cells("hello", 5) == "hello"
    assert truncate_cells("hello world", 6) == "hello…"
    assert truncate_cells("中文中文", 5) == "中文…"


# The screen -------------------------------------------------------------------


async def test_rows_newest_update_first(store):
    ids = three_sessions(store)
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        lst = app.screen.session_list
        assert [r.id for r in lst.rows] == list(reversed(ids))
        lines = visible_rows(lst, 4)
        assert "「refactor the parser」" in lines[0] and "tokens=3,050" in lines[0]
        assert "「add a README section」" in lines[1]
        assert "「fix the flaky upload test」" in lines[2] and "tokens=1,050" in lines[2]
        assert lines[3] == ""


async def test_enter_returns_highlighted_id(store):
    ids = three_sessions(store)
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
    assert app.return_value == ids[2]


async def test_arrows_move_then_enter(store):
    ids = three_sessions(store)
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "down", "up")  # clamps at the last row
        await pilot.press("enter")
    assert app.return_value == ids[1]


async def test_escape_returns_none(store):
    three_sessions(store)
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "escape")
    assert app.return_value is None


async def test_typing_filters_by_prompt_text(store):
    ids = three_sessions(store)
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"README")
        await pilot.pause()
        lst = app.screen.session_list
        assert [r.id for r in lst.rows] == [ids[1]]
        assert "1 of 3 sessions" in str(app.screen.query_one("#picker-count").render())
        await pilot.press("enter")
    assert app.return_value == ids[1]


async def test_typing_filters_by_id_and_clearing_restores(store):
    ids = three_sessions(store)
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*ids[0][-10:])  # `_00000000`: only the oldest
        await pilot.pause()
        lst = app.screen.session_list
        assert [r.id for r in lst.rows] == [ids[0]]
        for _ in range(10):
            await pilot.press("backspace")
        await pilot.pause()
        assert len(lst.rows) == 3
        await pilot.press(*"no such thing")
        await pilot.pause()
        assert lst.rows == [] and "no match" in lst.render_line(0).text
        await pilot.press("enter")  # nothing to choose: stays open
        assert app.is_running
        await pilot.press("escape")
    assert app.return_value is None


async def test_empty_project_shows_a_line_and_run_picker_returns_none(store, tmp_path):
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "no sessions" in app.screen.session_list.render_line(0).text
    assert run_picker(tmp_path / "nowhere") is None


async def test_ten_thousand_sessions_first_screen(store):
    write_sessions_fast(store, 10_000, base_ms=BASE_MS)
    rows = store.list()
    assert len(rows) == 10_000
    app = PickerApp(store, rows=rows)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionPicker)
        assert len(screen.query("*")) < 20  # rows are drawn, not mounted
        lst = screen.session_list
        assert "「prompt number 9999」" in lst.render_line(0).text
        assert "「prompt number 9998」" in lst.render_line(1).text
        assert "10,000 sessions" in str(screen.query_one("#picker-count").render())
        await pilot.press("pagedown")
        await pilot.pause()
        assert lst.highlighted > 1
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert lst.highlighted == 9_999
        assert "「prompt number 0」" in lst.render_line(lst.scrollable_content_region.height - 1).text
        assert lst.scroll_y > 0
        await pilot.press(*"number 42")
        await pilot.pause()
        assert {r.meta.first_prompt for r in lst.rows} >= {"prompt number 42", "prompt number 4299"}
        await pilot.press("enter")
    assert store.info(app.return_value).meta.first_prompt.startswith("prompt number 42")


# The first screen before the whole list -------------------------------------------------


class SlowListStore(SessionStore):
    """A store whose full list waits until the test lets it go (the first screen does not wait)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        import threading
        self.release = threading.Event()

    def list(self, *, include_empty: bool = False):
        assert self.release.wait(10), "the test never let the list go"
        return super().list(include_empty=include_empty)


@pytest.fixture
def slow_store(tmp_path, monkeypatch):
    import evo_agent.ui.picker as picker_mod
    monkeypatch.setattr(picker_mod, "FIRST_SCREEN_ROWS", 4)
    store = SlowListStore(tmp_path / "proj", warn=lambda _: None)
    write_sessions_fast(store, 10, base_ms=BASE_MS)
    return store


async def test_first_screen_is_drawn_before_the_whole_list_and_the_highlight_stays(slow_store):
    app = PickerApp(slow_store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        lst = screen.session_list
        assert [r.meta.first_prompt for r in lst.rows] == [f"prompt number {i}" for i in (9, 8, 7, 6)]
        assert "loading the rest" in str(screen.query_one("#picker-count").render())
        drawn = app.export_screenshot()  # what the terminal shows: the rows, not a loading indicator
        assert "prompt&#160;number&#160;9" in drawn and "prompt&#160;number&#160;6" in drawn
        await pilot.press("down", "down")
        assert lst.highlighted_info.meta.first_prompt == "prompt number 7"
        slow_store.release.set()
        for _ in range(50):
            await pilot.pause(0.02)
            if not screen.rest_pending:
                break
        assert len(lst.rows) == 10 and "10 sessions" in str(screen.query_one("#picker-count").render())
        assert lst.highlighted_info.meta.first_prompt == "prompt number 7"  # the same session, not the same row
        await pilot.press("enter")
    assert slow_store.info(app.return_value).meta.first_prompt == "prompt number 7"


async def test_a_filter_typed_while_loading_applies_to_the_whole_list(slow_store):
    app = PickerApp(slow_store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"number 1")  # only "prompt number 1" among the ten; not in the first screen
        await pilot.pause()
        lst = app.screen.session_list
        assert lst.rows == []
        slow_store.release.set()
        for _ in range(50):
            await pilot.pause(0.02)
            if not app.screen.rest_pending:
                break
        assert [r.meta.first_prompt for r in lst.rows] == ["prompt number 1"]


async def test_excluded_session_is_never_shown(store):
    ids = three_sessions(store)
    app = PickerApp()
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(SessionPicker(store, exclude=[ids[2]]))
        await pilot.pause()
        assert [r.id for r in app.screen.session_list.rows] == [ids[1], ids[0]]
        assert not app.screen.rest_pending  # two rows: nothing more to load


async def test_ten_thousand_sessions_from_the_store_alone(store):
    write_sessions_fast(store, 10_000, base_ms=BASE_MS)
    app = PickerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        lst = app.screen.session_list
        assert "「prompt number 9999」" in lst.render_line(0).text
        for _ in range(200):
            await pilot.pause(0.05)
            if not app.screen.rest_pending:
                break
        assert len(lst.rows) == 10_000 and lst.rows == store.list()
