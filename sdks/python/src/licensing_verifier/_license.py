"""License files (typ license+jwt), checked-out files included, verified offline."""

import base64
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from ._errors import InvalidOptionError
from ._jws import DecodedJws, decode_compact, keys_for, some_verifies
from ._keys import KeyInput, import_public_keys
from ._results import Issue
from ._text import from_base64, is_safe_integer, js_trim, utf8, without_whitespace
from ._time import Now, fits_date, iso_from_seconds, now_ms, parse_date_ms, seconds_option

LICENSE_TYPES = ("perpetual", "subscription", "trial", "node_locked", "floating")

_LICENSE_TYP = "license+jwt"

_MESSAGES = {
    "malformed": "The license is not a signed license file",
    "signature_invalid": "The signature does not verify with the key",
    "unknown_key": "The license was signed by a key pair this key set does not hold",
    "product_mismatch": "The license belongs to another product",
    "not_yet_valid": "The license is not valid yet",
    "expired": "The license has expired",
    "file_expired": "The license file has expired: check it out again",
    "fingerprint_mismatch": "The license is bound to another machine",
}

_POLICY_COUNTS = (
    "max_machines",
    "max_processes",
    "max_uses",
    "heartbeat_interval_seconds",
    "heartbeat_grace_seconds",
    "check_in_interval_days",
)
_POLICY_STRINGS = ("id", "name", "overage", "machine_matching")


@dataclass(frozen=True)
class VerifiedLicense:
    """What a license file says, decoded (snake_case, as the API says it)."""

    license_id: str
    serial: str
    organization_id: str
    product_id: str
    product_code: str
    license_type: str
    customer_id: Optional[str]
    customer_email: Optional[str]
    features: List[str]
    #: The entitlement codes the file carries, sorted; empty when it carries none.
    entitlements: List[str]
    max_seats: int
    hardware_binding: Optional[Dict[str, str]]
    #: A checkout file of an activation: the machine it is bound to; None otherwise.
    fingerprint: Optional[str]
    valid_from: str
    #: None for a license that never expires.
    valid_until: Optional[str]
    #: When the file was signed (`iat`), as ISO 8601.
    issued_at: str
    #: When the file stops verifying (`exp`), as ISO 8601; None when it never does.
    expires_at: Optional[str]
    #: The license has ended (its `valid_until` has passed).
    is_expired: bool
    #: A checked-out file is past its own expiry: check it out again.
    is_file_expired: bool
    #: A checkout file's policy limits; None when it carries none.
    policy: Optional[Dict[str, Any]]
    #: The key pair that signed it (the header's `kid`).
    key_id: Optional[str]
    #: The header's `alg`.
    algorithm: str
    #: The signed payload as it is.
    claims: Dict[str, Any] = field(repr=False)

    def to_dict(self) -> Dict[str, Any]:
        """The license as the conformance vectors write it: without `claims`, `policy` only when set."""
        result = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "claims"}
        if self.policy is None:
            del result["policy"]
        return result


@dataclass(frozen=True)
class LicenseResult:
    """True `valid` only when `errors` is empty. `license` is set whenever the file decodes."""

    valid: bool
    license: Optional[VerifiedLicense]
    errors: Tuple[Issue, ...]

    @property
    def codes(self) -> Tuple[str, ...]:
        return tuple(error.code for error in self.errors)


LicenseInput = Union[str, bytes, bytearray, memoryview]


