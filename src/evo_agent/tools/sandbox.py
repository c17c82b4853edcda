"""`--sandbox`: the bash tool runs inside bubblewrap (Debian's `bubblewrap`, the `bwrap` binary).

Inside: the whole file system read-only, the project writable (its `.evo-agent/` read-only:
transcripts and rules stay the agent's), a private `/tmp`, fresh pid/ipc/uts namespaces, and
no network unless `--sandbox-network`. `check_sandbox` runs bwrap once at start-up: where it
cannot run (not installed, no user namespaces) the agent stops with one clear line instead of
silently running commands unconfined.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .confine import AGENT_DIR, real


class SandboxError(RuntimeError):
    """The sandbox cannot be used here; one printable line."""


@dataclass(frozen=True)
class Sandbox:
    project_dir: Path
    network: bool = False
    bwrap: str = "bwrap"

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` as run inside the sandbox."""
        project = str(real(self.project_dir))
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                "--bind", project, project]
        agent_dir = Path(project) / AGENT_DIR
        if agent_dir.is_dir():
            args += ["--ro-bind", str(agent_dir), str(agent_dir)]
        config = _user_config_dir()
        if config is not None:  # the user's evo-agent config (the team store's URL and password): not there at all
            args += ["--tmpfs", str(config)]
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--chdir", project]
        if not self.network:
            args.append("--unshare-net")
        return args + ["--", *argv]


def _user_config_dir() -> Path | None:
    """`$XDG_CONFIG_HOME/evo-agent` (else `~/.config/evo-agent`) when it exists, resolved."""
    import os

    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = Path(base) / "evo-agent"
    return real(path) if path.is_dir() else None


def check_sandbox(project_dir: Path, network: bool = False) -> Sandbox:
    """A usable Sandbox, or SandboxError saying why bwrap cannot run here."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError("--sandbox needs bubblewrap, which is not installed (apt-get install bubblewrap); "
                           "refusing to run commands unconfined")
    sandbox = Sandbox(Path(project_dir), network, path)
    try:
        probe = subprocess.run(sandbox.wrap(["true"]), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(
            f"--sandbox: bubblewrap cannot run here ({exc}); refusing to run commands unconfined") from None
    if probe.returncode != 0:
        why = " ".join(probe.stderr.split())[:200] or f"exit {probe.returncode}"
        raise SandboxError(f"--sandbox: bubblewrap cannot run here ({why}); refusing to run commands unconfined")
    return sandbox


__all__ = ["Sandbox", "SandboxError", "check_sandbox"]
