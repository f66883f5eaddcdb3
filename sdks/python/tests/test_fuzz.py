"""Mutated vectors: every input gets a verdict, and only a LicensingError is ever raised.

Documents are bit-flipped, truncated, replaced with random bytes and rebuilt from random JSON.
Keys are mutated too. Each result must be well formed, and a changed document must never verify.
The run is seeded: FUZZ_SEED picks another one, FUZZ_ROUNDS makes it longer.
"""

import base64
import json
import os
import random
import string

import pytest

import licensing_verifier as lv
from licensing_verifier._license import _compact_jws_of
from licensing_verifier._text import js_trim
from vectors import all_vectors, key_of, run

SEED = int(os.environ.get("FUZZ_SEED", "20270301"))
ROUNDS = int(os.environ.get("FUZZ_ROUNDS", "6"))

ORDER = {
    "license": [
        "malformed",
        "unknown_key",
        "signature_invalid",
        "product_mismatch",
        "not_yet_valid",
        "expired",
        "file_expired",
        "fingerprint_mismatch",
    ],
    "revocation-list": [
        "malformed",
        "unknown_key",
        "signature_invalid",
        "product_mismatch",
        "version_regression",
        "version_gap",
    ],
    "signed-answer": [
        "unsigned",
        "malformed",
        "unknown_key",
        "signature_invalid",
        "nonce_mismatch",
        "too_old",
        "not_yet_signed",
    ],
    "activation": [
        "malformed",
        "unknown_key",
        "signature_invalid",
        "nonce_mismatch",
        "machine_key_mismatch",
        "fingerprint_mismatch",
        "product_mismatch",
        "not_yet_valid",
        "expired",
    ],
}
ALONE = {"malformed", "unsigned"}
CLAIMS = [
    "v",
    "jti",
    "sub",
    "iss",
    "iat",
    "nbf",
    "exp",
    "product_id",
    "features",
    "valid_until",
    "entries",
    "version",
    "since",
    "removed",
    "cnf",
    "components",
    "nonce",
    "hardware_binding",
    "policy",
    "typ",
    "alg",
    "kid",
    "crit",
]

DOCUMENT_VECTORS = [
    (name, file, vector) for name, file, vector in all_vectors() if file["kind"] != "public-key"
]


