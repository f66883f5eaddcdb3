"""The licensing platform's SDK: offline verification, and an online client.

License files (checked-out files included), revocation lists and deltas, signed answers and
activation files, each verified with the public key the application ships with. The algorithm
comes from the key, never from the document. A bad document is a result with error codes; the
only exceptions are LicensingError's (an unusable key or option). The codes, and every verdict,
are those of the JavaScript SDK: sdks/conformance holds the vectors both run.
create_activation_request and create_activation_release write an air-gapped machine's files.

LicenseClient is the online side: seats and heartbeats, validate, check-in, checkout,
check-revocation and sync, with timeouts, retries and an offline grace period. It behaves as the
JavaScript SDK's LicenseClient does, with the same status codes. RelayClient leases a floating
seat from an on-premise relay with the same seat methods, and proves the relay with the product key.
"""

from ._activation import ActivationResult, VerifiedActivation, verify_activation_file
from ._activation_request import ActivationRequest, create_activation_release, create_activation_request
from ._answer import SignedAnswerResult, verify_signed_answer
from ._client import LicenseClient
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
from ._machine import NoMachineIdError, machine_fingerprint, time_ordered_uuid
from ._online import (
    STATUS_CODES,
    Activation,
    CheckedOutLicense,
    LicenseClientError,
    LicenseState,
    LicenseStateStore,
    LicenseView,
    NotActivatedError,
    RevocationStatus,
    StoredActivation,
)
from ._relay import RelayClient, RelayLease, RelayStatus
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
from ._store import FileStore

__version__ = "0.1.0"

__all__ = [
    "Activation",
    "ActivationRequest",
    "ActivationResult",
    "CheckedOutLicense",
    "FileStore",
    "InvalidOptionError",
    "InvalidPublicKeyError",
    "Issue",
    "LICENSE_TYPES",
    "LicenseClient",
    "LicenseClientError",
    "LicenseResult",
    "LicenseState",
    "LicenseStateStore",
    "LicenseView",
    "LicensingError",
    "NoMachineIdError",
    "NotActivatedError",
    "PublicKey",
    "RelayClient",
    "RelayLease",
    "RelayStatus",
    "RevocationEntry",
    "RevocationList",
    "RevocationListResult",
    "RevocationStatus",
    "STATUS_CODES",
    "SignedAnswerResult",
    "StoredActivation",
    "VerifiedActivation",
    "VerifiedLicense",
    "create_activation_release",
    "create_activation_request",
    "decode_license",
    "import_public_key",
    "import_public_keys",
    "is_revoked",
    "is_stale",
    "license_blob_of",
    "machine_fingerprint",
    "revocation_entry",
    "time_ordered_uuid",
    "verify_activation_file",
    "verify_license",
    "verify_revocation_list",
    "verify_signed_answer",
]
