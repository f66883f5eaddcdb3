"""Reads the conformance vectors (sdks/conformance) and runs one through this SDK."""

import base64
import json
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import licensing_verifier as lv

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"


def vector_files() -> Dict[str, dict]:
    return {path.name: json.loads(path.read_text("utf-8")) for path in sorted(CONFORMANCE.glob("*.json"))}


def all_vectors() -> Iterator[Tuple[str, dict, dict]]:
    for name, file in vector_files().items():
        for vector in file["vectors"]:
            yield name, file, vector


def key_of(file: dict, name: str) -> Any:
    entry = file["keys"][name]
    (value,) = entry.values()
    return value


def run(file: dict, vector: dict, document: Any = None, keys: Any = None) -> Dict[str, Any]:
    """The verdict of this SDK, in the vectors' shape. `document` replaces the vector's input.

    `keys` replaces the vector's key: the same key, imported once, for the runs of many documents.
    """
    key = key_of(file, vector["key"]) if keys is None else keys
    o = vector["options"]
    kind = file["kind"]
    if kind == "license":
        if document is None:
            given = vector["input"]
            document = given["text"] if "text" in given else base64.b64decode(given["bytes_base64"])
        result = lv.verify_license(
            document,
            key,
            now=o.get("now"),
            product_id=o.get("product_id"),
            fingerprint=o.get("fingerprint"),
            clock_tolerance_seconds=o.get("clock_tolerance_seconds"),
        )
        return {
            "valid": result.valid,
            "errors": list(result.codes),
            "license": None if result.license is None else result.license.to_dict(),
        }
    if kind == "revocation-list":
        result = lv.verify_revocation_list(
            vector["input"]["text"] if document is None else document,
            key,
            product_id=o.get("product_id"),
            previous=o.get("previous"),
        )
        return {
            "valid": result.valid,
            "errors": list(result.codes),
            "list": None if result.list is None else result.list.to_dict(),
        }
    if kind == "signed-answer":
        given = vector["input"]
        result = lv.verify_signed_answer(
            given["body"],
            given["signature"] if document is None else document,
            key,
            nonce=given["nonce"],
            now=o.get("now"),
            max_age_seconds=o.get("max_age_seconds"),
            clock_tolerance_seconds=o.get("clock_tolerance_seconds"),
        )
        return {"valid": result.valid, "errors": list(result.codes), "signed_at": result.signed_at}
    if kind == "activation":
        result = lv.verify_activation_file(
            vector["input"]["text"] if document is None else document,
            key,
            nonce=o.get("nonce"),
            machine_key=o.get("machine_key"),
            fingerprint=o.get("fingerprint"),
            product_id=o.get("product_id"),
            now=o.get("now"),
            clock_tolerance_seconds=o.get("clock_tolerance_seconds"),
        )
        return {
            "valid": result.valid,
            "errors": list(result.codes),
            "activation": None if result.activation is None else result.activation.to_dict(),
        }
    if kind == "public-key":
        try:
            keys = lv.import_public_keys(key)
        except lv.InvalidPublicKeyError:
            return {"accepted": False}
        return {"accepted": True, "keys": [{"type": k.type, "alg": k.alg, "kid": k.kid} for k in keys]}
    raise AssertionError("unknown kind " + kind)
