"""What the online client answers and keeps: states, seats, revocation statuses, checked-out files."""

import base64
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol, Tuple, TypedDict, Union

from ._errors import LicensingError
from ._license import VerifiedLicense

#: How the service last described the license: validate's codes and sync's statuses, lowercased.
#: `ok` and `overage` (more machines than seats, which the license's policy allows) let the
#: application run. `unknown` is any other answer, or none yet.
STATUS_CODES = (
    "ok",
    "overage",
    "revoked",
    "suspended",
    "expired",
    "not_found",
    "fingerprint_mismatch",
    "no_activation",
    "heartbeat_dead",
    # A relay's: this machine holds no lease, and every seat is leased.
    "no_seats",
    "components_mismatch",
    "overdue",
    "entitlements_missing",
    "unknown",
)

#: The codes that let the application run.
RUNNING_CODES = ("ok", "overage")

# Codes of an answer the client could not take as the service's: it counts as no answer.
NO_ANSWER_CODES = ("unverified_answer", "invalid_answer")


def status_of_code(code: str) -> str:
    """A validate `code` or a sync `status` in the one vocabulary of STATUS_CODES."""
    lowered = code.lower()
    if lowered in ("valid", "ok"):
        return "ok"
    # `no_seats` is a relay client's state, never the service's code (as in the other SDKs).
    return lowered if lowered in STATUS_CODES and lowered != "no_seats" else "unknown"


class LicenseClientError(LicensingError):
    """A request the service refused, or that got no usable answer.

    `code` is the service's problem code (`not_found`, `forbidden`, `license_not_active`, ...). It
    is `network` or `timeout` when the service was not reached. It is `unverified_answer` when an
    answer's signature did not hold, and `invalid_answer` when an answer was not what the route
    answers. `invalid_license_file` is a checked-out file that does not verify. `status` is the
    HTTP status, 0 when there was no answer. `codes` holds the verifier's codes, if any.
    """

    def __init__(self, code: str, message: str, status: int, codes: Tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.codes = tuple(codes)

    @property
    def offline(self) -> bool:
        """The service was not reached, could not answer, or its answer could not be trusted.

        A retry later may succeed. validate() and sync() answer the last-known state instead.
        """
        return self.status == 0 or self.status == 429 or self.status >= 500 or self.code in NO_ANSWER_CODES

    def __repr__(self) -> str:
        return "LicenseClientError(code=%r, status=%r, message=%r)" % (self.code, self.status, self.message)


class NotActivatedError(LicensingError, RuntimeError):
    """The call needs this machine's seat (or the license's id): activate() first."""


@dataclass(frozen=True)
class LicenseState:
    """What the client knows of the license, and whether the application may run."""

    #: May the application run: the last answer was `ok`, and it is fresh or within the grace period.
    valid: bool
    #: One of STATUS_CODES.
    status: str
    #: True when the service could not be reached and this is the last-known state.
    offline: bool
    #: When the service last answered (ISO 8601), None if it never has.
    checked_at: Optional[str]
    #: Until when a last-known `ok` counts while offline, None if there is none.
    grace_until: Optional[str]
    #: The service's explanation, or why it could not be reached.
    detail: Optional[str]

    def to_dict(self) -> Dict[str, Any]:
        """The state as JSON keeps it: the same members as the JavaScript SDK's LicenseState."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: Any) -> Optional["LicenseState"]:
        """The state a to_dict() wrote, or None when `data` is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("status"), str):
            return None
        checked_at = data.get("checked_at")
        if not isinstance(checked_at, str):
            return None
        grace_until = data.get("grace_until")
        detail = data.get("detail")
        return cls(
            valid=data.get("valid") is True,
            status=data["status"],
            offline=data.get("offline") is True,
            checked_at=checked_at,
            grace_until=grace_until if isinstance(grace_until, str) else None,
            detail=detail if isinstance(detail, str) else None,
        )


