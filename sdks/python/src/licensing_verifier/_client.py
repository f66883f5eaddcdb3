"""The online client: seats, validate, check-in, checkout, check-revocation and sync.

It behaves as the JavaScript SDK's LicenseClient does. Every request has a timeout, and is retried
on a network failure, a timeout, a 429 or a 5xx. The last-known state carries the application
through an outage, for a grace period. It authenticates with the license's token (or a client API
key), and its seat's calls with the machine token that activate() got.
"""

import json
import math
import random
import ssl
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from ._errors import InvalidOptionError
from ._http import HttpAnswer
from ._keys import KeyInput, PublicKey, import_public_keys
from ._license import decode_license, verify_license
from ._machine import time_ordered_uuid
from ._online import (
    Activation,
    CheckedOutLicense,
    LicenseClientError,
    LicenseState,
    LicenseStateStore,
    LicenseView,
    NotActivatedError,
    RUNNING_CODES,
    RevocationStatus,
    StoredActivation,
    status_of_code,
)
from ._shared import (
    Heartbeat,
    check_signature,
    heartbeat_delay,
    json_object,
    new_nonce,
    refusal,
    segment,
    send,
)
from ._text import parse_json
from ._time import iso_from_seconds, parse_date_ms

_DAY_SECONDS = 86_400
# A Retry-After longer than this is cut to it: an application should not stall for minutes.
_MAX_RETRY_AFTER_SECONDS = 30.0
_USER_AGENT = "licensing-verifier-python"


