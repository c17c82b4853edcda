"""Before orjson is loaded (a launch's first records and request), the stdlib writes orjson's bytes.

`jsonio.as_orjson_writes` is what lets `-p hi` send its first request without importing orjson
(with the dataclasses, uuid and platform it loads): it must write exactly what orjson would, or
decline (None) and leave the value to orjson. Any value, any text: byte for byte, and a record
encoded either way reads back the same.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.session import jsonio
from evo_agent.session.meta import decode_lenient

scalars = (st.text() | st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70)
           | st.floats(allow_nan=True) | st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


@pytest.fixture(autouse=True)
def _stdlib_writes_early(monkeypatch):
    """This process has imported orjson: let the stdlib write whenever jsonio's orjson is unset."""
    monkeypatch.setattr(jsonio, "_early", lambda: jsonio._orjson is None)


@pytest.fixture
def before_orjson(monkeypatch):
    """jsonio as a launch finds it: orjson not imported yet."""
    monkeypatch.setattr(jsonio, "_orjson", None)


def _orjson_or_none(value: object, option: int = 0) -> bytes | None:
    try:
        return orjson.dumps(value, option=option)
    except TypeError:
        return None


@settings(max_examples=100, deadline=None)
@given(values)
def test_the_early_bytes_are_orjsons_or_none(value):
    jsonio._orjson = None
    try:
        early = jsonio.as_orjson_writes(value)
        pretty = jsonio.as_orjson_writes(value, indent=True)
    finally:
        jsonio._orjson = orjson
    if early is not None:
        assert early == _orjson_or_none(value)
    if pretty is not None:
        assert pretty == _orjson_or_none(value, orjson.OPT_INDENT_2)


def test_every_character_is_escaped_as_orjson_escapes_it(before_orjson):
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    record = {"type": "user", "message": {"role": "user", "content": text}, "n": [(1 << 64) - 1, -(1 << 63)]}
    assert jsonio.encode_line(record) == orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)


def test_what_orjson_would_write_differently_is_left_to_it(before_orjson):
    for value in (1.5, 1e16, float("nan"), 1 << 64, -(1 << 63) - 1, "\ud800", {1: "x"}, b"x", {"a": object()}):
        assert jsonio.as_orjson_writes({"v": value}) is None
    deep: list[object] = []
    for _ in range(300):
        deep = [deep]
    assert jsonio.as_orjson_writes(deep) is None


def test_once_orjson_is_loaded_it_writes(monkeypatch):
    monkeypatch.setattr(jsonio, "_orjson", orjson)
    assert jsonio.as_orjson_writes({"a": 1}) is None
    assert jsonio.dumps_compact({"a": "é"}) == orjson.dumps({"a": "é"})


no_floats = st.recursive(st.text() | st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70),
                         lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=4), max_leaves=20)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=6), values, max_size=5), st.dictionaries(st.text(max_size=6), no_floats,
                                                                                 max_size=5))
def test_a_record_encoded_by_either_encoder_reads_back_the_same(fields, plain_fields):
    for record in ({"type": "user", **fields}, {"type": "user", **plain_fields}):
        jsonio._orjson = None
        try:
            early = jsonio.encode_line(record)  # the stdlib's bytes where it can, else orjson's
        finally:
            jsonio._orjson = orjson
        late = jsonio.encode_line(record)
        assert early == late and early.endswith(b"\n") and b"\n" not in early[:-1]
    stdlib = jsonio._stdlib_line(record)  # what the recorder writes when orjson refuses a value
    assert decode_lenient(early) == decode_lenient(stdlib)


def test_the_request_body_is_the_same_bytes_before_and_after(before_orjson):
    from evo_agent.providers.http_client import encode_json

    body = {"model": "m", "max_tokens": 8192, "messages": [{"role": "user", "content": "héllo \u2028 \x7f"}],
            "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}], "stream": True}
    early = encode_json(body)
    jsonio._orjson = orjson
    assert early == encode_json(body) == orjson.dumps(body)


def test_orjson_takes_over_once_imported_or_after_the_budget(monkeypatch):
    monkeypatch.undo()  # the real _early
    monkeypatch.setattr(jsonio, "_orjson", None)
    monkeypatch.setattr(jsonio, "_early_left", 2)
    monkeypatch.setattr(jsonio, "_orjson_imported", lambda: False)
    assert jsonio.as_orjson_writes({"a": 1}) == b'{"a":1}' and jsonio._orjson is None
    assert jsonio.as_orjson_writes({"a": 2}) == b'{"a":2}'
    assert jsonio.as_orjson_writes({"a": 3}) is None and jsonio._orjson is orjson  # the budget is spent
    monkeypatch.setattr(jsonio, "_orjson", None)
    monkeypatch.setattr(jsonio, "_early_left", 5)
    monkeypatch.setattr(jsonio, "_orjson_imported", lambda: True)
    assert jsonio.as_orjson_writes({"a": 4}) is None and jsonio._orjson is orjson  # someone imported it
