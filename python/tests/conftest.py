"""Shared fixtures: the repository's test data and the CLI binary to compare against."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "tests", "data")
sys.path.insert(0, os.path.join(REPO, "python"))


def data(name):
    return os.path.join(DATA, name)


def build_dir():
    return os.environ.get("GPUPEER_BUILD_DIR", os.path.join(REPO, "build"))


@pytest.fixture
def cli():
    """Path of the gpupeer binary; the test is skipped without one."""
    path = os.path.join(build_dir(), "gpupeer")
    if not os.access(path, os.X_OK):
        pytest.skip("no gpupeer binary in %s (build it first)" % build_dir())
    return path
