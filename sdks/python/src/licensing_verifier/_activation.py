"""Activation files of air-gapped machines (typ activation+jwt), verified offline."""

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._errors import InvalidOptionError
from ._jws import decode_compact, keys_for, some_verifies
from ._keys import KeyInput, import_public_keys
from ._results import Issue
from ._text import is_safe_integer, js_trim
from ._time import Now, fits_date, iso_from_seconds, now_ms, seconds_option

_ACTIVATION_TYP = "activation+jwt"

_MESSAGES = {
    "malformed": "The file is not a signed activation file",
    "unknown_key": "The activation was signed by a key pair this key set does not hold",
    "signature_invalid": "The signature does not verify with the key",
    "nonce_mismatch": "The activation answers another request",
    "machine_key_mismatch": "The activation was made for another machine's key",
    "fingerprint_mismatch": "The activation is for another machine",
    "product_mismatch": "The activation belongs to another product",
    "not_yet_valid": "The activation is not valid yet",
    "expired": "The activation has expired",
}


@dataclass(frozen=True)
class VerifiedActivation:
    activation_id: str
    serial: str
    license_id: str
    organization_id: str
    product_id: str
    product_code: str
    features: List[str]
    fingerprint: str
    components: Dict[str, str]
    issued_at: str
    expires_at: str

    def to_dict(self) -> Dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class ActivationResult:
    """True `valid` only when `errors` is empty. `activation` is set whenever the file decodes."""

    valid: bool
    activation: Optional[VerifiedActivation]
    errors: Tuple[Issue, ...]

    @property
    def codes(self) -> Tuple[str, ...]:
        return tuple(error.code for error in self.errors)


def verify_activation_file(
    file: str,
    public_key: KeyInput,
    *,
    nonce: Optional[str] = None,
    machine_key: Optional[Mapping[str, Any]] = None,
    fingerprint: Optional[str] = None,
    product_id: Optional[str] = None,
    now: Now = None,
    clock_tolerance_seconds: Optional[float] = None,
) -> ActivationResult:
    """Verifies an activation file offline with the product's public key.

    `nonce` is the request's nonce; `machine_key` the machine's key of the request (a JWK: its `x`
    is compared); `fingerprint` this machine's. The algorithm comes from the key. A bad file is a
    result, not an exception.
    """
    keys = import_public_keys(public_key)
    at_ms = now_ms(now)
    tolerance_ms = seconds_option(clock_tolerance_seconds, "clock_tolerance_seconds", 0) * 1000
    if machine_key is not None and not isinstance(machine_key, Mapping):
        raise InvalidOptionError("machine_key is a JWK")
    decoded = decode_compact(js_trim(file)) if isinstance(file, str) else None
    claims = None
    if decoded is not None and decoded.payload is not None and decoded.header.get("typ") == _ACTIVATION_TYP:
        claims = decoded.payload if _is_activation_claims(decoded.payload) else None
    if decoded is None or claims is None:
        return ActivationResult(False, None, (_issue("malformed"),))

    codes: List[str] = []
    candidates = keys_for(keys, decoded.header.get("kid"))
    if not candidates:
        codes.append("unknown_key")
    elif not some_verifies(decoded, candidates):
        codes.append("signature_invalid")
    if nonce is not None and claims["nonce"] != nonce:
        codes.append("nonce_mismatch")
    if machine_key is not None and claims["cnf"]["jwk"]["x"] != machine_key.get("x"):
        codes.append("machine_key_mismatch")
    if fingerprint is not None and claims["fingerprint"] != fingerprint:
        codes.append("fingerprint_mismatch")
    if product_id is not None and claims["product_id"] != product_id:
        codes.append("product_mismatch")
    if claims["nbf"] * 1000 > at_ms + tolerance_ms:
        codes.append("not_yet_valid")
    if claims["exp"] * 1000 <= at_ms - tolerance_ms:
        codes.append("expired")
    activation = VerifiedActivation(
        activation_id=claims["jti"],
        serial=claims["sub"],
        license_id=claims["license_id"],
        organization_id=claims["iss"],
        product_id=claims["product_id"],
        product_code=claims["product_code"],
        features=list(claims["features"]),
        fingerprint=claims["fingerprint"],
        components=_components(claims["components"]),
        issued_at=iso_from_seconds(claims["iat"]),
        expires_at=iso_from_seconds(claims["exp"]),
    )
    return ActivationResult(not codes, activation, tuple(_issue(code) for code in codes))


def _components(value: Any) -> Dict[str, str]:
    """A copy of the components. JavaScript copies an array's items under their indexes; so does this."""
    return dict(value) if isinstance(value, dict) else {str(i): item for i, item in enumerate(value)}


def _issue(code: str) -> Issue:
    return Issue(code, _MESSAGES[code])


def _is_activation_claims(c: Dict[str, Any]) -> bool:
    cnf = c.get("cnf")
    jwk = cnf.get("jwk") if isinstance(cnf, dict) else None
    components = c.get("components")
    features = c.get("features")
    return (
        c.get("v") == 1
        and not isinstance(c.get("v"), bool)
        and all(
            isinstance(c.get(name), str)
            for name in (
                "jti",
                "sub",
                "iss",
                "license_id",
                "product_id",
                "product_code",
                "fingerprint",
                "nonce",
            )
        )
        and isinstance(features, list)
        and all(isinstance(feature, str) for feature in features)
        and isinstance(components, (dict, list))
        and all(
            isinstance(value, str)
            for value in (components.values() if isinstance(components, dict) else components)
        )
        and isinstance(jwk, dict)
        and isinstance(jwk.get("x"), str)
        and all(is_safe_integer(c.get(name)) and fits_date(c.get(name)) for name in ("iat", "nbf", "exp"))
    )
