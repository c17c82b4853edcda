"""cli/sessions/common.py: `fmt_ms` shows what `datetime` showed, without importing it on the listing's path."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from evo_agent.cli.sessions.common import fmt_ms


def _by_datetime(ms: int) -> str:
    """The previous spelling of fmt_ms."""
    try:
        return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "?"


def test_fmt_ms_agrees_with_datetime_at_the_edges():
    for ms in (0, 1, 999, 1000, 59_999, 60_000, 1_725_373_871_463, 1_780_227_556_183, 253_402_300_799_999,
               253_402_300_800_000, 10**18, 10**30, -1, -1000, -62_135_596_800_000, -62_135_596_800_001, -62_090_000_000_000,
               -(10**30)):
        assert fmt_ms(ms) == _by_datetime(ms), ms


@given(st.integers(min_value=-(10**13), max_value=10**16))
def test_fmt_ms_agrees_with_datetime(ms):
    assert fmt_ms(ms) == _by_datetime(ms)
