"""A real PostgreSQL for the sync tests: one throwaway cluster per test run, one fresh database per test.

The cluster's data directory is in /dev/shm when it has room (pgcluster.memory_dir). A migrated store
is made once per run and each test's store is a copy of it (CREATE DATABASE … TEMPLATE, ~0.07 s against
~0.17 s for running the migration again): the same tables, grants and partitions `sync migrate` makes.
"""

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
    cluster = PgCluster(bin_dir, in_memory=True).init().start()
    try:
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture(scope="session")
def migrated_template(pg_cluster: PgCluster) -> str:
    """The name of a database migrated by its owner (`evo-agent sync migrate`), which tests copy, never use."""
    return pg_cluster.freeze_as_template(migrated(pg_cluster.new_database()))


@pytest.fixture
def sync_url(pg_cluster: PgCluster, migrated_template: str) -> str:
    """The URL of a fresh database on the test cluster, migrated by its owner (a copy of `migrated_template`)."""
    return pg_cluster.new_database(template=migrated_template)


@pytest.fixture
def empty_url(pg_cluster: PgCluster) -> str:
    """The URL of a fresh database nobody has migrated."""
    return pg_cluster.new_database()

