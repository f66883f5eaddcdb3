"""What LicenseClient and RelayClient share: a request, its answer read, and the heartbeat thread."""

import logging
import secrets
import ssl
import threading
from typing import Any, Callable, Dict, Mapping, Optional
from urllib.parse import quote

from ._answer import verify_signed_answer
from ._http import ExchangeFailure, ExchangeTimeout, HttpAnswer, describe, exchange
from ._keys import KeyInput
from ._online import LicenseClientError
from ._text import INVALID, parse_json, utf8
from ._time import parse_date_ms

_log = logging.getLogger("licensing_verifier")

OnError = Callable[[LicenseClientError], None]


def new_nonce() -> str:
    """A fresh `Licensing-Nonce`."""
    return secrets.token_urlsafe(18)


def segment(value: str) -> str:
    """The value as one path segment."""
    return quote(value, safe="")


def send(
    method: str,
    url: str,
    headers: Mapping[str, str],
    data: Optional[bytes],
    timeout_seconds: float,
    peer: str,
    ssl_context: Optional[ssl.SSLContext] = None,
) -> HttpAnswer:
    """One exchange. Without a whole answer, it raises `timeout` or `network` (naming `peer`)."""
    try:
        return exchange(method, url, headers, data, timeout_seconds, ssl_context)
    except ExchangeTimeout:
        raise LicenseClientError("timeout", "no answer within %g s" % timeout_seconds, 0) from None
    except ExchangeFailure as error:
        raise LicenseClientError("network", "the %s is unreachable: %s" % (peer, error), 0) from None


def json_of(body: bytes) -> Any:
    """The JSON value of a body, or INVALID."""
    text = utf8(body)
    return INVALID if text is None else parse_json(text)


def json_object(answer: HttpAnswer) -> Dict[str, Any]:
    """The JSON object of an answer, {} for an empty body. Anything else raises `invalid_answer`."""
    if not answer.body.strip():
        return {}
    value = json_of(answer.body)
    if not isinstance(value, dict):
        raise LicenseClientError("invalid_answer", "the answer is not a JSON object", answer.status)
    return value


def refusal(answer: HttpAnswer, *, read_title: bool) -> LicenseClientError:
    """The error of a refusal: its problem's `code` and `detail`, else `http_<status>` and `HTTP <status>`.

    With `read_title`, a problem without a `detail` gives its `title`.
    """
    parsed = json_of(answer.body)
    problem = parsed if isinstance(parsed, dict) else {}
    code, message = problem.get("code"), problem.get("detail")
    if read_title and not isinstance(message, str):
        message = problem.get("title")
    return LicenseClientError(
        code if isinstance(code, str) else "http_%d" % answer.status,
        message if isinstance(message, str) else "HTTP %d" % answer.status,
        answer.status,
    )


def check_signature(
    answer: HttpAnswer,
    nonce: str,
    keys: KeyInput,
    now: float,
    failure: str,
    tolerance: Optional[float] = None,
) -> None:
    """Raises `unverified_answer` unless the answer's signature holds for this nonce.

    `failure` starts the error's message. `tolerance` is the clock's leeway (verify_signed_answer's
    default when None).
    """
    signature = answer.headers.get("licensing-signature")
    check = verify_signed_answer(
        answer.body, signature, keys, nonce=nonce, now=now, clock_tolerance_seconds=tolerance
    )
    if not check.valid:
        message = "%s (%s): it counts as no answer" % (failure, ", ".join(check.codes))
        raise LicenseClientError("unverified_answer", message, answer.status, check.codes)


def heartbeat_delay(expires_at: Optional[str], now: float, interval: float, floor: float) -> float:
    """Half the remaining lifetime, within `floor` and `interval`. Without an expiry, `interval`."""
    expires_ms = None if expires_at is None else parse_date_ms(expires_at)
    if expires_ms is None:
        return interval
    return max(floor, min(interval, (expires_ms / 1000 - now) / 2))


class Heartbeat:
    """A daemon thread that calls `beat` after each `delay()`. It keeps the last failed beat.

    The thread ends when it is stopped, or when `beat` returns False. `name` starts the thread's
    name and the warning of a failed beat. `on_error` returns the callback for a failed beat.
    """

    def __init__(
        self,
        name: str,
        beat: Callable[[], Any],
        delay: Callable[[], float],
        on_error: Callable[[], Optional[OnError]],
    ) -> None:
        self._name, self._beat, self._delay, self._on_error = name, beat, delay, on_error
        self._lock = threading.Lock()
        self._stop: Optional[threading.Event] = None
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[LicenseClientError] = None

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None and self._thread.is_alive()

    @property
    def error(self) -> Optional[LicenseClientError]:
        with self._lock:
            return self._error

    def start(self) -> None:
        """Stops the thread running, then starts a new one."""
        self.stop()
        stop = threading.Event()
        thread = threading.Thread(
            target=self._loop, args=(stop,), name=self._name + "-heartbeat", daemon=True
        )
        with self._lock:
            self._stop, self._thread = stop, thread
        thread.start()

    def stop(self) -> None:
        """Stops the thread. A beat under way ends first: none starts after this returns."""
        with self._lock:
            stop, thread = self._stop, self._thread
            self._stop = self._thread = None
        if stop is not None:
            stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _loop(self, stop: threading.Event) -> None:
        while not stop.wait(self._delay()):
            try:
                if self._beat() is False:
                    return
            except Exception as error:  # noqa: BLE001 - the thread must outlive any failure
                failure = error
                if not isinstance(failure, LicenseClientError):
                    failure = LicenseClientError("network", describe(error), 0)
                with self._lock:
                    self._error = failure
                _log.warning("%s heartbeat failed: %s (%s)", self._name, failure.message, failure.code)
                callback = self._on_error()
                if callback is not None:
                    try:
                        callback(failure)
                    except Exception:  # noqa: BLE001
                        _log.exception("on_heartbeat_error raised")
            else:
                with self._lock:
                    self._error = None
