"""JSON encoding of records: orjson when present (measured in benchmarks/), stdlib otherwise.

Records are dicts whose first key is "type"; both encoders keep insertion order.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None


def _stdlib_line(record: dict) -> bytes:
    # ensure_ascii escapes lone surrogates as \udcxx, so the line stays valid UTF-8.
    return (json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str) + "\n").encode("ascii")


def encode_line(record: dict) -> bytes:
    """One record as one UTF-8 line ending in `\\n`."""
    if _orjson is not None:
        try:
            return _orjson.dumps(record, default=str, option=_orjson.OPT_APPEND_NEWLINE)
        except (TypeError, _orjson.JSONEncodeError):
            pass  # e.g. lone surrogates or huge ints: the stdlib copes
    return _stdlib_line(record)


def decode(data: bytes | str) -> Any:
    """Parse one JSON document; raises ValueError on anything that is not JSON."""
    if _orjson is not None:
        return _orjson.loads(data)
    return json.loads(data)


def encode_pretty(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8")
