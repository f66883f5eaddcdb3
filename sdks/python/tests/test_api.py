"""The public API beyond the vectors: the README's example, helpers, and Python 3.9."""

import ast
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import licensing_verifier as lv
from vectors import vector_files

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "licensing_verifier"


def vector(file_name: str, vector_id: str):
    file = vector_files()[file_name]
    found = next(v for v in file["vectors"] if v["id"] == vector_id)
    (key,) = file["keys"][found["key"]].values()
    return found, key


def test_the_readme_example_runs_as_written(tmp_path):
    readme = (ROOT / "README.md").read_text("utf-8")
    example = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    assert len(example.strip().splitlines()) <= 10
    found, pem = vector("licenses.json", "time/perpetual-since-1969")
    (tmp_path / "product.pem").write_text(pem, "utf-8")
    (tmp_path / "license.lic").write_text(found["input"]["text"] + "\n", "utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC ['export', 'pro'] None")

    # The same file, refused: another product's key.
    other = vector_files()["licenses.json"]["keys"]["other-ed25519.pem"]["pem"]
    (tmp_path / "product.pem").write_text(other, "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stderr.strip() == "license refused: signature_invalid"


def test_the_sources_are_python_3_9():
    for path in SRC.glob("*.py"):
        ast.parse(path.read_text("utf-8"), filename=str(path), feature_version=(3, 9))


def test_keys_import_once_and_times_are_datetimes_or_seconds():
    found, pem = vector("licenses.json", "ed25519/valid-pem")
    keys = [lv.import_public_key(pem.encode("ascii"))]
    at = datetime.fromtimestamp(found["options"]["now"], timezone.utc)
    for now in (
        at,
        at.astimezone(timezone(timedelta(hours=-7))),
        found["options"]["now"],
        float(found["options"]["now"]),
    ):
        assert lv.verify_license(found["input"]["text"], keys, now=now).valid
    with pytest.raises(lv.InvalidOptionError):
        lv.verify_license(found["input"]["text"], keys, now=datetime(2027, 3, 1))
    with pytest.raises(lv.InvalidPublicKeyError):
        lv.verify_license(found["input"]["text"], [])


def test_decode_and_blob():
    found, pem = vector("licenses.json", "ed25519/valid-pem")
    jws = found["input"]["text"]
    decoded = lv.decode_license(lv.license_blob_of(jws))
    assert decoded is not None and decoded.serial == "LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC"
    assert decoded.claims["sub"] == decoded.serial
    assert lv.decode_license("not a license") is None


def test_revocation_lists_are_kept_as_json_and_read():
    found, pem = vector("revocation-lists.json", "delta/applied")
    result = lv.verify_revocation_list(found["input"]["text"], pem, previous=found["options"]["previous"])
    assert result.valid
    held = lv.RevocationList.from_dict(result.list.to_dict())
    assert held == result.list
    assert lv.is_revoked(held, "LIC-PHOTO-EDITOR-D000000000000004")
    assert lv.revocation_entry(held, {"serial": "LIC-PHOTO-EDITOR-B000000000000002"}).status == "revoked"
    assert not lv.is_revoked(held, "LIC-PHOTO-EDITOR-A000000000000001")
    assert not lv.is_stale(held, now=found["options"].get("now", 1803902400))
    assert lv.is_stale(held, now=datetime(2100, 1, 1, tzinfo=timezone.utc))
    with pytest.raises(lv.InvalidOptionError):
        lv.RevocationList.from_dict({"version": 1})


def test_signed_answers_take_bytes_or_text():
    found, key = vector("signed-answers.json", "valid-non-ascii-body")
    given = found["input"]
    for body in (given["body"], given["body"].encode("utf-8")):
        result = lv.verify_signed_answer(
            body, given["signature"], key, nonce=given["nonce"], now=found["options"]["now"]
        )
        assert result.valid, result.codes
