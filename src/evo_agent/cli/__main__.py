"""`python -m evo_agent.cli` runs the `evo-agent` command line."""

from .main import main

main()
