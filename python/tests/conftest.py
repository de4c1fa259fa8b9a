import pytest

import support


@pytest.fixture(scope="session")
def package_dir(tmp_path_factory):
    return support.stage_package(tmp_path_factory.mktemp("site"))


@pytest.fixture
def program(package_dir, tmp_path):
    return support.Program(package_dir, tmp_path)
