"""The Session Plan on disk (SPEC §11): one open plan per project, its tasks, crash-proof and shared.

```
<project>/.evo-agent/tasks/
  .lock                              flock'ed (exclusive) by every writer, shared by readers
  todo/<YYYY-MM-DD>-<slug>/          the open plan; its directory name is the plan's id
    plan.md                          "# title", then "## Goal", "## Approach", "## Steps" (a person may edit it)
    task_<n>.json                    {id, subject, description, status, blocked_by, blocks, created_at,
                                      updated_at, updated_by}
  done/<YYYY-MM-DD>-<slug>/          a completed plan, moved here whole (one rename)
```

Why it is shaped so:

- **Nothing is cached.** Every operation reads the files back from disk, under the lock, and
  changes only the fields it was asked to change; so a person's edit of plan.md or a task file
  between two calls is kept, and two agents on one project never write over each other's update.
- **Every file is replaced atomically**: a unique temp file in the same directory, fsync, rename,
  fsync of the directory; a new plan's directory appears with its plan.md (a temp directory, renamed).
  A `kill -9` at any instant leaves the old file or the new one, never half; a temp left behind by a
  killed writer is removed by the next writer (it holds the lock, so no live writer owns one).
- **`blocked_by` is the truth, `blocks` follows.** `blocks` is derived from every task's `blocked_by`
  whenever tasks are read, and rewritten into the files on each change, so a change cut short
  between two files (or a hand edit of one side) can never leave the two disagreeing for a reader.
- A task is *blocked* while one of its `blocked_by` is still open (pending or in progress):
  completing (or deleting) a task unblocks its dependents without touching their files.

Files are 0600, directories 0700, nothing is followed through a symbolic link, and a file hard-linked to a
name outside its directory (an unpacked archive's) is not read. This module imports
nothing of evo-agent beyond the session library: another agent can use it alone.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from . import layout  # its name patterns are compiled at first use, not at import (issue #30)
from .atomic import replace_file
from .hardlinks import linked_elsewhere
from .layout import (
    DIR_MODE,
    FILE_MODE,
    PLAN_DONE_DIR,
    PLAN_FILE_NAME,
    PLAN_TODO_DIR,
    TASKS_LOCK_NAME,
    task_file_name,
    tasks_dir,
)
from .messages import one_line
from .plaincontext import plain_contextmanager
from .plaindata import plain_dataclass as dataclass
from .plaindata import plain_field as field
from .workspace import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["OPEN_STATUSES", "TASK_STATUSES", "Plan", "PlanError", "PlanStore", "Task", "plan_markdown"]

TASK_STATUSES = ("pending", "in_progress", "completed", "deleted")
OPEN_STATUSES = ("pending", "in_progress")
MAX_TEXT = 20_000  # a subject, description, goal or approach longer than this is refused
MAX_FILE = 1 << 20  # a task file or plan.md larger than this is not read (a planted one cannot eat memory)

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class PlanError(Exception):
    """A plan operation that cannot be done (no active plan, a bad id, an open task…): one printable line."""


@dataclass
class Task:
    """One task of a plan, as `task_<id>.json` holds it."""

    id: int
    subject: str
    description: str = ""
    status: str = "pending"
    blocked_by: list[int] = field(default_factory=list)
    blocks: list[int] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""
    updated_by: str | None = None  # the session that last changed it (None: a person, or unknown)
    # `blocks` as the task's file held it when read (None: not read from a file): a task whose derived
    # `blocks` still equals it is not written again when another task changes
    stored_blocks: list[int] | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "subject": self.subject, "description": self.description, "status": self.status,
                "blocked_by": list(self.blocked_by), "blocks": list(self.blocks), "created_at": self.created_at,
                "updated_at": self.updated_at, "updated_by": self.updated_by}

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES


@dataclass
class Plan:
    """A plan read back from disk: plan.md's parts, and its tasks in id order."""

    id: str
    state: str  # "todo" (open) or "done"
    path: Path
    title: str
    goal: str = ""
    approach: str = ""
    steps: list[str] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # files that could not be read, one line each
    # plan.md is this user's and private (0600): evo-agent wrote it here. A plan a cloned repository brought
    # (git checks files out 0644) or another user's is content, never presented to a model as its own plan.
    private: bool = True

    @property
    def live_tasks(self) -> list[Task]:
        """Every task but the deleted ones."""
        return [t for t in self.tasks if t.status != "deleted"]

    @property
    def progress(self) -> tuple[int, int]:
        """(completed, total), deleted tasks not counted: the status line's `plan 2/5`."""
        live = self.live_tasks
        return sum(t.status == "completed" for t in live), len(live)

    @property
    def in_progress(self) -> list[Task]:
        return [t for t in self.tasks if t.status == "in_progress"]

    @property
    def open_tasks(self) -> list[Task]:
        return [t for t in self.tasks if t.is_open]

    def task(self, task_id: int) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    def open_ids(self) -> set[int]:
        """The ids of the open tasks (pending or in progress)."""
        return {t.id for t in self.tasks if t.is_open}

    def open_blockers(self, task: Task, open_ids: set[int] | None = None) -> list[int]:
        """The ids in `task.blocked_by` that are still open: while there is one, the task is blocked.

        `open_ids` (`self.open_ids()`, taken once): a caller asking this of every task passes it, or a plan of
        forty thousand tasks (a clone's: one small file each) took minutes to show."""
        if open_ids is None:
            open_ids = self.open_ids()
        return [i for i in task.blocked_by if i in open_ids]