def verify_license(
    license: LicenseInput,
    public_key: KeyInput,
    *,
    now: Now = None,
    product_id: Optional[str] = None,
    fingerprint: Optional[str] = None,
    clock_tolerance_seconds: Optional[float] = None,
) -> LicenseResult:
    """Verifies a license file offline.

    `license` is the file's bytes, its text, or the API's base64 `license_blob`. `public_key` is a
    PEM, a JWK, a JWK Set or imported keys. The algorithm comes from the key, never from the file.
    A bad license is a result; only an unusable key or option raises (a LicensingError).
    """
    keys = import_public_keys(public_key)
    at_ms = now_ms(now)
    tolerance_ms = seconds_option(clock_tolerance_seconds, "clock_tolerance_seconds", 0) * 1000
    _check_string_option(product_id, "product_id")
    _check_string_option(fingerprint, "fingerprint")

    decoded = _decode(license)
    if decoded is None:
        return LicenseResult(False, None, (_issue("malformed"),))
    jws, claims = decoded

    codes: List[str] = []
    candidates = keys_for(keys, jws.header.get("kid"))
    if not candidates:
        codes.append("unknown_key")
    elif not some_verifies(jws, candidates):
        codes.append("signature_invalid")
    if product_id is not None and claims["product_id"] != product_id:
        codes.append("product_mismatch")
    if claims["nbf"] * 1000 > at_ms + tolerance_ms:
        codes.append("not_yet_valid")
    expired, file_expired = _ends(claims, at_ms - tolerance_ms)
    if expired:
        codes.append("expired")
    if file_expired:
        codes.append("file_expired")
    binding = claims["hardware_binding"]
    if fingerprint is not None and (
        (binding is not None and binding["fingerprint"] != fingerprint)
        or ("fingerprint" in claims and claims["fingerprint"] != fingerprint)
    ):
        codes.append("fingerprint_mismatch")
    return LicenseResult(
        valid=not codes,
        license=_summary(jws.header, claims, expired, file_expired),
        errors=tuple(_issue(code) for code in codes),
    )


def decode_license(license: LicenseInput) -> Optional[VerifiedLicense]:
    """The license a file holds, decoded but NOT verified: for display only. None when it is not one."""
    decoded = _decode(license)
    if decoded is None:
        return None
    jws, claims = decoded
    expired, file_expired = _ends(claims, now_ms(None))
    return _summary(jws.header, claims, expired, file_expired)


def license_blob_of(jws: str) -> str:
    """The API's `license_blob` for a license file's text: standard base64 of its bytes."""
    return base64.b64encode(jws.encode("utf-8")).decode("ascii")


def _check_string_option(value: Any, name: str) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidOptionError(name + " is a string")


def _issue(code: str) -> Issue:
    return Issue(code, _MESSAGES[code])


def _decode(license: Any) -> Optional[Tuple[DecodedJws, Dict[str, Any]]]:
    text = _compact_jws_of(license)
    jws = None if text is None else decode_compact(text)
    # A JWS of another type is not a license, whoever signed it.
    if jws is None or jws.payload is None or jws.header.get("typ") != _LICENSE_TYP:
        return None
    claims = jws.payload
    # A time no JavaScript Date holds is no license's: refused here, so the summary never fails.
    if not _is_license_claims(claims) or not all(
        fits_date(claims[name]) for name in ("iat", "nbf", "exp") if name in claims
    ):
        return None
    return jws, claims


def _compact_jws_of(license: Any) -> Optional[str]:
    """The compact JWS in a file's bytes or text, or in a license_blob.

    A JWS always holds dots and base64 never does. Whitespace around it is dropped; nothing else.
    """
    if isinstance(license, (bytes, bytearray, memoryview)):
        text = utf8(bytes(license))
    elif isinstance(license, str):
        text = license
    else:
        text = None
    if text is None:
        return None
    trimmed = js_trim(text)
    if "." in trimmed:
        return trimmed
    data = from_base64(without_whitespace(trimmed))
    jws = None if data is None else utf8(data)
    return jws if jws is not None and "." in jws else None


def _ends(claims: Dict[str, Any], at_ms: float) -> Tuple[bool, bool]:
    """Whether the license has ended, and whether a checked-out file has, at `at_ms`."""
    file_exp = _file_expiry(claims)
    if file_exp is None:
        license_end = claims.get("exp")
    else:
        until = claims["valid_until"]
        license_end = None if until is None else _floor_seconds(parse_date_ms(until))
    expired = license_end is not None and license_end * 1000 <= at_ms
    file_expired = file_exp is not None and file_exp * 1000 <= at_ms
    return expired, file_expired


