"""The fixtures every test may use, registered once as plugins (tests/plugins/): a temporary git
project (`project`), the fake APIs (`model_server`, `openai_server`), an in-process provider
(`scripted_provider`) and the CLI (`cli`, `demo_cli`, `cli_main`). Tests name them as arguments and
never import them; helpers that are not fixtures are imported from tests/builders.py,
tests/cli_runner.py and the fake servers' modules.
"""

pytest_plugins = [
    "tests.plugins.projects",
    "tests.plugins.servers",
    "tests.plugins.cli",
]