def now_iso() -> str:
    """Local time with milliseconds and offset: the transcripts' own stamp (recorder.now_iso, made without
    datetime), imported here so that `plan list` loads no recorder."""
    from .recorder import now_iso as stamp

    return stamp()


def slug(title: str, limit: int = 40) -> str:
    """`[a-z0-9-]` words of a title, at most `limit` characters; "plan" when nothing is left."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    text = ""
    for word in words:
        candidate = f"{text}-{word}" if text else word
        if len(candidate) > limit:
            break
        text = candidate
    return text or (words[0][:limit] if words else "plan")


def plan_markdown(title: str, goal: str, approach: str = "", steps: list[str] | None = None) -> str:
    """plan.md's text: the title, then Goal, Approach and Steps sections."""
    parts = [f"# {one_line(title)}", "", "## Goal", "", goal.strip() or "(none given)", ""]
    if approach.strip():
        parts += ["## Approach", "", approach.strip(), ""]
    if steps:
        parts += ["## Steps", ""] + [f"{i}. {one_line(s)}" for i, s in enumerate(steps, 1)] + [""]
    return "\n".join(parts)


def parse_plan_markdown(text: str) -> tuple[str, str, str, list[str]]:
    """(title, goal, approach, steps) of a plan.md, tolerant of a person's edits (missing parts read as empty)."""
    title, section = "", None
    parts: dict[str, list[str]] = {"goal": [], "approach": [], "steps": []}
    for line in text.splitlines():
        if line.startswith("# ") and not title:
            title = line[2:].strip()
            continue
        heading = re.match(r"\A##\s+(.*)", line)  # the name stripped after: a run of spaces never backtracks
        if heading:
            name = heading.group(1).strip().lower()
            section = name if name in parts else None
            continue
        if section is not None:
            parts[section].append(line)
    steps = []
    for line in parts["steps"]:  # `1. text`, `- text`: linear in the line (a planted `1.` + spaces cannot hang)
        item = re.match(r"\A\s*(?:\d+[.)]|[-*+])\s(.*)", line)
        if item and item.group(1).strip():
            steps.append(item.group(1).strip())
    return title, "\n".join(parts["goal"]).strip(), "\n".join(parts["approach"]).strip(), steps