def _file_expiry(claims: Dict[str, Any]) -> Optional[float]:
    """A checked-out file's own expiry: its `exp` before `valid_until`, or on a perpetual license."""
    exp = claims.get("exp")
    if exp is None:
        return None
    until = claims["valid_until"]
    if until is None:
        return exp
    until_ms = parse_date_ms(until)
    if until_ms is None:
        return None
    return exp if exp < until_ms // 1000 else None


def _floor_seconds(ms: Optional[int]) -> Optional[int]:
    # An unreadable valid_until never gets here: it gives a file no own expiry.
    return None if ms is None else ms // 1000


def _summary(header: dict, c: Dict[str, Any], expired: bool, file_expired: bool) -> VerifiedLicense:
    binding = c["hardware_binding"]
    kid = header.get("kid")
    return VerifiedLicense(
        license_id=c["jti"],
        serial=c["sub"],
        organization_id=c["iss"],
        product_id=c["product_id"],
        product_code=c["product_code"],
        license_type=c["license_type"],
        customer_id=c["customer_id"],
        customer_email=c["customer_email"],
        features=list(c["features"]),
        entitlements=list(c.get("entitlements", [])),
        max_seats=_integer(c["max_seats"]),
        hardware_binding=None if binding is None else {"fingerprint": binding["fingerprint"]},
        fingerprint=c.get("fingerprint"),
        valid_from=c["valid_from"],
        valid_until=c["valid_until"],
        issued_at=iso_from_seconds(c["iat"]),
        expires_at=iso_from_seconds(c["exp"]) if "exp" in c else None,
        is_expired=expired,
        is_file_expired=file_expired,
        policy=dict(c["policy"]) if "policy" in c else None,
        key_id=kid if isinstance(kid, str) else None,
        algorithm=header["alg"],
        claims=c,
    )


def _integer(value: Any) -> int:
    # Checked as a safe integer already; a JSON 3.0 reads as the integer 3.
    return int(value)


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_nullable_string(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_policy(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    return (
        all(
            name not in value or value[name] is None or is_safe_integer(value[name])
            for name in _POLICY_COUNTS
        )
        and all(name not in value or isinstance(value[name], str) for name in _POLICY_STRINGS)
        and ("uses_reset" not in value or value["uses_reset"] is None or isinstance(value["uses_reset"], str))
    )


def _is_license_claims(c: Dict[str, Any]) -> bool:
    """The payload is shaped like license claims: the same field-by-field check the platform makes."""
    binding = c.get("hardware_binding", _MISSING)
    features = c.get("features")
    entitlements = c.get("entitlements", _MISSING)
    return (
        c.get("v") == 1
        and not isinstance(c.get("v"), bool)
        and all(_is_string(c.get(name)) for name in ("jti", "sub", "iss", "product_id", "product_code"))
        and is_safe_integer(c.get("iat"))
        and is_safe_integer(c.get("nbf"))
        and ("exp" not in c or is_safe_integer(c["exp"]))
        and isinstance(c.get("license_type"), str)
        and c["license_type"] in LICENSE_TYPES
        and all(name in c and _is_nullable_string(c[name]) for name in ("customer_id", "customer_email"))
        and isinstance(features, list)
        and all(_is_string(feature) for feature in features)
        and is_safe_integer(c.get("max_seats"))
        and (binding is None or (isinstance(binding, dict) and _is_string(binding.get("fingerprint"))))
        and _is_string(c.get("valid_from"))
        and "valid_until" in c
        and _is_nullable_string(c["valid_until"])
        and (
            entitlements is _MISSING
            or (isinstance(entitlements, list) and all(_is_string(item) for item in entitlements))
        )
        and ("fingerprint" not in c or _is_string(c["fingerprint"]))
        and ("policy" not in c or _is_policy(c["policy"]))
    )


_MISSING = object()
