"""Signed answers: the Licensing-Signature over an online answer's body, checked offline."""

from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from ._errors import InvalidOptionError
from ._jws import decode_compact, keys_for, some_verifies
from ._keys import KeyInput, import_public_keys
from ._results import Issue
from ._text import is_number, js_trim, utf8_bytes
from ._time import Now, fits_date, iso_from_seconds, now_ms, seconds_option

_ANSWER_TYP = "licensing-answer+jws"

_MESSAGES = {
    "unsigned": "The answer carries no Licensing-Signature",
    "malformed": "Licensing-Signature is not a signed answer",
    "unknown_key": "The answer was signed by a key this key set does not hold",
    "signature_invalid": "The signature does not verify over this body",
    "nonce_mismatch": "The answer was signed for another request (its nonce is not the one sent)",
    "too_old": "The signature is older than the maximum age",
    "not_yet_signed": "The signature is dated in the future",
}


@dataclass(frozen=True)
class SignedAnswerResult:
    """True `valid` only when `errors` is empty: the body is what the service said, to this request."""

    valid: bool
    errors: Tuple[Issue, ...]
    #: When the service signed it (the header's `iat`, ISO 8601), whenever the signature decodes.
    signed_at: Optional[str]

    @property
    def codes(self) -> Tuple[str, ...]:
        return tuple(error.code for error in self.errors)


def verify_signed_answer(
    body: Union[str, bytes],
    signature: Optional[str],
    public_key: KeyInput,
    *,
    nonce: str,
    now: Now = None,
    max_age_seconds: Optional[float] = None,
    clock_tolerance_seconds: Optional[float] = None,
) -> SignedAnswerResult:
    """Checks an answer of verify, validate, check-revocation or sync against its signature.

    `body` is the answer's body exactly as received: its bytes, or its text before any parsing.
    `signature` is the `Licensing-Signature` header (None when there was none). `nonce` is the
    `Licensing-Nonce` the request sent. `public_key` holds the organization's response keys
    (`GET /v1/organizations/current/response-keys`, a JWK Set). The signature must be at most
    `max_age_seconds` old (default 300), with `clock_tolerance_seconds` of leeway (default 60).
    """
    keys = import_public_keys(public_key)
    if not isinstance(nonce, str):
        raise InvalidOptionError("nonce is the Licensing-Nonce the request sent")
    at_ms = now_ms(now)
    max_age_ms = seconds_option(max_age_seconds, "max_age_seconds", 300) * 1000
    tolerance_ms = seconds_option(clock_tolerance_seconds, "clock_tolerance_seconds", 60) * 1000
    if not signature:
        return _result(["unsigned"], None)
    if not isinstance(signature, str):
        raise InvalidOptionError("signature is the Licensing-Signature header's text")
    if not isinstance(body, (str, bytes, bytearray, memoryview)):
        raise InvalidOptionError("body is the answer's bytes or text")
    data = utf8_bytes(body) if isinstance(body, str) else bytes(body)
    decoded = decode_compact(js_trim(signature), data)
    iat = None if decoded is None else decoded.header.get("iat")
    if (
        decoded is None
        or decoded.header.get("typ") != _ANSWER_TYP
        or not is_number(iat)
        or not fits_date(iat)
    ):
        return _result(["malformed"], None)
    codes: List[str] = []
    candidates = keys_for(keys, decoded.header.get("kid"))
    if not candidates:
        codes.append("unknown_key")
    elif not some_verifies(decoded, candidates):
        codes.append("signature_invalid")
    if decoded.header.get("nonce") != nonce:
        codes.append("nonce_mismatch")
    if iat * 1000 < at_ms - max_age_ms - tolerance_ms:
        codes.append("too_old")
    if iat * 1000 > at_ms + tolerance_ms:
        codes.append("not_yet_signed")
    return _result(codes, iso_from_seconds(iat))


def _result(codes: List[str], signed_at: Optional[str]) -> SignedAnswerResult:
    return SignedAnswerResult(not codes, tuple(Issue(code, _MESSAGES[code]) for code in codes), signed_at)
