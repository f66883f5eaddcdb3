"""The air-gapped flow against the running platform.

A request file made by the SDK, the activation file the platform answers
(`POST /v1/activations/offline`) verified by the SDK, and the SDK's release file
(`POST /v1/activations/offline/release`). sdks/python/online.int-spec.ts sets LICENSING_URL,
PRODUCT_KEY, LICENSING_E2E_ADMIN_KEY and LICENSING_E2E_OFFLINE: a license of one seat with a
license token (a JSON object: `id`, `serial`, `token`). The files cross the "air gap" as text.
"""

import json
import os
import re
import urllib.error
import urllib.request
from typing import Any, Tuple

import pytest

import licensing_verifier as lv
from licensing_verifier._text import base64url, from_base64url
from test_online_e2e import README, admin, seats

NEEDED = ("LICENSING_URL", "PRODUCT_KEY", "LICENSING_E2E_ADMIN_KEY", "LICENSING_E2E_OFFLINE")
MISSING = [name for name in NEEDED if not os.environ.get(name)]

pytestmark = [
    pytest.mark.online,
    pytest.mark.skipif(
        bool(MISSING),
        reason="needs the running platform (sdks/python/online.int-spec.ts): " + ", ".join(MISSING),
    ),
]


def post(path: str, token: str, body: Any) -> Tuple[int, Any]:
    request = urllib.request.Request(
        os.environ["LICENSING_URL"] + path,
        method="POST",
        data=json.dumps(body).encode("utf-8"),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_an_air_gapped_machine_activates_and_releases_its_seat():
    license = json.loads(os.environ.get("LICENSING_E2E_OFFLINE", "{}"))
    product_key = os.environ.get("PRODUCT_KEY", "")
    token = license["token"]

    # 1. On the machine: a request, and its key and nonce kept (as JSON, across restarts).
    made = lv.create_activation_request(
        license["serial"],
        "air-gapped-1",
        components={"cpu": "GenuineIntel-06-8C-01", "disk": "S4EVNX0R123456"},
        hostname="cad-01",
        platform="linux-x64",
    )
    kept = json.loads(json.dumps(made.to_dict()))

    # 2. Elsewhere, online: the platform takes the seat and answers the activation file.
    status, answer = post("/v1/activations/offline", token, {"request": made.request})
    assert status == 201, answer
    file = answer["activation_file"]

    # 3. Back on the machine: the file verifies with the product's key, for this request only.
    result = lv.verify_activation_file(
        file, product_key, nonce=kept["nonce"], machine_key=kept["machine_key"], fingerprint="air-gapped-1"
    )
    assert result.valid, result.codes
    activation = result.activation
    assert activation.activation_id == answer["activation"]["id"]
    assert (activation.serial, activation.license_id) == (license["serial"], license["id"])
    assert activation.components["disk"] == "S4EVNX0R123456"
    assert activation.expires_at == answer["expires_at"]
    other = lv.create_activation_request(license["serial"], "air-gapped-2")
    replayed = lv.verify_activation_file(
        file, product_key, nonce=other.nonce, machine_key=other.machine_key, fingerprint="air-gapped-2"
    )
    assert replayed.codes == ("nonce_mismatch", "machine_key_mismatch", "fingerprint_mismatch")

    # The request again renews the same seat. Another machine finds no seat left (the license has one).
    status, renewed = post("/v1/activations/offline", token, {"request": made.request})
    assert (status, renewed["activation"]["id"]) == (200, activation.activation_id), renewed
    status, refused = post("/v1/activations/offline", token, {"request": other.request})
    assert (status, refused["code"]) == (409, "seat_limit_reached"), refused
    # A request whose key was swapped after signing is refused: the signature is the SDK's.
    header, payload, signature = made.request.split(".")
    swapped = from_base64url(payload).replace(
        made.machine_key["x"].encode(), other.machine_key["x"].encode()
    )
    forged = header + "." + base64url(swapped) + "." + signature
    status, refused = post("/v1/activations/offline", token, {"request": forged})
    assert (status, refused["code"]) == (400, "validation_failed"), refused

    # 4. Leaving: a release signed by another key is refused; the machine's own frees the seat.
    wrong = lv.create_activation_release(file, other.machine_key)
    status, refused = post("/v1/activations/offline/release", token, {"release": wrong})
    assert (status, refused["code"]) == (400, "validation_failed"), refused
    assert len(seats(license["id"])) == 1
    release = lv.create_activation_release(file, kept["machine_key"])
    for _ in range(2):  # releasing twice changes nothing more
        status, answer = post("/v1/activations/offline/release", token, {"release": release})
        assert status == 200, answer
    assert seats(license["id"]) == []
    # The seat is free for the other machine.
    status, answer = post("/v1/activations/offline", token, {"request": other.request})
    assert status == 201, answer


def test_the_readme_air_gapped_example_runs_as_written(tmp_path, monkeypatch):
    markdown = README.read_text("utf-8")
    match = re.search(r"<!-- air-gapped walk-through[^>]*-->\s*```python\n(.*?)```", markdown, re.S)
    assert match, "README.md has no block marked <!-- air-gapped walk-through -->"
    on_the_machine, back_on_the_machine = re.split(r"\n(?=# 3\. )", match.group(1))
    license = json.loads(os.environ.get("LICENSING_E2E_OFFLINE", "{}"))
    monkeypatch.chdir(tmp_path)
    namespace: dict = {
        "__name__": "__main__",
        "LICENSE_KEY": license["serial"],
        "fingerprint": "air-gapped-readme",
        "cpu_id": "GenuineIntel-06-8C-01",
        "public_key": os.environ.get("PRODUCT_KEY", ""),
    }
    # The seat of the other test was taken by its second machine: give it back first.
    for seat in seats(license["id"]):
        status, _ = admin("DELETE", "/v1/activations/" + seat["id"])
        assert status == 200
    exec(compile(on_the_machine, str(README), "exec"), namespace)
    assert json.loads((tmp_path / "machine-key.json").read_text("utf-8"))["nonce"] == namespace["made"].nonce

    # Step 2, as a person online would do it.
    request = (tmp_path / "activation-request.jws").read_text("utf-8")
    status, answer = post("/v1/activations/offline", license["token"], {"request": request})
    assert status == 201, answer
    (tmp_path / "activation.jws").write_text(answer["activation_file"], "utf-8")

    exec(compile(back_on_the_machine, str(README), "exec"), namespace)
    assert namespace["result"].activation.activation_id == answer["activation"]["id"]
    release = namespace["release"]
    status, answer = post("/v1/activations/offline/release", license["token"], {"release": release})
    assert status == 200, answer
    assert seats(license["id"]) == []