class PlanStore:
    """The Session Plan of one project: read from disk on every call, written under the lock.

    Every method raises PlanError (one line) for what a caller or a person got wrong, and OSError
    for a disk that refuses.
    """

    def __init__(self, project_dir: Path | str, *, redact: bool = True) -> None:
        self.project_dir = Path(project_dir)
        self.root = tasks_dir(self.project_dir)
        # Mask secret shapes in what a plan's files get, as transcripts do (SPEC §9): the files are on disk,
        # outside the gitignored sessions, and their text reaches the model again in every plan reminder.
        self.redact = redact

    def _text(self, value: object, what: str, *, required: bool = False) -> str:
        """A checked text field as it is stored (redacted unless redaction is off)."""
        checked = _text(value, what, required=required)
        if not self.redact:
            return checked
        from .redact import redact_text  # at the first plan write: not on -p's path to its first request

        return redact_text(checked)

    # ---- reading
    def active(self) -> Plan | None:
        """The open plan (newest, should a person have put two in todo/), or None."""
        ids = self._plan_ids(PLAN_TODO_DIR)
        if not ids:
            return None
        with self._locked(shared=True):
            return self._read(PLAN_TODO_DIR, ids[-1])

    def plans(self) -> list[Plan]:
        """Every plan: the open ones first, then the done ones, newest first in each."""
        out: list[Plan] = []
        if not self.root.is_dir():
            return out
        with self._locked(shared=True):
            for state in (PLAN_TODO_DIR, PLAN_DONE_DIR):
                out += [self._read(state, pid) for pid in reversed(self._plan_ids(state))]
        return out

    def get(self, plan_id: str | None = None) -> Plan:
        """A plan by id (open or done), or the active one when `plan_id` is None."""
        if plan_id is None:
            plan = self.active()
            if plan is None:
                raise PlanError("there is no active plan")
            return plan
        plan_id = plan_id.strip().rstrip("/")
        if not layout.PLAN_ID_RE.match(plan_id):
            raise PlanError(f"{plan_id[:80]!r} is not a plan id (they look like 2026-12-04-fix-the-parser)")
        with self._locked(shared=True):
            for state in (PLAN_TODO_DIR, PLAN_DONE_DIR):
                if plan_id in self._plan_ids(state):
                    return self._read(state, plan_id)
        raise PlanError(f"no plan {plan_id} in {self.root}")

    def fingerprint(self) -> str | None:
        """A digest of the active plan's files (None without one): it changes whenever any of them does."""
        ids = self._plan_ids(PLAN_TODO_DIR)
        if not ids:
            return None
        digest = sha256(ids[-1].encode())
        directory = self.root / PLAN_TODO_DIR / ids[-1]
        try:
            names = sorted(n for n in os.listdir(directory) if n == PLAN_FILE_NAME or layout.TASK_FILE_RE.match(n))
        except OSError:
            return str(digest.hexdigest())
        for name in names:
            digest.update(name.encode() + b"\0" + (_read_bytes(directory / name) or b"") + b"\0")
        return str(digest.hexdigest())

    # ---- writing
    def create(self, title: str, goal: str, approach: str = "", steps: list[str] | None = None, *,
               session_id: str | None = None) -> Plan:
        """A new open plan; refused (naming it) while another plan is open: one plan at a time."""
        title, goal = self._text(title, "title", required=True), self._text(goal, "goal", required=True)
        approach = self._text(approach, "approach")
        steps = [self._text(s, "a step", required=True) for s in (steps or [])]
        with self._locked():
            open_ids = [i for i in self._plan_ids(PLAN_TODO_DIR) if not self._removed_if_empty(i)]
            if open_ids:
                current = self._read(PLAN_TODO_DIR, open_ids[-1])
                done, total = current.progress
                raise PlanError(f"plan {current.id} ({current.title}) is still active ({done}/{total} tasks "
                                "completed): finish it with plan_complete before creating another")
            base = f"{time.strftime('%Y-%m-%d')}-{slug(title)}"
            plan_id = base
            for n in range(2, 1000):
                if not (self.root / PLAN_TODO_DIR / plan_id).exists() and not (
                        self.root / PLAN_DONE_DIR / plan_id).exists():
                    break
                plan_id = f"{base}-{n}"
            from .origin import plan_mark, plans_made_file, record_made

            # The proof an unpacked 0600 plan.md cannot carry, for this project's plans only; made before the
            # plan, as a session's is: a kill between plan.md and this line left the user's own plan unvouched
            # for, never shown to the model again (tests/faults/test_plan_killed.py).
            registry = plans_made_file()
            if not record_made(plan_mark(plan_id, self.root), registry) and os.path.lexists(registry):
                # A plan the count cannot vouch for would be hidden from the model for ever: not made at all.
                raise OSError(f"cannot record the new plan as yours in {registry}; nothing was created")
            self._publish_plan(plan_id, plan_markdown(title, goal, approach, steps).encode())
            return self._read(PLAN_TODO_DIR, plan_id)

    def add_task(self, subject: str, description: str = "", blocked_by: list[int] | None = None, *,
                 session_id: str | None = None) -> Task:
        """A new pending task of the active plan; its id is one more than the highest id the plan ever had."""
        subject = self._text(subject, "subject", required=True)
        description = self._text(description, "description")
        with self._locked():
            plan = self._active_locked()
            task_id = max((t.id for t in plan.tasks), default=0) + 1
            for _, number in _task_files(plan.path):  # a task file that did not parse still holds its id
                task_id = max(task_id, number + 1)
            stamp = now_iso()
            task = Task(task_id, subject, description, "pending", [], [], stamp, stamp, session_id)
            task.blocked_by = _check_blockers(plan, task, blocked_by or [])
            plan.tasks.append(task)
            self._write_tasks(plan, [task])
            return task

    def update_task(self, task_id: object, *, status: str | None = None, subject: str | None = None,
                    description: str | None = None, blocked_by: list[int] | None = None,
                    session_id: str | None = None) -> tuple[Task, list[int], dict[str, Any]]:
        """Change the given fields of a task of the active plan; (its new state, the tasks it unblocked,
        its state before as `task_<n>.json` held it — what a rewind puts back).

        Only the fields given change: the rest is what the file holds now (a person's edit stays).
        Starting or completing a task that an open task still blocks is refused, naming the blockers.
        """
        with self._locked():
            plan = self._active_locked()
            task = plan.task(_task_id(task_id))
            if task is None:
                raise PlanError(f"plan {plan.id} has no task {task_id}" + _problems(plan))
            was_open = task.is_open
            previous = task.to_json()
            if subject is not None:
                task.subject = self._text(subject, "subject", required=True)
            if description is not None:
                task.description = self._text(description, "description")
            if blocked_by is not None:
                task.blocked_by = _check_blockers(plan, task, blocked_by)
            if status is not None:
                if status not in TASK_STATUSES:
                    raise PlanError(f"status must be one of {', '.join(TASK_STATUSES)}, not {str(status)[:30]!r}")
                blockers = plan.open_blockers(task)
                if status in ("in_progress", "completed") and blockers:
                    raise PlanError(f"task {task.id} is blocked by open task(s) "
                                    + ", ".join(f"#{i}" for i in blockers) + ": finish them first")
                task.status = status
            task.updated_at, task.updated_by = now_iso(), session_id
            unblocked = []
            if was_open and not task.is_open:
                open_ids = plan.open_ids()  # once: the task may have blocked every other
                unblocked = [t.id for t in plan.tasks if task.id in t.blocked_by and t.is_open
                             and not plan.open_blockers(t, open_ids)]
            self._write_tasks(plan, [task])
            return task, unblocked, previous

    def complete(self, plan_id: str | None = None, *, force: bool = False) -> Plan:
        """Move an open plan (the active one by default) to done/, whole; refused while a task is open."""
        with self._locked():
            if plan_id is None:
                plan = self._active_locked()
            else:
                if not layout.PLAN_ID_RE.match(plan_id) or plan_id not in self._plan_ids(PLAN_TODO_DIR):
                    done = layout.PLAN_ID_RE.match(plan_id) and plan_id in self._plan_ids(PLAN_DONE_DIR)
                    raise PlanError(f"plan {plan_id[:80]} is already done" if done else
                                    f"no open plan {plan_id[:80]} in {self.root / PLAN_TODO_DIR}")
                plan = self._read(PLAN_TODO_DIR, plan_id)
            still_open = plan.open_tasks
            if still_open and not force:
                raise PlanError(f"plan {plan.id} still has open tasks: "
                                + "; ".join(f"#{t.id} {t.subject} ({t.status})" for t in still_open)
                                + ". Complete or delete them first")
            target = self._move_to_done(plan.id)
            return self._read(PLAN_DONE_DIR, target)

    def undo(self, updates: list[dict[str, Any]]) -> list[str]:
        """Put the plan back as it was before `updates` (`plan_update` records, oldest first): a rewind.

        A task changed since gets its state before the first change (`previous`); a task created since
        is marked deleted (its id is never reused); a plan completed since is reopened (unless another
        is open now); a plan created since is closed (moved to done/, its files kept). Returns one line
        per thing done or left alone.
        """
        lines: list[str] = []
        by_plan: dict[str, list[dict[str, Any]]] = {}
        for update in updates:
            if isinstance(update.get("plan"), str) and layout.PLAN_ID_RE.match(update["plan"]):
                by_plan.setdefault(update["plan"], []).append(update)
        for plan_id, events in by_plan.items():
            ops = [e.get("op") for e in events]
            with self._locked():
                open_ids = self._plan_ids(PLAN_TODO_DIR)
                if "plan_create" in ops:
                    if plan_id in open_ids:
                        lines.append(self._close_locked(plan_id))
                    continue
                if "plan_complete" in ops and plan_id not in open_ids:
                    if open_ids:
                        lines.append(f"plan {plan_id} not reopened: plan {open_ids[-1]} is open now")
                        continue
                    if plan_id not in self._plan_ids(PLAN_DONE_DIR):
                        lines.append(f"plan {plan_id} not reopened: it is no longer in {self.root / PLAN_DONE_DIR}")
                        continue
                    self._ensure_dir(self.root / PLAN_TODO_DIR)
                    os.rename(self.root / PLAN_DONE_DIR / plan_id, self.root / PLAN_TODO_DIR / plan_id)
                    _fsync_dir(self.root / PLAN_DONE_DIR)
                    _fsync_dir(self.root / PLAN_TODO_DIR)
                    lines.append(f"plan {plan_id} reopened")
                if plan_id not in self._plan_ids(PLAN_TODO_DIR):
                    lines.append(f"plan {plan_id} left as it is: it is not open")
                    continue
                plan = self._read(PLAN_TODO_DIR, plan_id)
                changed = self._undo_tasks(plan, events, lines)
                if changed:
                    self._write_tasks(plan, changed)
        return lines

    def _undo_tasks(self, plan: Plan, events: list[dict[str, Any]], lines: list[str]) -> list[Task]:
        firsts: dict[int, dict[str, Any]] = {}
        for event in events:
            task = event.get("task")
            if isinstance(task, dict) and isinstance(task.get("id"), int) and task["id"] not in firsts:
                firsts[task["id"]] = event
        changed: list[Task] = []
        for task_id, event in sorted(firsts.items()):
            task = plan.task(task_id)
            if task is None:
                lines.append(f"task #{task_id} of plan {plan.id} left alone: its file is missing or unreadable")
                continue
            if event.get("op") == "task_create":
                task.status = "deleted"
                lines.append(f"task #{task_id} {task.subject}: deleted (created after that turn)")
            elif isinstance(event.get("previous"), dict):
                before = _task_from_json(json.dumps(event["previous"]).encode(), task_id)
                task.subject, task.description, task.status = before.subject, before.description, before.status
                task.blocked_by = [i for i in before.blocked_by if plan.task(i) is not None]
                lines.append(f"task #{task_id} {task.subject}: back to {task.status}")
            else:
                lines.append(f"task #{task_id} left alone: its earlier state was not recorded")
                continue
            task.updated_at, task.updated_by = now_iso(), None
            changed.append(task)
        return changed

    def _close_locked(self, plan_id: str) -> str:
        target = self._move_to_done(plan_id)
        return (f"plan {plan_id} closed (created after that turn; its files are kept in "
                f"{self.root / PLAN_DONE_DIR / target})")

    def _move_to_done(self, plan_id: str) -> str:
        """Move an open plan to done/ whole (one rename; a clash with a done plan's name gets `-2`…); its new name."""
        done_dir = self._ensure_dir(self.root / PLAN_DONE_DIR)
        target = plan_id
        for n in range(2, 1000):
            if not (done_dir / target).exists():
                break
            target = f"{plan_id}-{n}"
        os.rename(self.root / PLAN_TODO_DIR / plan_id, done_dir / target)
        _fsync_dir(self.root / PLAN_TODO_DIR)
        _fsync_dir(done_dir)
        return target

    # ---- inside
    def _linked(self, state: str | None = None) -> bool:
        """Whether `.evo-agent/`, `tasks/` (or `tasks/<state>/`) is a symbolic link or not a directory: a clone's
        `tasks -> ../../work/.evo-agent/tasks` would hand this project another project's plan to read and
        write. Such a store holds no plan; writes are refused by `_ensure_dir`."""
        chain = [self.root.parent, self.root] + ([self.root / state] if state else [])
        try:
            return any(not stat.S_ISDIR(os.lstat(d).st_mode) for d in chain)
        except OSError:
            return True

    @plain_contextmanager
    def _locked(self, *, shared: bool = False) -> Iterator[None]:
        """The tasks/ lock: exclusive for a writer, shared for a reader (who never creates anything)."""
        if shared and self._linked():
            yield
            return
        root = self._ensure_dir(self.root) if not shared else self.root
        try:
            fd = os.open(root / TASKS_LOCK_NAME, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, FILE_MODE)
        except OSError:
            if shared:  # a read-only project: read without the lock (every file is replaced whole anyway)
                yield
                return
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            if not shared:
                self._remove_stale_temps()
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _remove_stale_temps(self) -> None:
        """Temps a killed writer left (we hold the lock: no live writer owns one): files in the open plans, and
        the hidden directory of a plan being made (`_publish_plan`)."""
        todo = self.root / PLAN_TODO_DIR
        if not self._linked(PLAN_TODO_DIR):
            try:
                names = os.listdir(todo)
            except OSError:
                names = []
            for name in names:
                if name.startswith(".") and name.endswith(".tmp"):
                    _remove_temp_dir(todo / name)
        for plan_id in self._plan_ids(PLAN_TODO_DIR):
            try:
                for name in os.listdir(todo / plan_id):
                    if name.startswith(".") and name.endswith(".tmp"):
                        try:
                            os.unlink(todo / plan_id / name)
                        except OSError:
                            pass
            except OSError:
                pass

    def _plan_ids(self, state: str) -> list[str]:
        """The plan directories of todo/ or done/, oldest first (names start with the date)."""
        if self._linked(state):
            return []
        try:
            names = os.listdir(self.root / state)
        except OSError:
            return []
        return sorted(n for n in names if layout.PLAN_ID_RE.match(n) and (self.root / state / n).is_dir()
                      and not (self.root / state / n).is_symlink())

    def _active_locked(self) -> Plan:
        ids = self._plan_ids(PLAN_TODO_DIR)
        if not ids:
            raise PlanError("there is no active plan: create one with plan_create first")
        return self._read(PLAN_TODO_DIR, ids[-1])

    def _read(self, state: str, plan_id: str) -> Plan:
        directory = self.root / state / plan_id
        problems: list[str] = []
        raw = _read_bytes(directory / PLAN_FILE_NAME)
        if raw is None:
            problems.append(f"{PLAN_FILE_NAME} is missing or unreadable")
        title, goal, approach, steps = parse_plan_markdown((raw or b"").decode("utf-8", "replace"))
        plan = Plan(plan_id, "done" if state == PLAN_DONE_DIR else "todo", directory, title or plan_id, goal,
                    approach, steps, problems=problems, private=_is_own(plan_id, directory / PLAN_FILE_NAME))
        for name, number in _task_files(directory):
            try:
                plan.tasks.append(_task_from_json(_read_bytes(directory / name), number))
            except PlanError as exc:
                problems.append(f"{name}: {exc}")
        plan.tasks.sort(key=lambda t: t.id)
        for task in plan.tasks:
            task.stored_blocks = task.blocks
        _derive_blocks(plan)
        return plan

    def _write_tasks(self, plan: Plan, changed: list[Task]) -> None:
        """Write the changed tasks, then every task whose stored `blocks` no longer matches (under the lock).

        Only those: a file that differs from what evo-agent would write in other ways (a person's formatting,
        a field it does not know, a committed plan's files without `blocks`) is left as it is; rewriting every
        such file, each atomically with its fsyncs, made completing the first task of a cloned plan of 40,000
        rewrite 40,000 files (40 s).

        The changed tasks are written first and a failure there raises; the others only carry derived
        `blocks` (re-derived on every read, rewritten at the next change), so a full disk there leaves
        their old files whole and the change is still done: reporting it failed told the model an update
        that had landed had not (tests/faults/test_plan_disk.py).
        """
        _derive_blocks(plan)
        ids = {t.id for t in changed}
        for task in changed:
            _replace(plan.path, task_file_name(task.id), _encode_task(task))
            task.stored_blocks = task.blocks
        for task in plan.tasks:
            if task.id not in ids and task.stored_blocks != task.blocks:
                try:
                    _replace(plan.path, task_file_name(task.id), _encode_task(task))
                except OSError:
                    continue
                task.stored_blocks = task.blocks

    def _ensure_dir(self, path: Path) -> Path:
        """`path` and its parents up to the project, 0700, never through a symbolic link."""
        for directory in reversed([path, *path.parents]):
            if directory == self.project_dir or self.project_dir not in directory.parents:
                continue
            try:
                os.mkdir(directory, DIR_MODE)
            except FileExistsError:
                if directory.is_symlink() or not directory.is_dir():
                    raise PlanError(f"{directory} is not a directory (a link is never followed)") from None
        return path

    def _removed_if_empty(self, plan_id: str) -> bool:
        """Remove an open plan's directory when it holds nothing (an older version's plan_create cut short by a
        full disk or a kill made it before plan.md): it blocked every plan_create. True when it was removed."""
        try:
            os.rmdir(self.root / PLAN_TODO_DIR / plan_id)  # only an empty directory goes
        except OSError:
            return False
        return True

    def _publish_plan(self, plan_id: str, markdown: bytes) -> None:
        """todo/<plan_id>/ holding `markdown` as plan.md, appearing whole (one rename of a hidden temp directory).

        A directory made first and filled after could be left empty (a full disk, a kill between the two), and
        an empty directory in todo/ is an open plan: every later plan_create was refused by a plan never made.
        """
        todo = self._ensure_dir(self.root / PLAN_TODO_DIR)
        temp = todo / f".{plan_id}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        os.mkdir(temp, DIR_MODE)
        try:
            _replace(temp, PLAN_FILE_NAME, markdown)
            os.rename(temp, todo / plan_id)
        except BaseException:
            _remove_temp_dir(temp)
            raise
        _fsync_dir(todo)


