"""Revocation lists and deltas of a product, verified offline with the product's public key."""

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._errors import InvalidOptionError
from ._jws import decode_compact, keys_for, some_verifies
from ._keys import KeyInput, import_public_keys
from ._results import Issue
from ._text import is_safe_integer, js_trim, string_sort_key
from ._time import Now, now_ms, parse_date_ms

_LIST_TYP = "licensing-revocation-list+jwt"
_DELTA_TYP = "licensing-revocation-delta+jwt"
_STATUSES = ("revoked", "suspended", "expired")

_MESSAGES = {
    "malformed": "This is not a signed revocation list or delta",
    "unknown_key": "The list was signed by a key pair this key set does not hold",
    "signature_invalid": "The signature does not verify with the key",
    "product_mismatch": "The list belongs to another product",
    "version_regression": "The list is older than the one held",
    "version_gap": "The delta does not start from the list held (fetch the full list)",
}


@dataclass(frozen=True)
class RevocationEntry:
    """A license that is not active, as a product's list names it."""

    serial: str
    #: `revoked`, `suspended` or `expired`.
    status: str
    #: When the license took that status (ISO 8601).
    at: str


@dataclass(frozen=True)
class RevocationList:
    """A product's revocation list, verified. Keep it (to_dict() is JSON), and pass it as `previous`."""

    product_id: str
    #: Grows with every change of the product's licenses' statuses; never goes back.
    version: int
    issued_at: str
    #: When the service expects the application to fetch a newer list.
    next_update: str
    #: Sorted by serial.
    entries: Tuple[RevocationEntry, ...]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "product_id": self.product_id,
            "version": self.version,
            "issued_at": self.issued_at,
            "next_update": self.next_update,
            "entries": [{"serial": e.serial, "status": e.status, "at": e.at} for e in self.entries],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RevocationList":
        """A list kept as JSON (to_dict(), or the JavaScript SDK's list). Raises InvalidOptionError."""
        document = _read_document(dict(data), delta=False) if isinstance(data, Mapping) else None
        if document is None:
            raise InvalidOptionError("not a revocation list as verify_revocation_list returns one")
        return _sorted(
            document.product_id, document.version, document.issued_at, document.next_update, document.entries
        )


@dataclass(frozen=True)
class RevocationListResult:
    """True `valid` only when `errors` is empty. `list` is the list to keep, or None unless valid."""

    valid: bool
    list: Optional[RevocationList]
    errors: Tuple[Issue, ...]

    @property
    def codes(self) -> Tuple[str, ...]:
        return tuple(error.code for error in self.errors)


def verify_revocation_list(
    jws: str,
    public_key: KeyInput,
    *,
    product_id: Optional[str] = None,
    previous: Union[RevocationList, Mapping[str, Any], None] = None,
) -> RevocationListResult:
    """Verifies a revocation list, or a delta, and answers the list to keep.

    A delta is applied to `previous`. A list or delta older than `previous` is refused
    (`version_regression`): a replayed old list cannot un-revoke a license. A delta that starts
    after `previous` (or with none) is refused (`version_gap`): fetch the full list.
    """
    keys = import_public_keys(public_key)
    held = (
        previous
        if isinstance(previous, RevocationList) or previous is None
        else RevocationList.from_dict(previous)
    )
    if product_id is not None and not isinstance(product_id, str):
        raise InvalidOptionError("product_id is a string")
    decoded = decode_compact(js_trim(jws)) if isinstance(jws, str) else None
    typ = None if decoded is None else decoded.header.get("typ")
    document = None
    if decoded is not None and decoded.payload is not None and typ in (_LIST_TYP, _DELTA_TYP):
        document = _read_document(decoded.payload, delta=typ == _DELTA_TYP)
    if decoded is None or document is None:
        return _refused(["malformed"])

    codes: List[str] = []
    candidates = keys_for(keys, decoded.header.get("kid"))
    if not candidates:
        codes.append("unknown_key")
    elif not some_verifies(decoded, candidates):
        codes.append("signature_invalid")
    if product_id is not None and document.product_id != product_id:
        codes.append("product_mismatch")
    if held is not None and held.product_id != document.product_id and "product_mismatch" not in codes:
        codes.append("product_mismatch")
    if held is not None and document.version < held.version:
        codes.append("version_regression")
    if document.since is not None and (held is None or document.since > held.version):
        codes.append("version_gap")
    if codes:
        return _refused(codes)

    if document.since is None:
        entries = document.entries
    else:
        assert held is not None
        by_serial = {entry.serial: entry for entry in held.entries}
        for serial in document.removed:
            by_serial.pop(serial, None)
        for entry in document.entries:
            by_serial[entry.serial] = entry
        entries = list(by_serial.values())
    listed = _sorted(document.product_id, document.version, document.issued_at, document.next_update, entries)
    return RevocationListResult(True, listed, ())


