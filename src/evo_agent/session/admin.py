"""What only the commands that look after sessions use: fsck, rm and prune, rename (cli/sessions/).

Kept out of `evo_agent.session.__all__` so the library's everyday API (record, list, resume) stays
small: a front end that records and resumes never needs to rebuild a meta.json, restore the
`.gitignore` or count the secrets in a transcript. Outside evo_agent.session this is the one
submodule that may be imported (tests/test_layers.py); each name loads its own submodule at first
use, as the package's names do, so `sessions fsck` without `--secrets` never loads the rules.
"""

from . import _lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing

# name -> the submodule defining it, as session/__init__.py's table.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("SessionInUse", "held_for_removal"), "live"),  # rm, prune
    **dict.fromkeys(("read_meta", "rebuild_meta", "write_meta"), "meta"),  # fsck
    **dict.fromkeys(("rename_session",), "naming"),  # rename
    **dict.fromkeys(("forget_made",), "origin"),  # rm, prune
    **dict.fromkeys(("count_secrets", "may_hold_secret"), "redact"),  # fsck --secrets
    **dict.fromkeys(("gitignore_problem", "repair_gitignore", "restore_gitignore", "unexpected_entries"), "trust"),
}

__all__ = sorted(_EXPORTS, key=str.casefold)


__getattr__, __dir__ = _lazy_names(globals(), _EXPORTS)


# isort: off
if TYPE_CHECKING:  # what type checkers see: the same names, each marked re-exported (`X as X`)
    from .live import SessionInUse as SessionInUse, held_for_removal as held_for_removal
    from .meta import read_meta as read_meta, rebuild_meta as rebuild_meta, write_meta as write_meta
    from .naming import rename_session as rename_session
    from .origin import forget_made as forget_made
    from .redact import count_secrets as count_secrets, may_hold_secret as may_hold_secret
    from .trust import (
        gitignore_problem as gitignore_problem, repair_gitignore as repair_gitignore,
        restore_gitignore as restore_gitignore, unexpected_entries as unexpected_entries,
    )
# isort: on
