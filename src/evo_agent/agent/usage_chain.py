"""Token totals that continue across resumes: a resumed session starts from what its sources spent.

A resumed session's restored records carry no token counts (SPEC §4), so its own meta.json sums only
what it spent itself. The totals a user expects after `--resume`, `-c` or `/resume` are those of the
whole chain: this session's source, that one's source, and so on (`resumed_from` in each meta).
"""

from __future__ import annotations

from typing import Any

__all__ = ["chain_usage", "MAX_CHAIN"]

MAX_CHAIN = 1000  # a resume chain longer than this is not summed further (and a cycle ends here too)


def chain_usage(store: Any, session_id: str) -> tuple[int, int]:
    """(input tokens, output tokens) spent by `session_id` and every session it was resumed from.

    Reads meta.json files only (rebuilt from the transcript where one lags, never written back);
    a missing link ends the chain.
    """
    total_in = total_out = 0
    seen: set[str] = set()
    current: str | None = session_id
    while current and current not in seen and len(seen) < MAX_CHAIN:
        seen.add(current)
        try:
            info = store.info(current, write_back=False)
        except Exception:  # noqa: BLE001 - totals are a courtesy; a damaged meta must not stop a resume
            break
        if info is None:
            break
        total_in += int(info.meta.total_input_tokens or 0)
        total_out += int(info.meta.total_output_tokens or 0)
        current = info.meta.resumed_from
    return total_in, total_out
