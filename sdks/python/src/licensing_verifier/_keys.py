"""Public keys: a PEM (SPKI), a JWK or a JWK Set, imported once and pinned to one JWS algorithm."""

import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Union

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_der_public_key

from ._errors import InvalidPublicKeyError
from ._text import from_base64, from_base64url, js_trim, without_whitespace

# Weaker RSA keys are refused, as the platform refuses them.
MIN_RSA_MODULUS_BITS = 2048

ALGORITHMS = {"ed25519": "EdDSA", "ecdsa-p256": "ES256", "rsa": "PS256"}

# DER object identifiers, as the hex of their content bytes.
_OID_ED25519 = "2b6570"  # 1.3.101.112
_OID_EC_PUBLIC_KEY = "2a8648ce3d0201"  # 1.2.840.10045.2.1
_OID_P256 = "2a8648ce3d030107"  # 1.2.840.10045.3.1.7
_OID_RSA_ENCRYPTION = "2a864886f70d010101"  # 1.2.840.113549.1.1.1

# One PEM block with exactly this label: private keys, certificates and PKCS#1 are refused.
_SPKI_PEM = re.compile(r"-----BEGIN PUBLIC KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END PUBLIC KEY-----")

_PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k")


@dataclass(frozen=True)
class PublicKey:
    """A public key, imported once for verifying many documents."""

    #: `ed25519`, `ecdsa-p256` or `rsa`.
    type: str
    #: The key pair id when the key said so (a JWK's `kid`), else None.
    kid: Optional[str]
    #: The one JWS `alg` this key verifies: `EdDSA` (also written `Ed25519`), `ES256` or `PS256`.
    alg: str
    #: The `cryptography` key object.
    key: Any


KeyInput = Union[str, bytes, dict, PublicKey, Sequence[PublicKey]]


def import_public_key(key: Union[str, bytes, dict]) -> PublicKey:
    """Imports a PEM (SPKI) text or a JWK. Raises InvalidPublicKeyError when it cannot be used."""
    if isinstance(key, bytes):
        try:
            key = key.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidPublicKeyError("a PEM is UTF-8 text") from None
    if isinstance(key, str):
        return _import_pem(key)
    if isinstance(key, dict):
        return _import_jwk(key)
    raise InvalidPublicKeyError("a public key is a PEM text or a JWK object")


def import_public_keys(key: KeyInput) -> List[PublicKey]:
    """Every key the input holds: a PEM, a JWK, a JWK Set ({"keys": [...]}) or imported keys."""
    if isinstance(key, PublicKey):
        return [key]
    if isinstance(key, (list, tuple)):
        if not key:
            raise InvalidPublicKeyError("no keys given")
        if not all(isinstance(one, PublicKey) for one in key):
            raise InvalidPublicKeyError("expected keys returned by import_public_key")
        return list(key)
    if isinstance(key, dict) and isinstance(key.get("keys"), list):
        if not key["keys"]:
            raise InvalidPublicKeyError("the JWK Set holds no keys")
        return [_import_jwk(jwk) for jwk in key["keys"]]
    return [import_public_key(key)]  # type: ignore[arg-type]


def _import_pem(pem: str) -> PublicKey:
    match = _SPKI_PEM.fullmatch(js_trim(pem))
    der = from_base64(without_whitespace(match.group(1))) if match else None
    if der is None:
        raise InvalidPublicKeyError('expected a single PEM "PUBLIC KEY" (SPKI) block')
    key_type = _spki_key_type(der)
    try:
        key = load_der_public_key(der)
    except Exception as error:  # noqa: BLE001 - any parse failure is an unreadable key
        raise InvalidPublicKeyError("unreadable public key") from error
    return _checked(key_type, key, None)


def _import_jwk(jwk: Any) -> PublicKey:
    if not isinstance(jwk, dict):
        raise InvalidPublicKeyError("a JWK is an object")
    for name in _PRIVATE_MEMBERS:
        # Handing a private (or secret) key to a verifier is a mistake worth surfacing.
        if name in jwk:
            raise InvalidPublicKeyError('a public JWK has no "%s" member' % name)
    key_type = _jwk_key_type(jwk)
    if "alg" in jwk and not (
        jwk["alg"] == ALGORITHMS[key_type] or (key_type == "ed25519" and jwk["alg"] == "Ed25519")
    ):
        raise InvalidPublicKeyError("a %s key verifies %s" % (key_type, ALGORITHMS[key_type]))
    if "use" in jwk and jwk["use"] != "sig":
        raise InvalidPublicKeyError("the JWK is not for signatures")
    if "key_ops" in jwk and not (isinstance(jwk["key_ops"], list) and "verify" in jwk["key_ops"]):
        raise InvalidPublicKeyError('the JWK does not allow "verify"')
    kid = jwk.get("kid")
    if "kid" in jwk and not isinstance(kid, str):
        raise InvalidPublicKeyError("kid is a string")
    try:
        if key_type == "ed25519":
            key: Any = ed25519.Ed25519PublicKey.from_public_bytes(_member(jwk, "x"))
        elif key_type == "ecdsa-p256":
            x, y = _member(jwk, "x"), _member(jwk, "y")
            key = ec.EllipticCurvePublicNumbers(
                int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()
            ).public_key()
        else:
            n, e = _member(jwk, "n"), _member(jwk, "e")
            key = rsa.RSAPublicNumbers(int.from_bytes(e, "big"), int.from_bytes(n, "big")).public_key()
    except InvalidPublicKeyError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure to build the key is an unreadable JWK
        raise InvalidPublicKeyError("unreadable JWK") from error
    return _checked(key_type, key, kid)