class LicenseClient:
    """The application's online side, for one license on this machine.

    `base_url` is the licensing API (`https://licensing.example.com`). `license_key` is the
    license's serial. Give exactly one credential:

    - `license_token`: the license's own token (`lt_…`), which an admin creates with
      `POST /v1/licenses/:id/tokens`. The recommended credential: it reaches this license only.
    - `api_key`: an API key with the `client` scope. One key serves a whole fleet, and an
      organization can close license actions to it: prefer `license_token`.

    With a license token, activate() also gets a machine token (`mt_…`). The client keeps it, and
    uses it for this seat's heartbeats, validate, sync, checkout and deactivate.

    The other options:

    - `fingerprint`: this machine's (see machine_fingerprint()). Seats need it.
    - `hostname`, `platform`, `components` (name to fingerprint): recorded with the seat.
      `components` are also compared by validate.
    - `app_version`: sent with every sync report.
    - `license_id`: the license's id, for check_in() and checkout() before activate(). The license
      file holds it: `decode_license(file).license_id`.
    - `product_key`: the product's public key. checkout() verifies the checked-out file with it.
    - `response_keys`: the organization's response keys (a JWK Set, as a dict or its JSON text).
      With them, validate, sync and check_revocation ask for signed answers, and an answer whose
      signature does not hold counts as no answer.
    - `clock_tolerance_seconds` (default 60): leeway for this machine's clock, when checking a
      signed answer's age and a checked-out file's dates.
    - `timeout_seconds` (default 10): per attempt, the whole answer included.
    - `retries` (default 2): further attempts after a network failure, a timeout, a 429 or a 5xx.
    - `retry_delay_seconds` (default 0.5): the first backoff, doubled each retry, half of it jitter.
      A `Retry-After` (at most 30 s) replaces it.
    - `offline_grace_period_seconds` (default 7 days): how long a last-known `ok` keeps the
      application running while the service cannot be reached.
    - `heartbeat_interval_seconds` (default 300): the heartbeat period when the seat has no expiry.
    - `store`: keeps the last-known state and the seat between runs (FileStore is one).
    - `on_heartbeat_error`: called from the heartbeat thread with each failure.
    - `ssl_context`: for a service whose certificate a private authority signed.
    - `now`: the clock, in Unix seconds (for tests).
    """

    def __init__(
        self,
        base_url: str,
        license_key: str,
        *,
        license_token: Optional[str] = None,
        api_key: Optional[str] = None,
        fingerprint: Optional[str] = None,
        hostname: Optional[str] = None,
        platform: Optional[str] = None,
        components: Optional[Mapping[str, str]] = None,
        app_version: Optional[str] = None,
        license_id: Optional[str] = None,
        product_key: Optional[KeyInput] = None,
        response_keys: Optional[KeyInput] = None,
        clock_tolerance_seconds: float = 60,
        timeout_seconds: float = 10,
        retries: int = 2,
        retry_delay_seconds: float = 0.5,
        offline_grace_period_seconds: float = 7 * _DAY_SECONDS,
        heartbeat_interval_seconds: float = 300,
        store: Optional[LicenseStateStore] = None,
        on_heartbeat_error: Optional[Callable[[LicenseClientError], None]] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        now: Optional[Callable[[], float]] = None,
    ) -> None:
        if (
            not _is_text(base_url)
            or not _is_text(license_key)
            or _is_text(license_token) == _is_text(api_key)
        ):
            raise InvalidOptionError(
                "LicenseClient needs base_url, license_key, and either license_token or api_key (not both)"
            )
        for name, value in (
            ("fingerprint", fingerprint),
            ("hostname", hostname),
            ("platform", platform),
            ("app_version", app_version),
            ("license_id", license_id),
        ):
            if value is not None and not isinstance(value, str):
                raise InvalidOptionError(name + " is a string")
        if components is not None and not (
            isinstance(components, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in components.items())
        ):
            raise InvalidOptionError("components maps names to strings")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise InvalidOptionError("retries is a non-negative integer")

        self.base_url = base_url.rstrip("/")
        self.license_key = license_key
        self.fingerprint = fingerprint
        self.hostname = hostname
        self.platform = platform
        self.components = None if components is None else dict(components)
        self.app_version = app_version
        self.license_id = license_id
        self.timeout_seconds = _seconds(timeout_seconds, "timeout_seconds", positive=True)
        self.retries = retries
        self.retry_delay_seconds = _seconds(retry_delay_seconds, "retry_delay_seconds")
        self.offline_grace_period_seconds = _seconds(
            offline_grace_period_seconds, "offline_grace_period_seconds"
        )
        self.heartbeat_interval_seconds = _seconds(
            heartbeat_interval_seconds, "heartbeat_interval_seconds", positive=True
        )
        self.clock_tolerance_seconds = _seconds(clock_tolerance_seconds, "clock_tolerance_seconds")
        self.store = store
        self.on_heartbeat_error = on_heartbeat_error
        self._product_keys: Optional[List[PublicKey]] = (
            None if product_key is None else import_public_keys(product_key)
        )
        self._response_keys: Optional[List[PublicKey]] = (
            None if response_keys is None else import_public_keys(_json_key_set(response_keys))
        )
        self._ssl_context = ssl_context
        self._now: Callable[[], float] = now if now is not None else time.time

        # The license token or the API key. Double underscores keep it out of sight.
        self.__credential: str = license_token if _is_text(license_token) else api_key  # type: ignore
        # The seat's machine token: never shown, never logged.
        self.__machine_token: Optional[str] = None
        self._lock = threading.RLock()
        self._state: Optional[LicenseState] = None
        self._state_loaded = False
        self._activation: Optional[Activation] = None
        self._activation_loaded = False
        self._heartbeat = Heartbeat(
            "licensing", self.heartbeat, self._heartbeat_delay, lambda: self.on_heartbeat_error
        )

    def __repr__(self) -> str:
        return "LicenseClient(base_url=%r, license_key=%r, fingerprint=%r)" % (
            self.base_url,
            self.license_key,
            self.fingerprint,
        )

    def __enter__(self) -> "LicenseClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stops the heartbeat thread. The seat stays taken: deactivate() frees it."""
        self.stop_heartbeat()

    # The license's status: validate and sync.

    def validate(self) -> LicenseState:
        """Asks the service whether the license (and, with a fingerprint, this machine's seat) is valid.

        Never raises for an outage: the last-known state answers, within the grace period.
        Raises LicenseClientError for a refusal (a bad credential, say).
        """
        body: Dict[str, Any] = {"key": self.license_key}
        if self.fingerprint is not None:
            body["fingerprint"] = self.fingerprint
        if self.components is not None:
            body["components"] = self.components
        self._load_activation()

        def ask() -> Tuple[str, Optional[str]]:
            answer = self._as_machine("POST", "/v1/licenses/validate", body, signed=True)
            code = _member(answer, "code", str)
            return status_of_code(code), _optional_text(answer.get("detail"))

        return self._answered(ask)

    def sync(
        self,
        *,
        features_used: Optional[Iterable[str]] = None,
        seats_in_use: Optional[int] = None,
        report_id: Optional[str] = None,
    ) -> LicenseState:
        """Sends a usage report and learns the license's status: how a revocation reaches the application.

        The report carries one `report_id` (a new UUID unless given) on every retry, so the service
        counts it once. Never raises for an outage (see validate()).
        """
        body: Dict[str, Any] = {"license_serial": self.license_key}
        if self.fingerprint is not None:
            body["hardware_fingerprint"] = self.fingerprint
        if self.app_version is not None:
            body["app_version"] = self.app_version
        if features_used is not None:
            body["features_used"] = list(features_used)
        if seats_in_use is not None:
            body["seats_in_use"] = seats_in_use
        body["report_id"] = report_id if report_id is not None else time_ordered_uuid()
        self._load_activation()

        def ask() -> Tuple[str, Optional[str]]:
            answer = self._as_machine("POST", "/v1/licenses/sync", body, signed=True)
            status = _member(answer, "status", str)
            return status_of_code(status), _optional_text(answer.get("message"))

        return self._answered(ask)

    def last_known_state(self) -> LicenseState:
        """The last-known state without asking the service, with the grace period applied as of now."""
        self._load_state()
        with self._lock:
            detail = None if self._state is None else self._state.detail
        return self._offline_state(detail)

    def check_revocation(self, serials: Optional[Iterable[str]] = None) -> List[RevocationStatus]:
        """The revocation status of serials (default: this license's).

        It needs an API key: the service refuses a license token (`403 forbidden`), whose
        license's status validate() and sync() tell.
        """
        chosen = [self.license_key] if serials is None else list(serials)
        answer = self._request("POST", "/v1/licenses/check-revocation", {"serials": chosen}, signed=True)
        results = answer.get("results")
        if not isinstance(results, list):
            raise _invalid_answer("check-revocation answered no results")
        statuses = []
        for item in results:
            if not isinstance(item, dict) or not isinstance(item.get("serial"), str):
                raise _invalid_answer("check-revocation answered a result without a serial")
            statuses.append(
                RevocationStatus(
                    serial=item["serial"],
                    status=_member(item, "status", str),
                    revoked_at=_optional_text(item.get("revoked_at")),
                )
            )
        return statuses

    # This machine's seat.

    def activate(self) -> Activation:
        """Takes (or finds again) this machine's seat.

        With a license token the service also answers a machine token. The client keeps it (and
        stores it) for this seat's later calls. Each activate gets a new one, and the previous one
        stops working.
        """
        fingerprint = self._require_fingerprint()
        body: Dict[str, Any] = {"license_key": self.license_key, "fingerprint": fingerprint}
        if self.hostname is not None:
            body["hostname"] = self.hostname
        if self.platform is not None:
            body["platform"] = self.platform
        if self.components is not None:
            body["components"] = self.components
        answer = self._request("POST", "/v1/activations", body)
        activation = Activation.from_dict(answer)
        if activation is None:
            raise _invalid_answer("activate answered no activation")
        machine_token = answer.get("machine_token")
        with self._lock:
            # This answer replaces whatever a store held: loading it later must not bring the old one back.
            self._activation_loaded = True
            self._activation = activation
            self.__machine_token = machine_token if isinstance(machine_token, str) else None
        self._save_activation()
        return activation

    @property
    def activation(self) -> Optional[Activation]:
        """The seat the client holds, None before activate() (or before a stored one is loaded)."""
        with self._lock:
            return self._activation

    def heartbeat(self) -> Activation:
        """Keeps the seat: one heartbeat now. It loads a stored seat first, after a restart."""
        self._load_activation()
        seat = self._require_activation()
        answer = self._as_machine("POST", "/v1/activations/%s/heartbeat" % segment(seat.id))
        activation = Activation.from_dict(answer)
        if activation is None:
            raise _invalid_answer("heartbeat answered no activation")
        with self._lock:
            # A seat freed meanwhile stays freed.
            if self._activation is not None and self._activation.id == activation.id:
                self._activation = activation
        return activation

    def start_heartbeat(self) -> None:
        """Heartbeats from a daemon thread until stop_heartbeat(), close() or deactivate().

        It beats at half the seat's remaining lifetime when the seat has one (at least every second),
        else every `heartbeat_interval_seconds`. A failed beat is kept in `heartbeat_error`, logged,
        passed to `on_heartbeat_error`, and tried again at the next tick. The thread never keeps the
        process alive.
        """
        self._load_activation()
        self._require_activation()
        self._heartbeat.start()

    def stop_heartbeat(self) -> None:
        """Stops the heartbeat thread. A beat under way ends first: none starts after this returns."""
        self._heartbeat.stop()

    @property
    def heartbeat_running(self) -> bool:
        return self._heartbeat.running

    @property
    def heartbeat_error(self) -> Optional[LicenseClientError]:
        """The last failed beat of the heartbeat thread, cleared by the next one that succeeds."""
        return self._heartbeat.error

    def deactivate(self) -> None:
        """Frees the seat and stops the heartbeat."""
        self.stop_heartbeat()
        self._load_activation()
        seat = self._require_activation()
        self._as_machine("DELETE", "/v1/activations/%s" % segment(seat.id))
        with self._lock:
            self._activation = None
            self.__machine_token = None
        self._save_activation()

    # Check-in and checkout.

    def check_in(self) -> LicenseView:
        """Tells the service the application is in touch now.

        A policy with `check_in_interval_days` makes validate answer `OVERDUE` once the last
        check-in is older than that. Answers the license, with its new `last_check_in_at`.
        """
        license_id = self._require_license_id()
        answer = self._request("POST", "/v1/licenses/%s/check-in" % segment(license_id))
        if not isinstance(answer.get("id"), str):
            raise _invalid_answer("check-in answered no license")
        return answer  # type: ignore[return-value]

    def checkout(self, ttl_seconds: Optional[int] = None) -> CheckedOutLicense:
        """A license file to run offline until its `expires_at`, signed now.

        With a seat, it is the seat's file: bound to this machine's fingerprint. Without one, it is
        the license's (this needs `license_id`). `ttl_seconds` (3,600 to 31,536,000) is its life;
        the default is the organization's `checkout_ttl_seconds` (30 days unless changed). With a
        `product_key` the file is verified before it is answered. One that does not verify raises
        LicenseClientError `invalid_license_file`, with the verifier's codes.
        """
        body: Dict[str, Any] = {} if ttl_seconds is None else {"ttl_seconds": ttl_seconds}
        self._load_activation()
        with self._lock:
            seat = self._activation
        if seat is not None:
            answer = self._as_machine("POST", "/v1/activations/%s/checkout" % segment(seat.id), body)
        else:
            license_id = self._require_license_id()
            answer = self._request("POST", "/v1/licenses/%s/checkout" % segment(license_id), body)
        blob = _member(answer, "license_blob", str)
        issued_at = _member(answer, "issued_at", str)
        expires_at = _member(answer, "expires_at", str)
        if self._product_keys is None:
            decoded = decode_license(blob)
            if decoded is None:
                raise _invalid_answer("checkout answered no license file")
            return CheckedOutLicense(blob, issued_at, expires_at, decoded, verified=False)
        result = verify_license(
            blob,
            self._product_keys,
            now=self._now(),
            fingerprint=self.fingerprint,
            clock_tolerance_seconds=self.clock_tolerance_seconds,
        )
        if not result.valid or result.license is None:
            raise LicenseClientError(
                "invalid_license_file",
                "the checked-out file does not verify: " + ", ".join(result.codes),
                200,
                result.codes,
            )
        return CheckedOutLicense(blob, issued_at, expires_at, result.license, verified=True)

    # The state, kept and answered.

    def _answered(self, ask: Callable[[], Tuple[str, Optional[str]]]) -> LicenseState:
        self._load_state()
        try:
            status, detail = ask()
        except LicenseClientError as failure:
            if not failure.offline:
                raise
            return self._offline_state(failure.message)
        checked_at = self._now()
        state = LicenseState(
            valid=status in RUNNING_CODES,
            status=status,
            offline=False,
            checked_at=iso_from_seconds(checked_at),
            grace_until=(
                iso_from_seconds(checked_at + self.offline_grace_period_seconds) if status in RUNNING_CODES else None
            ),
            detail=detail,
        )
        with self._lock:
            self._state = state
        if self.store is not None:
            self.store.save(state)
        return state

    def _offline_state(self, detail: Optional[str]) -> LicenseState:
        with self._lock:
            last = self._state
        checked_ms = None if last is None else parse_date_ms(last.checked_at)
        if last is None or checked_ms is None:
            return LicenseState(False, "unknown", True, None, None, detail)
        grace_until = None
        if last.status in RUNNING_CODES:
            grace_until = checked_ms / 1000 + self.offline_grace_period_seconds
        return LicenseState(
            valid=grace_until is not None and self._now() < grace_until,
            status=last.status,
            offline=True,
            checked_at=last.checked_at,
            grace_until=None if grace_until is None else iso_from_seconds(grace_until),
            detail=detail,
        )

    def _load_state(self) -> None:
        with self._lock:
            if self._state_loaded:
                return
            self._state_loaded = True
        stored = None if self.store is None else self.store.load()
        state = stored if isinstance(stored, LicenseState) else LicenseState.from_dict(stored)
        if state is not None and isinstance(state.checked_at, str) and isinstance(state.status, str):
            with self._lock:
                if self._state is None:
                    self._state = state

    def _load_activation(self) -> None:
        """The stored seat, once, if it is this license's on this machine (the options may have changed)."""
        with self._lock:
            if self._activation_loaded:
                return
            self._activation_loaded = True
        load = getattr(self.store, "load_activation", None)
        stored = load() if callable(load) else None
        if not isinstance(stored, StoredActivation):
            stored = StoredActivation.from_dict(stored)
        if stored is None or stored.license_key != self.license_key:
            return
        if stored.activation.fingerprint != self.fingerprint:
            return
        with self._lock:
            if self._activation is None:
                self._activation = stored.activation
                self.__machine_token = stored.machine_token

    def _save_activation(self) -> None:
        save = getattr(self.store, "save_activation", None)
        if not callable(save):
            return
        with self._lock:
            seat, token = self._activation, self.__machine_token
        save(None if seat is None else StoredActivation(self.license_key, seat, token))

    def _require_fingerprint(self) -> str:
        if self.fingerprint is None:
            raise InvalidOptionError("this call needs the client's fingerprint")
        return self.fingerprint

    def _require_activation(self) -> Activation:
        with self._lock:
            seat = self._activation
        if seat is None:
            raise NotActivatedError("activate() first")
        return seat

    def _require_license_id(self) -> str:
        if self.license_id is not None:
            return self.license_id
        self._load_activation()
        with self._lock:
            seat = self._activation
        if seat is None:
            raise NotActivatedError(
                "this call needs the license's id: give license_id (the license file's), or activate() first"
            )
        return seat.license_id

    # The heartbeat thread.

    def _heartbeat_delay(self) -> float:
        with self._lock:
            seat = self._activation
        expires_at = None if seat is None else seat.expires_at
        return heartbeat_delay(expires_at, self._now(), self.heartbeat_interval_seconds, floor=1.0)

    # Requests.

    def _as_machine(
        self, method: str, path: str, body: Any = None, *, signed: bool = False
    ) -> Dict[str, Any]:
        """A call for this machine's seat: with its machine token when the client holds one.

        A 401 to the machine token means the seat ended (freed, lapsed and swept), or another
        activate replaced the token. The client drops it and asks again with its own credential,
        whose answer (a 404 for a seat that is gone, say) is the one that counts.
        """
        with self._lock:
            token = self.__machine_token
        if token is None:
            return self._request(method, path, body, signed=signed)
        try:
            return self._request(method, path, body, signed=signed, credential=token)
        except LicenseClientError as error:
            if error.status != 401:
                raise
        with self._lock:
            dropped = self.__machine_token == token
            if dropped:
                self.__machine_token = None
        if dropped:
            self._save_activation()
        return self._request(method, path, body, signed=signed)

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        signed: bool = False,
        credential: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One call with timeouts and retries: the JSON object a 2xx answers ({} for an empty body)."""
        data = None if body is None else json.dumps(body).encode("ascii")
        attempt = 0
        while True:
            retry_after: Optional[float] = None
            try:
                answer, nonce = self._attempt(method, path, data, credential or self.__credential, signed)
                if 200 <= answer.status < 300:
                    if nonce is not None:
                        self._check_signature(answer, nonce)
                    return json_object(answer)
                failure = refusal(answer, read_title=True)
                retry_after = _retry_after(answer.headers.get("retry-after"))
            except LicenseClientError as error:
                failure = error
            if not failure.offline or attempt >= self.retries:
                raise failure
            backoff = self.retry_delay_seconds * 2**attempt
            time.sleep(
                retry_after if retry_after is not None else backoff / 2 + random.random() * backoff / 2
            )
            attempt += 1

    def _attempt(
        self, method: str, path: str, data: Optional[bytes], credential: str, signed: bool
    ) -> Tuple[HttpAnswer, Optional[str]]:
        headers = {
            "Authorization": "Bearer " + credential,
            "Accept": "application/json",
            "User-Agent": _USER_AGENT,
        }
        if data is not None:
            headers["Content-Type"] = "application/json"
        # A fresh nonce for every attempt: an answer to another request, or a replayed one, fails.
        nonce = new_nonce() if signed and self._response_keys is not None else None
        if nonce is not None:
            headers["Licensing-Nonce"] = nonce
        url = self.base_url + path
        answer = send(
            method, url, headers, data, self.timeout_seconds, "licensing service", self._ssl_context
        )
        return answer, nonce

    def _check_signature(self, answer: HttpAnswer, nonce: str) -> None:
        assert self._response_keys is not None
        failure = "the answer's signature does not hold"
        check_signature(
            answer, nonce, self._response_keys, self._now(), failure, self.clock_tolerance_seconds
        )


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _seconds(value: Any, name: str, positive: bool = False) -> float:
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value < 0
        or (positive and value == 0)
    ):
        raise InvalidOptionError(name + (" is a positive" if positive else " is a non-negative") + " number")
    return float(value)


def _json_key_set(keys: Any) -> Any:
    """A JWK Set given as JSON text, parsed; anything else as given."""
    if isinstance(keys, str) and keys.lstrip().startswith("{"):
        parsed = parse_json(keys)
        if isinstance(parsed, dict):
            return parsed
    return keys


def _optional_text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _member(answer: Mapping[str, Any], name: str, kind: type) -> Any:
    value = answer.get(name)
    if not isinstance(value, kind):
        raise _invalid_answer("the answer has no %s" % name)
    return value


def _invalid_answer(message: str) -> LicenseClientError:
    return LicenseClientError("invalid_answer", message, 200)


def _retry_after(header: Optional[str]) -> Optional[float]:
    """Retry-After in seconds (the form the platform sends); None when absent or unreadable."""
    if header is None or not header.strip():
        return None
    try:
        seconds = float(header.strip())
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, _MAX_RETRY_AFTER_SECONDS)
