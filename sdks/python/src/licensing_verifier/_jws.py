"""Compact JWS decoding and algorithm-pinned signature checks, shared by every signed document."""

from dataclasses import dataclass
from typing import List, Optional

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from ._keys import PublicKey
from ._text import base64url, from_base64url, json_object_of

_ES256_SIGNATURE_LENGTH = 64
_PSS_SALT_LENGTH = 32


@dataclass(frozen=True)
class DecodedJws:
    header: dict
    #: None for a detached payload.
    payload: Optional[dict]
    signing_input: bytes
    signature: bytes


def decode_compact(jws: str, detached: Optional[bytes] = None) -> Optional[DecodedJws]:
    """A compact JWS whose header and payload are JSON objects, taken apart; None when malformed.

    With `detached`, the payload segment must be empty, and the signing input is made with the
    given bytes instead (RFC 7515 Appendix F).
    """
    segments = jws.split(".")
    if len(segments) != 3:
        return None
    header_segment, payload_segment, signature_segment = segments
    header = json_object_of(header_segment)
    signature = from_base64url(signature_segment)
    if header is None or signature is None or not isinstance(header.get("alg"), str):
        return None
    if detached is not None:
        if payload_segment != "":
            return None
        signing_input = (header_segment + "." + base64url(detached)).encode("ascii")
        return DecodedJws(header, None, signing_input, signature)
    payload = json_object_of(payload_segment)
    if payload is None:
        return None
    return DecodedJws(header, payload, (header_segment + "." + payload_segment).encode("ascii"), signature)


def keys_for(keys: List[PublicKey], kid: object) -> List[PublicKey]:
    """The keys that may have signed a document.

    A key that names itself (a JWK's `kid`) is used only for the document naming it. Keys without a
    kid (PEMs) are all tried.
    """
    for key in keys:
        if key.kid is not None and isinstance(kid, str) and key.kid == kid:
            return [key]
    return [key for key in keys if key.kid is None]


def some_verifies(decoded: DecodedJws, keys: List[PublicKey]) -> bool:
    return any(_verifies(decoded, key) for key in keys)


def _verifies(decoded: DecodedJws, key: PublicKey) -> bool:
    header = decoded.header
    # No JWS extension is implemented, so a critical one invalidates the document (RFC 7515 §4.1.11).
    if "crit" in header:
        return False
    alg = header.get("alg")
    if not (alg == key.alg or (key.type == "ed25519" and alg == "Ed25519")):
        return False
    signature, data = decoded.signature, decoded.signing_input
    try:
        if key.type == "ed25519":
            key.key.verify(signature, data)
        elif key.type == "ecdsa-p256":
            # Only the 64-byte R||S form is JWS; a DER signature is refused.
            if len(signature) != _ES256_SIGNATURE_LENGTH:
                return False
            r = int.from_bytes(signature[:32], "big")
            s = int.from_bytes(signature[32:], "big")
            key.key.verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))
        else:
            key.key.verify(
                signature,
                data,
                padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=_PSS_SALT_LENGTH),
                hashes.SHA256(),
            )
        return True
    except Exception:  # noqa: BLE001 - a signature the library cannot use is just a bad signature
        return False
