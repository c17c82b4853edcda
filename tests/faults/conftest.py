"""The fault suite drives the real console script with the CLI tests' own fixtures."""

from tests.cli.conftest import cli  # noqa: F401 - the fixture, reused as it is
