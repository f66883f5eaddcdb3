"""The application's side of an on-premise relay: a floating seat leased over the site's network.

RelayClient has the seat methods of LicenseClient (activate, heartbeat, deactivate, validate) and
behaves as the JavaScript SDK's RelayClient does, with the same codes. It holds no credential. It
trusts the relay only as far as the product's public key vouches for it: the relay file from
`GET /v1/status` must verify with that key, and every answer must carry a `Licensing-Signature`
of the relay key that file names, over this request's fresh nonce.
"""

import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from ._errors import InvalidOptionError
from ._http import HttpAnswer
from ._keys import KeyInput
from ._license import VerifiedLicense, verify_license
from ._online import LicenseClientError, LicenseState
from ._shared import (
    Heartbeat,
    check_signature,
    heartbeat_delay,
    json_object,
    json_of,
    new_nonce,
    refusal,
    segment,
    send,
)
from ._text import from_base64, json_object_of, utf8
from ._time import iso_from_seconds, parse_date_ms


@dataclass(frozen=True)
class RelayLease:
    """A seat the relay leased to this machine."""

    id: str
    fingerprint: str
    name: Optional[str]
    leased_at: str
    last_heartbeat_at: str
    expires_at: str


@dataclass(frozen=True)
class RelayStatus:
    """`GET /v1/status`, with its relay file verified."""

    site: str
    serial: str
    product_id: str
    license_id: str
    seats: int
    seats_in_use: int
    lease_seconds: int
    file_expires_at: str
    expired: bool
    revoked: bool
    clock_rewound: bool
    #: The relay file's license, verified with the product public key.
    license: VerifiedLicense


