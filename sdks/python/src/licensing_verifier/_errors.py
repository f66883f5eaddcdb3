"""The exceptions this package raises. A bad document is a result, never an exception."""


class LicensingError(Exception):
    """The base of every exception this package raises."""


class InvalidPublicKeyError(LicensingError, ValueError):
    """The public key cannot be used.

    It is not a public key, or not of a kind the platform signs with: a private key, an HMAC
    secret, a P-384 or short RSA key, a PEM that is not one SPKI block, a JWK Set without keys.
    """


class InvalidOptionError(LicensingError, ValueError):
    """An option has a value that cannot be used: a naive datetime, a negative tolerance."""