def random_json(rng: random.Random, depth: int = 0):
    choice = rng.randrange(12 if depth < 3 else 8)
    if choice == 0:
        return None
    if choice == 1:
        return rng.random() < 0.5
    if choice == 2:
        return rng.choice(
            [0, -1, 1, 2**53 - 1, 2**53, -(2**53), 10**30, 8_640_000_000_001, 1803902400]
        )
    if choice == 3:
        return rng.choice([0.5, -0.0, 1e308, 1803902400.0, 3.0, 1e-7])
    if choice in (4, 5, 6, 7):
        alphabet = string.printable + "\u00e9\u2028\ufeff\ud83d\ude00\x00\x1f"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if choice in (8, 9):
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(CLAIMS): random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def segment(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii").rstrip("=")


# Texts that stress a JSON reader: deep nesting, long numbers, what JSON does not have.
HOSTILE_JSON = [
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    '{"iat":' + "9" * 5000 + "}",
    '{"iat":1e400,"v":1}',
    '{"v":NaN}',
    '{"v":Infinity}',
    '{"v":1,"v":2}',
    "\ufeff{}",
    '{"\ud800":1}',
    "",
    "null",
]


def mutations(rng: random.Random, text: str, header: str):
    data = text.encode("utf-8", "surrogatepass")
    for _ in range(ROUNDS):
        flipped = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            if flipped:
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        yield bytes(flipped)
        yield data[: rng.randrange(len(data) + 1)]
        yield bytes(rng.randrange(256) for _ in range(rng.randrange(64)))
        cut = text.rfind(".")
        yield segment(random_json(rng)) + "." + segment(random_json(rng)) + "." + text[cut + 1 :]
        yield header + "." + segment(random_json(rng)) + "." + text[cut + 1 :]
        yield header + "." + segment(rng.choice(HOSTILE_JSON)) + "." + text[cut + 1 :]
        yield segment(rng.choice(HOSTILE_JSON)) + "." + text.split(".")[1] + "." + text[
            cut + 1 :
        ] if "." in text else text


def as_text(document) -> str:
    return document if isinstance(document, str) else document.decode("utf-8", "replace")


def check(kind: str, verdict: dict) -> None:
    codes = verdict["errors"]
    assert verdict["valid"] is (not codes)
    assert len(set(codes)) == len(codes)
    assert all(code in ORDER[kind] for code in codes), codes
    assert codes == sorted(codes, key=ORDER[kind].index), codes
    if any(code in ALONE for code in codes):
        assert len(codes) == 1, codes
    json.dumps(verdict)


def same_document(kind: str, given, original: str) -> bool:
    if kind == "license":
        # A file's bytes, its text and its license_blob all hold the same compact JWS.
        return _compact_jws_of(given) == _compact_jws_of(original)
    return js_trim(as_text(given)) == js_trim(original)


def original_text(vector: dict) -> str:
    given = vector["input"]
    if "bytes_base64" in given:
        return base64.b64decode(given["bytes_base64"]).decode("utf-8", "replace")
    return given.get("text", given.get("signature") or "")


@pytest.mark.parametrize(
    "name, file, vector",
    [
        pytest.param(name, file, vector, id=name + ":" + vector["id"])
        for name, file, vector in DOCUMENT_VECTORS
    ],
)
def test_mutated_documents_get_a_verdict(name, file, vector):
    rng = random.Random("%d:%s:%s" % (SEED, name, vector["id"]))
    kind = file["kind"]
    original = original_text(vector)
    header = js_trim(original).split(".")[0]
    # The vector's key, imported once for all its mutations (test_vectors passes it as written).
    keys = lv.import_public_keys(key_of(file, vector["key"]))
    for document in mutations(rng, original, header):
        # License files are read from bytes or text; the other documents are text.
        given = document if kind == "license" and rng.random() < 0.5 else as_text(document)
        verdict = run(file, vector, given, keys)
        check(kind, verdict)
        if verdict["valid"] and vector["expected"]["valid"]:
            # A genuine document still verifies only when whitespace around it is all that changed.
            assert same_document(kind, given, original), (vector["id"], given)


def test_changed_documents_never_verify():
    """A changed signed byte never verifies: checked on every valid vector, byte by byte."""
    rng = random.Random(SEED)
    for name, file, vector in DOCUMENT_VECTORS:
        if (
            not vector["expected"].get("valid")
            or "text" not in vector["input"]
            and "signature" not in vector["input"]
        ):
            continue
        original = js_trim(original_text(vector))
        if "." not in original:
            continue  # a license_blob: its bytes are checked through the file's text
        keys = lv.import_public_keys(key_of(file, vector["key"]))
        for _ in range(ROUNDS * 4):
            position = rng.randrange(len(original))
            replacement = rng.choice(string.ascii_letters + string.digits + "-_")
            changed = original[:position] + replacement + original[position + 1 :]
            if changed == original:
                continue
            verdict = run(file, vector, changed, keys)
            assert not verdict["valid"], (name, vector["id"], position, replacement)
        if file["kind"] == "signed-answer":
            body = vector["input"]["body"]
            if body:
                position = rng.randrange(len(body))
                changed_body = body[:position] + chr(ord(body[position]) ^ 1) + body[position + 1 :]
                verdict = run(file, dict(vector, input=dict(vector["input"], body=changed_body)))
                assert "signature_invalid" in verdict["errors"]


def mutated_keys(rng: random.Random, key):
    for _ in range(ROUNDS * 2):
        if isinstance(key, str) and key:
            data = bytearray(key.encode("utf-8"))
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            yield data.decode("utf-8", "replace")
            yield key[: rng.randrange(len(key))]
        elif isinstance(key, dict) and "keys" in key:
            yield {"keys": [next(mutated_keys(rng, jwk)) for jwk in key["keys"] if isinstance(jwk, dict)]}
            yield {"keys": random_json(rng)}
        elif isinstance(key, dict):
            changed = dict(key)
            member = rng.choice(list(changed) + CLAIMS + ["kty", "crv", "x", "y", "n", "e", "use", "key_ops"])
            if rng.random() < 0.3:
                changed.pop(member, None)
            else:
                changed[member] = random_json(rng)
            yield changed
        yield random_json(rng)


def test_mutated_keys_are_accepted_or_refused():
    rng = random.Random(SEED)
    seen = set()
    for name, file, vector in all_vectors():
        if vector["key"] in seen:
            continue
        seen.add(vector["key"])
        for key in mutated_keys(rng, key_of(file, vector["key"])):
            try:
                keys = lv.import_public_keys(key)
            except lv.InvalidPublicKeyError:
                continue
            assert keys and all(k.type in ("ed25519", "ecdsa-p256", "rsa") for k in keys)
            # An accepted key verifies documents without raising.
            verdict = lv.verify_license("a.b.c", keys)
            assert verdict.codes == ("malformed",)


@pytest.mark.parametrize(
    "options",
    [
        {"now": float("nan")},
        {"now": "2027-03-01"},
        {"clock_tolerance_seconds": -1},
        {"clock_tolerance_seconds": float("inf")},
        {"product_id": 5},
    ],
)
def test_unusable_options_raise_the_documented_error(options):
    _, file, vector = next(iter(all_vectors()))
    with pytest.raises(lv.InvalidOptionError):
        lv.verify_license(vector["input"]["text"], key_of(file, vector["key"]), **options)
