"""The fault suite drives the real console script with the CLI tests' own fixtures."""

from tests.cli.conftest import cli, demo_cli  # noqa: F401 - fixtures, reused as they are
