"""One HTTP exchange over the standard library, within a deadline for the whole of it.

A socket timeout alone bounds each read, not the exchange: a server that sends a byte now and
then would hold the caller for ever. Here every step gets only the time left.
"""

import http.client
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Dict, Mapping, Optional
from urllib.parse import urlsplit

# The platform's answers are a few kilobytes. More than this is no answer of it.
MAX_BODY_BYTES = 4 * 1024 * 1024

_CHUNK = 65536


class ExchangeTimeout(Exception):
    """No complete answer within the deadline."""


class ExchangeFailure(Exception):
    """The exchange failed: no connection, a broken one, a refused certificate, a garbled answer."""


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    #: Header names in lower case. Of a header sent twice, the last counts.
    headers: Dict[str, str]
    #: The body exactly as received.
    body: bytes


def exchange(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: Optional[bytes],
    timeout_seconds: float,
    ssl_context: Optional[ssl.SSLContext] = None,
) -> HttpAnswer:
    """Sends one request and reads its whole answer, within `timeout_seconds` in all.

    Redirects are not followed. Raises ExchangeTimeout or ExchangeFailure.
    """
    deadline = time.monotonic() + timeout_seconds
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ExchangeFailure("not an http(s) URL: " + url)
    path = (parts.path or "/") + ("?" + parts.query if parts.query else "")

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ExchangeTimeout()
        return remaining

    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        context = ssl_context if ssl_context is not None else ssl.create_default_context()
        connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=left(), context=context)
    else:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=left())
    try:
        connection.connect()
        # getresponse() may drop the connection's socket when the answer closes it: keep our own.
        sock = connection.sock
        sock.settimeout(left())
        connection.request(method, path, body=body, headers=dict(headers))
        sock.settimeout(left())
        response = connection.getresponse()
        chunks = []
        size = 0
        while True:
            sock.settimeout(left())
            # read1: one receive at most, so that each waits only for the time left.
            chunk = response.read1(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ExchangeFailure("the answer is larger than %d bytes" % MAX_BODY_BYTES)
            chunks.append(chunk)
        return HttpAnswer(
            status=response.status,
            headers={name.lower(): value for name, value in response.getheaders()},
            body=b"".join(chunks),
        )
    except socket.timeout:
        raise ExchangeTimeout() from None
    except (OSError, http.client.HTTPException) as error:
        raise ExchangeFailure(describe(error)) from error
    finally:
        connection.close()


def describe(error: BaseException) -> str:
    """The error's type, and its text if it has one."""
    text = str(error)
    return "%s: %s" % (type(error).__name__, text) if text else type(error).__name__
