"""evo-agent: a terminal coding agent whose conversations survive crashes, compaction and restarts."""

__version__ = "0.1.0"
