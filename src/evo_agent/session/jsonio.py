"""JSON encoding of records: orjson when present (measured in benchmarks/), stdlib otherwise.

Records are dicts whose first key is "type"; both encoders keep insertion order.
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from typing import Any


# orjson, imported on first use: its import (with the uuid, platform and datetime it loads) is ~90 M
# instructions, more than the rest of `sessions list --limit 20` at 10,000 sessions. False: not installed.
_orjson: Any = None


def orjson() -> Any:
    """The orjson module, imported on first use; None when it is not installed."""
    global _orjson
    if _orjson is None:
        try:
            import orjson as module

            _orjson = module
        except ImportError:  # pragma: no cover - orjson is a declared dependency
            _orjson = False
    return _orjson or None


def orjson_loaded() -> bool:
    """Whether orjson is imported already (then it is the faster parser even for one small document)."""
    return bool(_orjson)


def orjson_after_send() -> None:
    """Import orjson now (once): called when the first model request is on the wire.

    Until then records and the request are written by `as_orjson_writes` (the same bytes): the
    import (with the dataclasses, uuid and platform it loads) then overlaps the model's first byte.
    """
    if _orjson is None:
        orjson()


# orjson's integer range: anything wider it refuses (and the caller's fallback decides).
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1
_DEPTH = 200  # below orjson's own limit (255) and the stdlib's recursion limit


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether `value` is made only of what the stdlib encodes byte for byte as orjson does.

    str, int within orjson's range, bool, None, list, tuple and dict with str keys: for these
    `json.dumps(ensure_ascii=False, separators=(",", ":"))` in UTF-8 is orjson's output (the same
    escapes, tests/session/test_jsonio.py). Floats (orjson's shortest form differs), anything a
    `default` would turn into text and subclasses are left to orjson.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(_INT_MIN <= value <= _INT_MAX)
    if depth >= _DEPTH:
        return False
    if kind is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_plain(v, depth + 1) for v in value)
    return False


# How many values the stdlib may write before orjson is imported anyway: a launch writes a handful before
# its first request (then the request's send imports it); a process that sends none (a tool of the library,
# a benchmark) should not pay the stdlib's ~20× slower encoding for long.
EARLY_WRITES = 32
_early_left = EARLY_WRITES


def _early() -> bool:
    """Whether the stdlib still writes for orjson: it is not loaded, nobody imported it, the budget lasts."""
    global _early_left
    if _orjson is not None:
        return False
    if _early_left <= 0 or _orjson_imported():  # e.g. a resume's reader imported it
        orjson()
        return False
    _early_left -= 1
    return True


def _orjson_imported() -> bool:
    return "orjson" in sys.modules


def as_orjson_writes(value: Any, *, indent: bool = False) -> bytes | None:
    """`orjson.dumps(value)` (with `indent`: `option=OPT_INDENT_2`) written by the stdlib, before orjson
    is loaded (`_early`); None when orjson writes it, or when the bytes may differ."""
    if not _early() or not _plain(value):
        return None
    try:
        if indent:
            return json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: orjson refuses it, and so does the caller's fallback
        return None


def dumps_compact(value: Any) -> bytes:
    """`orjson.dumps(value)`: compact UTF-8 JSON; raises TypeError where orjson does, ImportError without it.

    Before orjson is loaded (start-up: the first request), the stdlib writes the same bytes.
    """
    early = as_orjson_writes(value)
    if early is not None:
        return early
    fast = _orjson or orjson()
    if fast is None:
        raise ImportError("orjson is not installed")
    encoded: bytes = fast.dumps(value)
    return encoded


def _stdlib_line(record: dict[str, Any]) -> bytes:
    # ensure_ascii escapes lone surrogates as \udcxx, so the line stays valid UTF-8.
    return (json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str) + "\n").encode("ascii")


def encode_line(record: dict[str, Any]) -> bytes:
    """One record as one UTF-8 line ending in `\\n` (orjson's bytes, also before it is loaded)."""
    fast = _orjson
    if fast is None:  # before orjson is loaded (start-up): the stdlib may write its bytes
        early = as_orjson_writes(record)
        if early is not None:
            return early + b"\n"
        fast = orjson()
    if fast:
        try:
            line: bytes = fast.dumps(record, default=str, option=fast.OPT_APPEND_NEWLINE)
            return line
        except (TypeError, fast.JSONEncodeError):
            pass  # e.g. lone surrogates or huge ints: the stdlib copes
    return _stdlib_line(record)


def decode(data: bytes | str) -> Any:
    """Parse one JSON document; raises ValueError on anything that is not JSON."""
    fast = _orjson or orjson()
    if fast is not None:
        return fast.loads(data)
    return json.loads(data)


def json_object(raw: bytes | str) -> dict[str, Any]:
    """A configuration file's bytes as the one JSON object it must hold (the stdlib's parse, as written).

    Raises ValueError with what is wrong, for the caller to put after the file's name: "not valid
    JSON (<the parser's first line, at most 120 characters>)" or "not a JSON object".
    """
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not valid JSON ({str(exc).splitlines()[0][:120]})") from None
    except RecursionError:  # `[[[[…` a hundred thousand deep: the parser's stack, not a traceback
        raise ValueError("not valid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def encode_pretty(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8")
