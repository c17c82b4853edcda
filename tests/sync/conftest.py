"""A real PostgreSQL for the sync tests: one throwaway cluster per test run, one fresh database per test."""

from __future__ import annotations

import pytest

from .helpers import migrated
from .pgcluster import PgCluster, find_bin_dir


@pytest.fixture(scope="session")
def pg_cluster():
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed; .ci/run installs them")
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
    cluster = PgCluster(bin_dir).init().start()
    try:
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def sync_url(pg_cluster: PgCluster) -> str:
    """The URL of a fresh database on the test cluster, migrated by its owner (`evo-agent sync migrate`)."""
    return migrated(pg_cluster.new_database())


@pytest.fixture
def empty_url(pg_cluster: PgCluster) -> str:
    """The URL of a fresh database nobody has migrated."""
    return pg_cluster.new_database()