def _member(jwk: dict, name: str) -> bytes:
    value = jwk.get(name)
    data = from_base64url(value) if isinstance(value, str) else None
    if data is None:
        raise InvalidPublicKeyError('the JWK\'s "%s" is not base64url' % name)
    return data


def _jwk_key_type(jwk: dict) -> str:
    if jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
        return "ed25519"
    if jwk.get("kty") == "EC" and jwk.get("crv") == "P-256":
        return "ecdsa-p256"
    if jwk.get("kty") == "RSA":
        return "rsa"
    raise InvalidPublicKeyError("unsupported JWK: kty %r, crv %r" % (jwk.get("kty"), jwk.get("crv")))


def _checked(key_type: str, key: Any, kid: Optional[str]) -> PublicKey:
    if key_type == "ed25519" and isinstance(key, ed25519.Ed25519PublicKey):
        pass
    elif (
        key_type == "ecdsa-p256"
        and isinstance(key, ec.EllipticCurvePublicKey)
        and isinstance(key.curve, ec.SECP256R1)
    ):
        pass
    elif key_type == "rsa" and isinstance(key, rsa.RSAPublicKey):
        if key.key_size < MIN_RSA_MODULUS_BITS:
            raise InvalidPublicKeyError(
                "RSA keys need at least %d bits, got %d" % (MIN_RSA_MODULUS_BITS, key.key_size)
            )
    else:
        raise InvalidPublicKeyError("the key is not the %s key its encoding names" % key_type)
    return PublicKey(type=key_type, kid=kid, alg=ALGORITHMS[key_type], key=key)


def _spki_key_type(der: bytes) -> str:
    """The key type an SPKI's AlgorithmIdentifier names.

    The DER is read this far: SEQUENCE { SEQUENCE { OID, parameters? }, BIT STRING }.
    """
    reader = _DerReader(der)
    spki = reader.read(0x30)
    if not reader.done():
        raise InvalidPublicKeyError("trailing bytes after the SPKI")
    body = _DerReader(spki)
    algorithm = _DerReader(body.read(0x30))
    oid = algorithm.read(0x06).hex()
    parameter = None if algorithm.done() else algorithm.next()
    if oid == _OID_ED25519:
        return "ed25519"
    if oid == _OID_RSA_ENCRYPTION:
        return "rsa"
    if oid == _OID_EC_PUBLIC_KEY:
        if parameter is not None and parameter[0] == 0x06 and parameter[1].hex() == _OID_P256:
            return "ecdsa-p256"
        raise InvalidPublicKeyError("unsupported EC curve: only P-256 keys sign licenses")
    raise InvalidPublicKeyError("unsupported key type: licenses are signed with Ed25519, P-256 or RSA keys")


class _DerReader:
    """Reads DER elements one after another, as far as the key type needs."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._offset = 0

    def done(self) -> bool:
        return self._offset == len(self._data)

    def read(self, tag: int) -> bytes:
        found, value = self.next()
        if found != tag:
            raise InvalidPublicKeyError("not a DER SubjectPublicKeyInfo")
        return value

    def next(self):
        tag = self._byte()
        length = self._byte()
        if length & 0x80:
            count = length & 0x7F
            if count == 0 or count > 3:
                raise InvalidPublicKeyError("not a DER SubjectPublicKeyInfo")
            length = 0
            for _ in range(count):
                length = (length << 8) | self._byte()
        end = self._offset + length
        if end > len(self._data):
            raise InvalidPublicKeyError("not a DER SubjectPublicKeyInfo")
        value = self._data[self._offset : end]
        self._offset = end
        return tag, value

    def _byte(self) -> int:
        if self._offset >= len(self._data):
            raise InvalidPublicKeyError("not a DER SubjectPublicKeyInfo")
        value = self._data[self._offset]
        self._offset += 1
        return value
