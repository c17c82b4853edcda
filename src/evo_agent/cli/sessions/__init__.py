"""`evo-agent sessions`: look at and look after the sessions of a project.

    list     listing.py      the table (or JSON) of sessions; also the REPL's numbered picker
    show     render_text.py  the conversation for a terminal
    export   render_md.py, render_html.py, export.py (JSONL and show --json)
    fsck     fsck.py         damage report; --repair for caches and permissions only
    rm/prune remove.py       whole session directories, never a live one

All of them read a session through `model.py`, which turns records into a
conversation (tool calls with their results, subagent runs under their call,
restored messages, compactions) once, for every renderer.
"""

from .command import add_sessions_parser, run_sessions

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .listing import pick_session, sessions_list


def __getattr__(name: str) -> object:  # listing loads the session library: only when asked (--help does not)
    if name in ("pick_session", "sessions_list"):
        from . import listing

        return getattr(listing, name)
    raise AttributeError(name)


__all__ = ["add_sessions_parser", "run_sessions", "pick_session", "sessions_list"]
