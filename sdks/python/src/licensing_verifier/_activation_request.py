"""Air-gapped activation, on the machine's side: the request file and the release file.

The request carries the license, this machine, a nonce and a fresh Ed25519 public key, signed with
that key. The platform answers an activation file (verify_activation_file checks it). The release
gives the seat back, signed with the same key. The formats are the JavaScript SDK's
(createActivationRequest and createActivationRelease).
"""

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ._activation import _ACTIVATION_TYP, _is_activation_claims
from ._errors import InvalidOptionError
from ._jws import decode_compact
from ._text import base64url, from_base64url, js_trim, utf8_bytes

_REQUEST_TYP = "activation-request+jwt"
_RELEASE_TYP = "activation-release+jwt"


@dataclass(frozen=True)
class ActivationRequest:
    """A request file, and what the machine keeps until the answer comes."""

    #: The file to carry to the service: `POST /v1/activations/offline` with `{"request": ...}`.
    request: str
    #: The key made for this activation, a private Ed25519 JWK (`kty`, `crv`, `x`, `d`). Keep it
    #: on the machine, secret: it signs the release, and verify_activation_file checks the answer
    #: was made for it.
    machine_key: Dict[str, str]
    #: The request's nonce: the activation file must echo it.
    nonce: str

    def to_dict(self) -> Dict[str, Any]:
        return {"request": self.request, "machine_key": dict(self.machine_key), "nonce": self.nonce}


def create_activation_request(
    license_key: str,
    fingerprint: str,
    *,
    components: Optional[Mapping[str, str]] = None,
    hostname: Optional[str] = None,
    platform: Optional[str] = None,
) -> ActivationRequest:
    """Makes a fresh Ed25519 key pair for this activation, and a request signed with it.

    The request holds the serial, the fingerprint, the components, the hostname and the platform
    given, a random nonce, and the public key. Its signature shows the service that the requester
    holds the key the release needs. Raises InvalidOptionError without a serial or a fingerprint.
    """
    if not (isinstance(license_key, str) and license_key and isinstance(fingerprint, str) and fingerprint):
        raise InvalidOptionError("an activation request needs license_key and fingerprint")
    for name, value in (("hostname", hostname), ("platform", platform)):
        if value is not None and not isinstance(value, str):
            raise InvalidOptionError(name + " is a string")
    if components is not None and not (
        isinstance(components, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in components.items())
    ):
        raise InvalidOptionError("components maps names to strings")
    private = Ed25519PrivateKey.generate()
    x = _public_x(private)
    d = base64url(
        private.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
    )
    nonce = base64url(secrets.token_bytes(24))
    # The JavaScript SDK's members, in its order; the absent ones are left out.
    claims: Dict[str, Any] = {"v": 1, "license_key": license_key, "fingerprint": fingerprint}
    if components is not None:
        claims["components"] = dict(components)
    if hostname is not None:
        claims["hostname"] = hostname
    if platform is not None:
        claims["platform"] = platform
    claims.update(nonce=nonce, iat=int(time.time()), jwk={"kty": "OKP", "crv": "Ed25519", "x": x})
    request = _sign(claims, _REQUEST_TYP, private)
    return ActivationRequest(request, {"kty": "OKP", "crv": "Ed25519", "x": x, "d": d}, nonce)


def create_activation_release(activation_file: str, machine_key: Mapping[str, Any]) -> str:
    """The release file that gives an activation's seat back, signed with the request's machine key.

    Carry it to `POST /v1/activations/offline/release` with `{"release": ...}`. Delete the
    activation file and the key afterwards. Raises InvalidOptionError when the file is not an
    activation file, or the key is not an Ed25519 private JWK.
    """
    decoded = decode_compact(js_trim(activation_file)) if isinstance(activation_file, str) else None
    claims = None
    if decoded is not None and decoded.payload is not None and decoded.header.get("typ") == _ACTIVATION_TYP:
        claims = decoded.payload if _is_activation_claims(decoded.payload) else None
    if claims is None:
        raise InvalidOptionError("not an activation file")
    release = {
        "v": 1,
        "activation_id": claims["jti"],
        "license_key": claims["sub"],
        "fingerprint": claims["fingerprint"],
        "iat": int(time.time()),
    }
    return _sign(release, _RELEASE_TYP, _machine_private_key(machine_key))


def _machine_private_key(jwk: Any) -> Ed25519PrivateKey:
    """An Ed25519 private JWK whose `d` and `x` are one key."""
    if not isinstance(jwk, Mapping) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise InvalidOptionError("the machine key is an Ed25519 private JWK")
    d, x = jwk.get("d"), jwk.get("x")
    seed = from_base64url(d) if isinstance(d, str) else None
    if seed is None or len(seed) != 32 or not isinstance(x, str):
        raise InvalidOptionError("the machine key is an Ed25519 private JWK")
    private = Ed25519PrivateKey.from_private_bytes(seed)
    if _public_x(private) != x:
        raise InvalidOptionError("the machine key's d and x are not one key")
    return private


def _public_x(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64url(raw)


def _sign(payload: Dict[str, Any], typ: str, key: Ed25519PrivateKey) -> str:
    """A compact JWS, EdDSA, of JSON written as JSON.stringify writes it."""
    signing_input = _segment({"alg": "EdDSA", "typ": typ}) + "." + _segment(payload)
    return signing_input + "." + base64url(key.sign(signing_input.encode("ascii")))


def _segment(value: Dict[str, Any]) -> str:
    return base64url(utf8_bytes(json.dumps(value, separators=(",", ":"), ensure_ascii=False)))
