"""Offline verification of the licensing platform's signed documents.

License files (checked-out files included), revocation lists and deltas, signed answers and
activation files, each verified with the public key the application ships with. The algorithm
comes from the key, never from the document. A bad document is a result with error codes; the
only exceptions are LicensingError's (an unusable key or option). The codes, and every verdict,
are those of the JavaScript SDK: sdks/conformance holds the vectors both run.
"""

from ._activation import ActivationResult, VerifiedActivation, verify_activation_file
from ._answer import SignedAnswerResult, verify_signed_answer
from ._errors import InvalidOptionError, InvalidPublicKeyError, LicensingError
from ._keys import PublicKey, import_public_key, import_public_keys
from ._license import (
    LICENSE_TYPES,
    LicenseResult,
    VerifiedLicense,
    decode_license,
    license_blob_of,
    verify_license,
)
from ._results import Issue
from ._revocation import (
    RevocationEntry,
    RevocationList,
    RevocationListResult,
    is_revoked,
    is_stale,
    revocation_entry,
    verify_revocation_list,
)

__version__ = "0.1.0"

__all__ = [
    "ActivationResult",
    "InvalidOptionError",
    "InvalidPublicKeyError",
    "Issue",
    "LICENSE_TYPES",
    "LicenseResult",
    "LicensingError",
    "PublicKey",
    "RevocationEntry",
    "RevocationList",
    "RevocationListResult",
    "SignedAnswerResult",
    "VerifiedActivation",
    "VerifiedLicense",
    "decode_license",
    "import_public_key",
    "import_public_keys",
    "is_revoked",
    "is_stale",
    "license_blob_of",
    "revocation_entry",
    "verify_activation_file",
    "verify_license",
    "verify_revocation_list",
    "verify_signed_answer",
]