def revocation_entry(revocations: RevocationList, license: Any) -> Optional[RevocationEntry]:
    """The entry of a license (a serial, or anything with a `serial`) in the list, or None."""
    serial = license if isinstance(license, str) else getattr(license, "serial", None)
    if serial is None and isinstance(license, Mapping):
        serial = license.get("serial")
    for entry in revocations.entries:
        if entry.serial == serial:
            return entry
    return None


def is_revoked(revocations: RevocationList, license: Any) -> bool:
    """Whether the list names the license as revoked, suspended or expired: it must not run."""
    return revocation_entry(revocations, license) is not None


def is_stale(revocations: RevocationList, now: Now = None) -> bool:
    """Whether the list is past its `next_update`: still the best knowledge offline, but time to fetch."""
    next_update = parse_date_ms(revocations.next_update)
    return next_update is not None and next_update < now_ms(now)


@dataclass(frozen=True)
class _Document:
    product_id: str
    version: int
    issued_at: str
    next_update: str
    entries: List[RevocationEntry]
    since: Optional[int]
    removed: List[str]


def _read_document(payload: Dict[str, Any], delta: bool) -> Optional[_Document]:
    product_id = payload.get("product_id")
    version = payload.get("version")
    issued_at = payload.get("issued_at")
    next_update = payload.get("next_update")
    entries = payload.get("entries")
    if not isinstance(product_id, str) or not _is_version(version):
        return None
    if not _is_time(issued_at) or not _is_time(next_update) or not isinstance(entries, list):
        return None
    if not all(_is_entry(entry) for entry in entries):
        return None
    read = [RevocationEntry(entry["serial"], entry["status"], entry["at"]) for entry in entries]
    if not delta:
        if "since" in payload or "removed" in payload:
            return None
        return _Document(product_id, int(version), issued_at, next_update, read, None, [])
    since = payload.get("since")
    removed = payload.get("removed")
    if not _is_version(since) or since > version or not isinstance(removed, list):
        return None
    if not all(isinstance(item, dict) and isinstance(item.get("serial"), str) for item in removed):
        return None
    return _Document(
        product_id,
        int(version),
        issued_at,
        next_update,
        read,
        int(since),
        [item["serial"] for item in removed],
    )


def _sorted(
    product_id: str, version: int, issued_at: str, next_update: str, entries: List[RevocationEntry]
) -> RevocationList:
    ordered = sorted(entries, key=lambda entry: string_sort_key(entry.serial))
    return RevocationList(product_id, version, issued_at, next_update, tuple(ordered))


def _refused(codes: List[str]) -> RevocationListResult:
    return RevocationListResult(False, None, tuple(Issue(code, _MESSAGES[code]) for code in codes))


def _is_version(value: Any) -> bool:
    return is_safe_integer(value) and value >= 0


def _is_time(value: Any) -> bool:
    return isinstance(value, str) and parse_date_ms(value) is not None


def _is_entry(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("serial"), str)
        and value.get("status") in _STATUSES
        and isinstance(value.get("status"), str)
        and _is_time(value.get("at"))
    )
