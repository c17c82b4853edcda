"""JSON encoding of records: orjson when present (measured in benchmarks/), stdlib otherwise.

Records are dicts whose first key is "type"; both encoders keep insertion order.
"""

from __future__ import annotations

import json

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


def _stdlib_line(record: dict[str, Any]) -> bytes:
    # ensure_ascii escapes lone surrogates as \udcxx, so the line stays valid UTF-8.
    return (json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str) + "\n").encode("ascii")


def encode_line(record: dict[str, Any]) -> bytes:
    """One record as one UTF-8 line ending in `\\n`."""
    fast = _orjson or orjson()
    if fast is not None:
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
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def encode_pretty(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8")
