"""Import other agents' sessions into evo-agent (issue #20): read only, streamed, repaired on resume."""

from .claude_code import find_sources as find_claude_code_sources
from .claude_code import read_claude_code
from .model import ImportedSession, earlier_imports, source_fingerprint, write_import

__all__ = ["ImportedSession", "earlier_imports", "find_claude_code_sources", "read_claude_code",
           "source_fingerprint", "write_import"]