@dataclass(frozen=True)
class Activation:
    """A machine's seat, as the service answers it."""

    id: str
    license_id: str
    fingerprint: str
    hostname: Optional[str]
    platform: Optional[str]
    components: Optional[Dict[str, str]]
    created_at: str
    last_heartbeat_at: Optional[str]
    #: When the seat lapses without a heartbeat (ISO 8601); None when no heartbeat is needed.
    expires_at: Optional[str]

    def to_dict(self) -> Dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: Any) -> Optional["Activation"]:
        """The activation in an answer or a store, or None when `data` is not one."""
        if not isinstance(data, dict):
            return None
        if not all(isinstance(data.get(name), str) for name in ("id", "license_id", "fingerprint")):
            return None
        components = data.get("components")
        created_at = data.get("created_at")
        return cls(
            id=data["id"],
            license_id=data["license_id"],
            fingerprint=data["fingerprint"],
            hostname=_string_or_none(data.get("hostname")),
            platform=_string_or_none(data.get("platform")),
            components=dict(components) if isinstance(components, dict) else None,
            created_at=created_at if isinstance(created_at, str) else "",
            last_heartbeat_at=_string_or_none(data.get("last_heartbeat_at")),
            expires_at=_string_or_none(data.get("expires_at")),
        )


@dataclass(frozen=True)
class StoredActivation:
    """This machine's seat as the client keeps it between runs."""

    #: The serial it is a seat of.
    license_key: str
    activation: Activation
    #: Its machine token (`mt_…`), None when an API key activated. A secret: keep it like a password.
    machine_token: Optional[str] = field(default=None, repr=False)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "license_key": self.license_key,
            "activation": self.activation.to_dict(),
            "machine_token": self.machine_token,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Optional["StoredActivation"]:
        if not isinstance(data, dict) or not isinstance(data.get("license_key"), str):
            return None
        activation = Activation.from_dict(data.get("activation"))
        if activation is None:
            return None
        return cls(data["license_key"], activation, _string_or_none(data.get("machine_token")))


@dataclass(frozen=True)
class RevocationStatus:
    """A serial's status, as check-revocation answers it."""

    serial: str
    #: `active`, `revoked`, `suspended`, `expired` or `not_found`.
    status: str
    #: When it was revoked (ISO 8601); None unless `revoked`.
    revoked_at: Optional[str]


@dataclass(frozen=True)
class CheckedOutLicense:
    """A license file checked out to run offline until `expires_at`."""

    #: The file as the API answers it: standard base64 of its bytes.
    license_blob: str
    #: When it was signed (ISO 8601).
    issued_at: str
    #: When it stops verifying (ISO 8601): check out again before.
    expires_at: str
    #: The license it holds: verified when `verified`, only decoded otherwise.
    license: VerifiedLicense
    #: True when the client verified it with its `product_key`.
    verified: bool

    @property
    def file(self) -> bytes:
        """The `.lic` file's bytes (a compact JWS): what to save, and verify later offline."""
        return base64.b64decode(self.license_blob)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the `.lic` file to `path`, for verify_license() to check offline later."""
        with open(path, "wb") as file:
            file.write(self.file)


class LicenseView(TypedDict, total=False):
    """A license as the API answers it (check_in() answers this, with `last_check_in_at` set)."""

    id: str
    product_id: str
    product_name: str
    product_code: str
    serial: str
    license_type: str
    customer_id: Optional[str]
    customer_email: Optional[str]
    status: str
    valid_from: str
    valid_until: Optional[str]
    features: List[str]
    max_seats: int
    hardware_binding: Optional[Dict[str, str]]
    key_pair_id: str
    entitlements: List[str]
    uses: int
    max_uses: Optional[int]
    created_at: str
    revoked_at: Optional[str]
    policy_id: Optional[str]
    last_check_in_at: Optional[str]
    license_blob: str


class LicenseStateStore(Protocol):
    """Where the client keeps the last-known state between runs (FileStore is one).

    A store may also have `load_activation()` and `save_activation(stored)` to keep this machine's
    seat and its machine token: the client calls save_activation with a StoredActivation when it
    activates or drops the machine token, and with None when it frees the seat.
    """

    def load(self) -> Optional[LicenseState]:
        ...

    def save(self, state: LicenseState) -> None:
        ...


def _string_or_none(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None
