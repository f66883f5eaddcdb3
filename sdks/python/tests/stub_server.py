"""A real HTTP server on localhost that answers what each test scripts, request by request.

It is the failure paths the platform does not produce on demand: 5xx, 429 with Retry-After, an
answer that never comes or comes a byte at a time, a forged signature. Each request is kept as
the server saw it: its credential, its nonce, its body.
"""

import base64
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

from cryptography.hazmat.primitives.serialization import load_pem_private_key

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"
_ANSWERS = json.loads((CONFORMANCE / "signed-answers.json").read_text("utf-8"))

#: The organization's response keys, as an application ships them (a JWK Set).
RESPONSE_KEYS = _ANSWERS["keys"]["response-keys.jwks"]["jwks"]
#: The active key's id, and its private half (a test key: its private half is public).
RESPONSE_KID = next(key["kid"] for key in RESPONSE_KEYS["keys"] if key["status"] == "active")
_RESPONSE_KEY = load_pem_private_key((CONFORMANCE / "keys" / "response-ed25519.pem").read_bytes(), None)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def sign_answer(body: bytes, nonce: str, iat: Optional[float] = None) -> str:
    """A Licensing-Signature as the gateway writes it: a JWS with a detached payload."""
    header = {
        "alg": "EdDSA",
        "typ": "licensing-answer+jws",
        "kid": RESPONSE_KID,
        "nonce": nonce,
        "iat": int(time.time() if iat is None else iat),
    }
    protected = b64url(json.dumps(header).encode("utf-8"))
    signature = _RESPONSE_KEY.sign((protected + "." + b64url(body)).encode("ascii"))
    return protected + ".." + b64url(signature)


@dataclass
class Seen:
    method: str
    path: str
    headers: Dict[str, str]
    body: Any
    at: float

    @property
    def credential(self) -> str:
        return self.headers.get("authorization", "")[len("Bearer ") :]


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    headers: Optional[Dict[str, str]] = None
    #: Sign the body for the request's nonce; `nonce` signs it for another one instead.
    sign: bool = False
    nonce: Optional[str] = None
    #: Sign this body, and send `body`: a body changed on the way.
    signed_body: Any = None
    #: Send the headers, then the body a byte every `drip` seconds.
    drip: Optional[float] = None


HANG = "hang"
DROP = "drop"
Scripted = Union[Answer, str, Callable[[Seen], Answer]]


class StubServer:
    """Answers each request with the next scripted answer, then with `fallback` (by default a 500).

    HANG never answers (until the server closes). DROP closes the connection without an answer.
    """

    def __init__(self) -> None:
        self.script: List[Scripted] = []
        self.fallback: Scripted = Answer(500, {"code": "internal"})
        self.seen: List[Seen] = []
        self._closing = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                stub._handle(self)

            do_POST = do_DELETE = do_PUT = do_PATCH = do_GET

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def lines(self) -> List[str]:
        """Each request as `METHOD path credential`."""
        return ["%s %s %s" % (seen.method, seen.path, seen.credential) for seen in self.seen]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        seen = Seen(
            method=handler.command,
            path=handler.path,
            headers={name.lower(): value for name, value in handler.headers.items()},
            body=json.loads(raw) if raw else None,
            at=time.monotonic(),
        )
        self.seen.append(seen)
        scripted = self.script.pop(0) if self.script else self.fallback
        if callable(scripted) and not isinstance(scripted, Answer):
            scripted = scripted(seen)
        if scripted == HANG:
            self._closing.wait(30)
            handler.close_connection = True
            return
        if scripted == DROP:
            handler.close_connection = True
            return
        assert isinstance(scripted, Answer)
        body = json.dumps({} if scripted.body is None else scripted.body).encode("utf-8")
        headers = {"Content-Type": "application/json", **(scripted.headers or {})}
        if scripted.sign or scripted.signed_body is not None:
            signed = (
                body if scripted.signed_body is None else json.dumps(scripted.signed_body).encode("utf-8")
            )
            nonce = scripted.nonce or seen.headers.get("licensing-nonce", "")
            headers["Licensing-Signature"] = sign_answer(signed, nonce)
        handler.send_response(scripted.status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if scripted.drip is None:
            handler.wfile.write(body)
            return
        for index in range(len(body)):
            if self._closing.wait(scripted.drip):
                return
            try:
                handler.wfile.write(body[index : index + 1])
                handler.wfile.flush()
            except OSError:
                return