def _text(value: object, what: str, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise PlanError(f"{what} must be a string")
    if required and not value.strip():
        raise PlanError(f"{what} must not be empty")
    if len(value) > MAX_TEXT:
        raise PlanError(f"{what} is too long ({len(value):,} characters; at most {MAX_TEXT:,})")
    return value.strip()


def _task_id(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("#").isdigit():
            return int(value.strip().lstrip("#"))
        raise PlanError(f"a task id is a number, not {str(value)[:30]!r}")
    return value


def _check_blockers(plan: Plan, task: Task, blocked_by: list[Any]) -> list[int]:
    """`blocked_by` checked: existing tasks of the plan, not the task itself, no cycle."""
    if not isinstance(blocked_by, list):
        raise PlanError("blocked_by must be a list of task ids")
    ids = sorted({_task_id(i) for i in blocked_by})
    known = {t.id: t for t in plan.tasks}
    for i in ids:
        if i == task.id:
            raise PlanError(f"task {task.id} cannot block itself")
        if i not in known:
            raise PlanError(f"plan {plan.id} has no task {i}")
    # A cycle: following blocked_by from one of `ids` leads back to the task.
    edges = {t.id: set(t.blocked_by) for t in plan.tasks}
    edges[task.id] = set(ids)
    seen, stack = set(), list(ids)
    while stack:
        current = stack.pop()
        if current == task.id:
            raise PlanError(f"blocked_by {ids} would make a cycle through task {task.id}")
        if current not in seen:
            seen.add(current)
            stack.extend(edges.get(current, ()))
    return ids


def _derive_blocks(plan: Plan) -> None:
    """Every task's `blocks`: the tasks whose `blocked_by` names it."""
    blocks: dict[int, set[int]] = {t.id: set() for t in plan.tasks}  # sets: one task may block every other
    for task in plan.tasks:
        for i in task.blocked_by:
            if i in blocks:
                blocks[i].add(task.id)
    for task in plan.tasks:
        task.blocks = sorted(blocks[task.id])


def _task_files(directory: Path) -> list[tuple[str, int]]:
    """(file name, task number) of every task file in a plan's directory."""
    try:
        return [(m.group(0), int(m.group(1))) for n in os.listdir(directory) if (m := layout.TASK_FILE_RE.match(n))]
    except OSError:
        return []


def _task_from_json(raw: bytes | None, number: int) -> Task:
    if raw is None:
        raise PlanError("unreadable")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise PlanError(f"not JSON ({exc})") from None
    except RecursionError:  # a committed `[[[[…` past the parser's stack: `evo-agent plan` printed a traceback
        raise PlanError("not JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise PlanError("not a JSON object")
    status = data.get("status", "pending")
    if status not in TASK_STATUSES:
        raise PlanError(f"status {str(status)[:30]!r} is not one of {', '.join(TASK_STATUSES)}")
    subject = data.get("subject")
    if not isinstance(subject, str):
        raise PlanError("subject is missing")

    def ids(key: str) -> list[int]:
        value = data.get(key)
        return sorted({i for i in value if isinstance(i, int) and not isinstance(i, bool) and i != number}) \
            if isinstance(value, list) else []

    def text(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    by = data.get("updated_by")
    return Task(number, subject, text("description"), status, ids("blocked_by"), ids("blocks"),
                text("created_at"), text("updated_at"), by if isinstance(by, str) else None)


def _encode_task(task: Task) -> bytes:
    return (json.dumps(task.to_json(), ensure_ascii=False, indent=2) + "\n").encode()


def _read_bytes(path: Path) -> bytes | None:
    """A small regular file's bytes, never through a link, never blocking on a FIFO; None when it cannot be."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE:
            return None
        if linked_elsewhere(path.parent, info):  # an unpacked archive's hard link to a file of the user's
            return None
        chunks: list[bytes] = []
        size = 0
        while True:  # sized by fstat (a 1 MiB read buffer per small file would cost more than the read)
            chunk = os.read(fd, max(info.st_size - size, 0) + 1)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_FILE:
                return None
    except OSError:
        return None
    finally:
        os.close(fd)


def _is_private(path: Path) -> bool:
    """Owned by this user, and neither group nor others may read it (what `_replace` writes)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def _is_own(plan_id: str, path: Path) -> bool:
    """This user's plan: private to them (`_is_private`), and made by their evo-agent (origin.plans_made: an
    archive unpacked with `tar -xp` keeps 0600 and makes the user the owner, but cannot add to their registry)."""
    if not _is_private(path):
        return False
    from .origin import plan_mark, plans_made

    try:
        ctime_ns = os.lstat(path).st_ctime_ns
    except OSError:
        return False
    return plans_made().knows(plan_mark(plan_id, path.parent.parent.parent), ctime_ns)  # <plans>/<state>/<id>/


def _replace(directory: Path, name: str, data: bytes) -> None:
    """Replace `directory/name` atomically and durably: its data, then the rename, on disk (atomic.py)."""
    replace_file(str(directory / name), data, fsync=True)
    _fsync_dir(directory)


def _remove_temp_dir(directory: Path) -> None:
    """A plan's temp directory and the files in it (best effort; a link is removed, never followed)."""
    try:
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            return
        for name in os.listdir(directory):
            os.unlink(directory / name)
        os.rmdir(directory)
    except OSError:
        pass


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _problems(plan: Plan) -> str:
    return f" ({'; '.join(plan.problems)})" if plan.problems else ""

