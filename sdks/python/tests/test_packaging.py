"""The package builds into a wheel and an sdist, and the wheel works on its own."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = {
    "__init__",
    "_activation",
    "_answer",
    "_client",
    "_errors",
    "_http",
    "_jws",
    "_keys",
    "_license",
    "_machine",
    "_online",
    "_relay",
    "_results",
    "_revocation",
    "_shared",
    "_store",
    "_text",
    "_time",
}


def build(project: Path, out: Path) -> None:
    """python -m build when it is installed (Debian: python3-build), else pip wheel (a wheel only)."""
    if importlib.util.find_spec("build") is None and importlib.util.find_spec("wheel") is None:
        # jest sets LICENSING_REQUIRE_BUILD after scripts/ensure-toolchain.sh: no skipping there.
        if os.environ.get("LICENSING_REQUIRE_BUILD") == "1":
            pytest.fail("neither build nor wheel is installed: run scripts/ensure-toolchain.sh")
        pytest.skip("neither build nor wheel is installed: run scripts/ensure-toolchain.sh")
    if importlib.util.find_spec("build") is not None:
        command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(project)]
    else:
        command = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(project),
        ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_wheel_and_sdist(tmp_path):
    # Built from a copy, so that no build/ or egg-info is left in the source tree.
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project)
    shutil.copy(ROOT / "README.md", project)
    shutil.copytree(ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "dist"
    build(project, out)

    (wheel,) = out.glob("licensing_verifier-*-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode("utf-8")
        archive.extractall(tmp_path / "installed")
    assert {"licensing_verifier/%s.py" % module for module in MODULES} | {
        "licensing_verifier/py.typed"
    } <= names
    # Older setuptools write the requirement as "cryptography (>=38)".
    assert re.search(r"^Requires-Dist: cryptography ?\(?>=38\)?$", metadata, re.M), metadata
    assert "Requires-Python: >=3.9" in metadata
    assert "Version: 0.1.0" in metadata

    sdists = list(out.glob("licensing-verifier-*.tar.gz")) + list(out.glob("licensing_verifier-*.tar.gz"))
    if importlib.util.find_spec("build") is not None:
        (sdist,) = sdists
        with tarfile.open(sdist) as archive:
            members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        assert {"pyproject.toml", "README.md", "src/licensing_verifier/_license.py"} <= members

    # The wheel's package, alone on the path, verifies a vector.
    script = (
        "import json, licensing_verifier as lv\n"
        "f = json.load(open(%r))\n"
        "v = next(v for v in f['vectors'] if v['id'] == 'time/perpetual-since-1969')\n"
        "r = lv.verify_license(v['input']['text'], f['keys'][v['key']]['pem'])\n"
        "print(lv.__file__, r.valid)\n"
    ) % str(ROOT.parent / "conformance" / "licenses.json")
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import sys; sys.path.insert(0, %r)\n%s" % (str(tmp_path / "installed"), script),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(" True") and str(tmp_path / "installed") in done.stdout
