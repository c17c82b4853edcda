"""Fixtures every test may use, registered once as plugins (tests/plugins/), never imported:

- `project` (a temporary git repository), in tests/plugins/projects.py;
- `model_server`, `openai_server` (the loopback fake APIs), `hostile_endpoint` (one that misbehaves)
  and the end-of-test check of every ScriptedProvider a test made, in tests/plugins/servers.py;
- `cli`, `demo_cli` (the console script as a subprocess), `cli_main` (main(argv) in-process), in
  tests/plugins/cli.py;
- the `exhaustive` marker's deselection, in tests/plugins/markers.py;
- `terminals` (tmux terminals a test opened, closed after it), in tests/plugins/terminals.py;
- evo_agent's bytecode written once before the first test, in tests/plugins/bytecode.py;
- hypothesis's profiles (the same examples every run; `HYPOTHESIS_PROFILE=explore` for fresh ones), in
  tests/plugins/hypothesis_profiles.py.

Helpers that are not fixtures are imported from tests/builders.py, tests/cli_runner.py,
tests/scripted_provider.py and the fake servers' modules.
"""

pytest_plugins = [
    "tests.plugins.projects",
    "tests.plugins.servers",
    "tests.plugins.cli",
    "tests.plugins.markers",
    "tests.plugins.terminals",
    "tests.plugins.bytecode",
    "tests.plugins.hypothesis_profiles",
]
