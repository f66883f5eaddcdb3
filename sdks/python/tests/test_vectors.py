"""Every conformance vector: the same verdict as the JavaScript SDK, to the error codes' order."""

import pytest

from vectors import all_vectors, run, vector_files

KINDS = {"license", "revocation-list", "signed-answer", "activation", "public-key"}


def test_every_file_is_of_a_known_kind():
    files = vector_files()
    assert set(files) >= {
        "licenses.json",
        "checkouts.json",
        "revocation-lists.json",
        "signed-answers.json",
        "activations.json",
        "public-keys.json",
    }
    assert {file["kind"] for file in files.values()} <= KINDS


@pytest.mark.parametrize(
    "file, vector",
    [pytest.param(file, vector, id=name + ":" + vector["id"]) for name, file, vector in all_vectors()],
)
def test_vector(file, vector):
    assert run(file, vector) == vector["expected"]
