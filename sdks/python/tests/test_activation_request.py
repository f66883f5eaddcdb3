"""Request and release files of air-gapped machines: their format (the JavaScript SDK's), their
signature by the machine key, and the inputs refused. activations.json lends an activation file
that the platform's signing code made. The platform itself takes these files in
tests/test_offline_e2e.py.
"""

import json
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import licensing_verifier as lv
from licensing_verifier._text import base64url, from_base64url
from vectors import vector_files


def open_jws(jws: str, x: str):
    """The header and payload of a compact JWS whose EdDSA signature verifies with the key `x`."""
    header, payload, signature = jws.split(".")
    Ed25519PublicKey.from_public_bytes(from_base64url(x)).verify(
        from_base64url(signature), (header + "." + payload).encode("ascii")
    )
    return json.loads(from_base64url(header)), json.loads(from_base64url(payload))


def vector_activation():
    (vector,) = [v for v in vector_files()["activations.json"]["vectors"] if v["id"] == "ed25519/valid"]
    return vector["input"]["text"], vector["expected"]["activation"]


def test_a_request_is_signed_by_its_own_machine_key():
    before = int(time.time())
    made = lv.create_activation_request(
        "LIC-CAD-7K3F9QX2M4W8T1ZC",
        "machine-a",
        components={"cpu": "c1", "disk": "<d&1>é"},
        hostname="cad-01",
    )
    key = made.machine_key
    assert set(key) == {"kty", "crv", "x", "d"} and (key["kty"], key["crv"]) == ("OKP", "Ed25519")
    header, claims = open_jws(made.request, key["x"])
    assert header == {"alg": "EdDSA", "typ": "activation-request+jwt"}
    # The JavaScript SDK's members, in its order; platform was not given, so it is not sent.
    members = ["v", "license_key", "fingerprint", "components", "hostname", "nonce", "iat", "jwk"]
    assert list(claims) == members
    assert claims["v"] == 1 and claims["license_key"] == "LIC-CAD-7K3F9QX2M4W8T1ZC"
    assert claims["fingerprint"] == "machine-a" and claims["hostname"] == "cad-01"
    assert claims["components"] == {"cpu": "c1", "disk": "<d&1>é"}
    assert claims["nonce"] == made.nonce and len(from_base64url(made.nonce)) == 24
    assert before <= claims["iat"] <= time.time()
    assert claims["jwk"] == {"kty": "OKP", "crv": "Ed25519", "x": key["x"]}
    again = lv.create_activation_request("L", "f")
    assert again.nonce != made.nonce and again.machine_key["x"] != key["x"]
    _, bare = open_jws(again.request, again.machine_key["x"])
    assert list(bare) == ["v", "license_key", "fingerprint", "nonce", "iat", "jwk"]
    # What the machine keeps travels as JSON.
    assert json.loads(json.dumps(made.to_dict())) == made.to_dict()


def test_a_release_names_the_activation_and_is_signed_by_the_machine_key():
    file, activation = vector_activation()
    made = lv.create_activation_request("L", "f")
    release = lv.create_activation_release("\n " + file + "\n", json.loads(json.dumps(made.machine_key)))
    header, claims = open_jws(release, made.machine_key["x"])
    assert header == {"alg": "EdDSA", "typ": "activation-release+jwt"}
    assert list(claims) == ["v", "activation_id", "license_key", "fingerprint", "iat"]
    assert (claims["v"], claims["activation_id"], claims["license_key"], claims["fingerprint"]) == (
        1,
        activation["activation_id"],
        activation["serial"],
        activation["fingerprint"],
    )


@pytest.mark.parametrize("serial, fingerprint", [("", "f"), ("L", ""), (None, "f"), ("L", 7)])
def test_a_request_needs_a_serial_and_a_fingerprint(serial, fingerprint):
    with pytest.raises(lv.InvalidOptionError):
        lv.create_activation_request(serial, fingerprint)


def test_a_request_refuses_components_that_are_not_strings():
    with pytest.raises(lv.InvalidOptionError):
        lv.create_activation_request("L", "f", components={"cpu": 1})


def test_a_release_refuses_what_it_cannot_use():
    file, _ = vector_activation()
    made = lv.create_activation_request("L", "f")
    other = lv.create_activation_request("L", "f")
    x, d = made.machine_key["x"], made.machine_key["d"]
    for key in (
        {"kty": "OKP", "crv": "Ed25519", "x": x},
        {"kty": "OKP", "crv": "Ed25519", "x": x, "d": other.machine_key["d"]},
        {"kty": "OKP", "crv": "Ed25519", "x": x, "d": d + "="},
        {"kty": "EC", "crv": "Ed25519", "x": x, "d": d},
        None,
    ):
        with pytest.raises(lv.InvalidOptionError):
            lv.create_activation_release(file, key)
    header, _, signature = file.split(".")
    for not_activation in (
        made.request,
        header + "." + file.split(".")[1],
        "",
        None,
        header + "." + base64url(b'{"v":1}') + "." + signature,
    ):
        with pytest.raises(lv.InvalidOptionError):
            lv.create_activation_release(not_activation, made.machine_key)