class RelayClient:
    """Leases a floating seat from a relay on the site's network.

    `relay_url` is the relay (`http://relay.plant4.local:8700`). `public_key` is the product's
    public key the application ships with. `fingerprint` is this machine's. The other options:
    `product_id` (the product the relay file must be for), `name` (shown in the relay's lease
    list), `timeout_seconds` (default 10), `heartbeat_interval_seconds` (the longest wait between
    two thread heartbeats, default 300), `on_heartbeat_error`, and `now` (Unix seconds, for tests).

    Errors are LicenseClientError's: the relay's problem codes (`no_seats`, `license_revoked`,
    `relay_file_expired`, `clock_rewound`, `not_found`), `relay_file_invalid` and
    `product_mismatch` (the relay file does not verify with the product key, or is another
    product's), `unverified_answer` (an answer without a valid signature of the relay key for this
    request), `network` and `timeout`. A lease call before activate() raises `not_activated`.
    """

    def __init__(
        self,
        relay_url: str,
        public_key: KeyInput,
        fingerprint: str,
        *,
        product_id: Optional[str] = None,
        name: Optional[str] = None,
        timeout_seconds: float = 10.0,
        heartbeat_interval_seconds: float = 300.0,
        on_heartbeat_error: Optional[Callable[[LicenseClientError], None]] = None,
        now: Optional[Callable[[], float]] = None,
    ) -> None:
        if not relay_url or not public_key or not fingerprint:
            raise InvalidOptionError("RelayClient needs relay_url, public_key and fingerprint")
        self.relay_url = relay_url.rstrip("/")
        self._public_key = public_key
        self.fingerprint = fingerprint
        self.product_id = product_id
        self.name = name
        self.timeout_seconds = timeout_seconds
        self.heartbeat_interval_seconds = heartbeat_interval_seconds
        self.on_heartbeat_error = on_heartbeat_error
        self._now = now or time.time
        self._lock = threading.RLock()
        self._relay_key: Optional[str] = None
        self._lease: Optional[RelayLease] = None
        self._heartbeat = Heartbeat(
            "relay", self._beat, self._heartbeat_delay, lambda: self.on_heartbeat_error
        )

    def __repr__(self) -> str:
        return "RelayClient(relay_url=%r, fingerprint=%r)" % (self.relay_url, self.fingerprint)

    def __enter__(self) -> "RelayClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop_heartbeat()

    # The relay.

    def status(self) -> RelayStatus:
        """The relay's status, its relay file verified with the product key.

        Raises `relay_file_invalid`, `product_mismatch` or `relay_file_expired` for a file that
        does not hold, `unverified_answer` for a status the relay that file names did not sign.
        """
        nonce = new_nonce()
        answer = self._send("GET", "/v1/status", None, nonce)
        body = json_of(answer.body)
        file = body.get("relay_file") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(file, str):
            raise LicenseClientError("relay_file_invalid", "the status carries no relay file", 0)
        verdict = verify_license(file, self._public_key, now=self._now(), product_id=self.product_id)
        codes = verdict.codes
        if "product_mismatch" in codes:
            raise LicenseClientError("product_mismatch", "the relay file is for another product", 0, codes)
        if codes and all(code in ("expired", "file_expired") for code in codes):
            raise LicenseClientError("relay_file_expired", "the relay file has expired", 0, codes)
        relay_key = _relay_key_of(file)
        if not verdict.valid or verdict.license is None or relay_key is None:
            raise LicenseClientError(
                "relay_file_invalid",
                "the relay file does not verify with the product key (%s)"
                % (", ".join(codes) or "no relay claim"),
                0,
                codes,
            )
        # The status itself must come from the relay that file names.
        self._check_signature(answer, nonce, relay_key)
        with self._lock:
            self._relay_key = relay_key

        def number(name: str) -> int:
            value = body.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return RelayStatus(
            site=str(body.get("site", "")),
            serial=verdict.license.serial,
            product_id=verdict.license.product_id,
            license_id=verdict.license.license_id,
            seats=number("seats"),
            seats_in_use=number("seats_in_use"),
            lease_seconds=number("lease_seconds"),
            file_expires_at=str(body.get("file_expires_at", "")),
            expired=body.get("expired") is True,
            revoked=body.get("revoked") is True,
            clock_rewound=body.get("clock_rewound") is True,
            license=verdict.license,
        )

    # The seat.

    @property
    def lease(self) -> Optional[RelayLease]:
        """The lease this client holds, if any."""
        with self._lock:
            return self._lease

    def activate(self) -> RelayLease:
        """Leases a seat for this machine; a machine holding one gets it back, renewed."""
        body: Dict[str, Any] = {"fingerprint": self.fingerprint}
        if self.name:
            body["name"] = self.name
        lease = _lease_of(self._call("POST", "/v1/leases", body))
        with self._lock:
            self._lease = lease
        return lease

    def heartbeat(self) -> RelayLease:
        """Renews the lease now."""
        lease_id = self._require_lease().id
        try:
            lease = _lease_of(self._call("POST", "/v1/leases/%s/heartbeat" % segment(lease_id)))
        except LicenseClientError as error:
            # The relay no longer knows the lease (it lapsed, or a revocation ended it).
            if error.code == "not_found":
                with self._lock:
                    if self._lease is not None and self._lease.id == lease_id:
                        self._lease = None
            raise
        with self._lock:
            if self._lease is not None and self._lease.id == lease_id:
                self._lease = lease
        return lease

    def start_heartbeat(self) -> None:
        """Heartbeats from a daemon thread until stop_heartbeat() or deactivate().

        It beats at half the lease's remaining lifetime, at most every `heartbeat_interval_seconds`.
        A failed beat is kept in `heartbeat_error` and passed to `on_heartbeat_error`.
        """
        self._require_lease()
        self._heartbeat.start()

    def stop_heartbeat(self) -> None:
        """Stops the heartbeat thread. A beat under way ends first."""
        self._heartbeat.stop()

    @property
    def heartbeat_error(self) -> Optional[LicenseClientError]:
        """The last failed beat of the heartbeat thread, cleared by the next one that succeeds."""
        return self._heartbeat.error

    def deactivate(self) -> None:
        """Releases the seat and stops the heartbeat."""
        self.stop_heartbeat()
        lease_id = self._require_lease().id
        self._call("DELETE", "/v1/leases/%s" % segment(lease_id))
        with self._lock:
            self._lease = None

    def validate(self) -> LicenseState:
        """Whether the application may run.

        `ok` while this machine's lease lives and the relay's license holds. Otherwise `revoked`,
        `expired` (the relay file), `no_seats` (no lease, and every seat is taken), `no_activation`
        (no lease) or `heartbeat_dead` (the lease lapsed). When the relay cannot be reached, the
        lease carries the application until it expires (`offline` True). Raises for a relay that
        does not prove itself (`relay_file_invalid`, `product_mismatch`, `unverified_answer`).
        """
        try:
            status = self.status()
        except LicenseClientError as error:
            if error.code == "relay_file_expired":
                return self._state("expired", False, error.message)
            if error.code in ("network", "timeout") or error.status == 429 or error.status >= 500:
                return self._state("ok" if self._lease_lives() else "unknown", True, error.message)
            raise
        if status.revoked:
            return self._state("revoked", False, "the license is revoked")
        if status.expired:
            return self._state("expired", False, "the relay file has expired")
        if self.lease is None:
            if status.seats_in_use >= status.seats:
                return self._state("no_seats", False, "every seat is leased")
            return self._state("no_activation", False, "this machine holds no lease: activate() first")
        if not self._lease_lives():
            return self._state("heartbeat_dead", False, "the lease has lapsed")
        return self._state("ok", False, None)

    # Internals.

    def _state(self, status: str, offline: bool, detail: Optional[str]) -> LicenseState:
        lease = self.lease
        runs = status == "ok"
        return LicenseState(
            valid=runs,
            status=status,
            offline=offline,
            checked_at=None if offline else iso_from_seconds(self._now()),
            grace_until=lease.expires_at if runs and lease is not None else None,
            detail=detail,
        )

    def _lease_lives(self) -> bool:
        lease = self.lease
        expires_ms = None if lease is None else parse_date_ms(lease.expires_at)
        return expires_ms is not None and expires_ms / 1000 > self._now()

    def _require_lease(self) -> RelayLease:
        lease = self.lease
        if lease is None:
            raise LicenseClientError("not_activated", "this machine holds no lease: activate() first", 0)
        return lease

    def _heartbeat_delay(self) -> float:
        lease = self.lease
        expires_at = None if lease is None else lease.expires_at
        return heartbeat_delay(expires_at, self._now(), self.heartbeat_interval_seconds, floor=0.5)

    def _beat(self) -> bool:
        """One beat of the thread. Without a lease it returns False, and the thread ends."""
        if self.lease is None:
            return False
        self.heartbeat()
        return True

    def _call(self, method: str, path: str, body: Any = None) -> Dict[str, Any]:
        """A lease call: the relay proven first (once), the answer's signature checked."""
        with self._lock:
            relay_key = self._relay_key
        if relay_key is None:
            self.status()
            with self._lock:
                relay_key = self._relay_key
        assert relay_key is not None
        nonce = new_nonce()
        answer = self._send(method, path, body, nonce)
        self._check_signature(answer, nonce, relay_key)
        return json_object(answer)

    def _check_signature(self, answer: HttpAnswer, nonce: str, relay_key: str) -> None:
        failure = "the answer is not signed by the relay for this request"
        check_signature(answer, nonce, relay_key, self._now(), failure)

    def _send(self, method: str, path: str, body: Any, nonce: str) -> HttpAnswer:
        """One request; the answer of a 2xx, the relay's problem raised otherwise."""
        headers = {"Accept": "application/json", "Licensing-Nonce": nonce}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        answer = send(method, self.relay_url + path, headers, data, self.timeout_seconds, "relay")
        if 200 <= answer.status < 300:
            return answer
        # Problems are not signed: they can only refuse, never grant.
        raise refusal(answer, read_title=False)


def _relay_key_of(file: str) -> Optional[str]:
    """The `relay.public_key` claim of a relay file (base64 of a compact JWS), read after it verified."""
    raw = from_base64(file.strip())
    jws = None if raw is None else utf8(raw)
    parts = [] if jws is None else jws.split(".")
    payload = json_object_of(parts[1]) if len(parts) == 3 else None
    relay = payload.get("relay") if payload is not None else None
    key = relay.get("public_key") if isinstance(relay, dict) else None
    return key if isinstance(key, str) and key else None


def _lease_of(value: Dict[str, Any]) -> RelayLease:
    def text(name: str) -> str:
        member = value.get(name)
        if not isinstance(member, str):
            raise LicenseClientError("invalid_answer", "the lease has no %s" % name, 200)
        return member

    name = value.get("name")
    return RelayLease(
        id=text("id"),
        fingerprint=text("fingerprint"),
        name=name if isinstance(name, str) else None,
        leased_at=text("leased_at"),
        last_heartbeat_at=text("last_heartbeat_at"),
        expires_at=text("expires_at"),
    )


__all__: Tuple[str, ...] = ("RelayClient", "RelayLease", "RelayStatus")
