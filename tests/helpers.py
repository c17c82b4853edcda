"""Helpers shared across test packages: waiting for a condition, mounting a small filesystem, a quiet front end."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


def process_alive(pid: int) -> bool:
    """Whether `pid` is a live process: a zombie counts as gone (it still answers kill(0)); where there is no
    /proc (macOS), kill(0) alone says."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's: it exists
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return not os.path.exists("/proc/self")  # gone between the two looks, unless there is no /proc at all


def wait_for(predicate, timeout: float = 20.0, what: str = "condition", interval: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(interval)


def mount_tmpfs(path: Path, size: str, *options: str) -> None:
    """Mount a tmpfs of `size` at `path` (created if missing); CalledProcessError when it cannot be done."""
    path.mkdir(parents=True, exist_ok=True)
    opts = ",".join((f"size={size}", "mode=0700", *options))
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], check=True, capture_output=True)


@contextmanager
def tmpfs_or_skip(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` for the block (the test is skipped where none can be mounted), then
    unmounted: the full disk of the fault tests."""
    try:
        mount_tmpfs(path, size)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        yield path
    finally:
        unmount(path)


def last_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last message (what the model is told of its calls)."""
    return [b for b in body["messages"][-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    """A tool_result's text, whether its content is a string or a list of blocks."""
    content = result["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def remount(path: Path, *options: str) -> None:
    subprocess.run(["mount", "-o", ",".join(("remount", *options)), str(path)], check=True, capture_output=True)


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


def fill_disk(mount_point: Path, leave: int, name: str = "filler") -> Path:
    """Fill the file system at `mount_point`, then free `leave` bytes (whole pages) so the next big write is cut short."""
    filler = mount_point / name
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"f" * 65536) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    st = os.statvfs(mount_point)
    assert st.f_bavail * st.f_frsize == 0, "the file system did not fill up"
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


class QuietFront:
    """A front end for `Agent.run_turn` that keeps only the notices and retry lines (`notices`)."""

    def __init__(self) -> None:
        self.notices: list[str] = []

    def on_event(self, event: object) -> None:
        from evo_agent.agent.events import Notice, Retrying

        if isinstance(event, Notice | Retrying):
            self.notices.append(event.text)
