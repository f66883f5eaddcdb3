"""A TCP relay in front of the platform, which a test cuts and restores: a real outage to the client.

cut() closes the listening socket and every connection through it, so the client's connections
are refused or reset, as when the service's host goes down. restore() listens again on the same
port. The relay copies bytes and never answers for the service.
"""

import socket
import threading
from typing import List, Optional, Tuple


class TcpRelay:
    def __init__(self, upstream: Tuple[str, int]) -> None:
        self._upstream = upstream
        self._lock = threading.Lock()
        self._sockets: List[socket.socket] = []
        self._listener: Optional[socket.socket] = None
        self.port = 0
        self.restore()
        self.url = "http://127.0.0.1:%d" % self.port

    def restore(self) -> None:
        """Listens again on the same port: the service is back."""
        with self._lock:
            if self._listener is not None:
                return
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.port))
            listener.listen(64)
            self.port = listener.getsockname()[1]
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Refuses new connections and drops the open ones."""
        with self._lock:
            listener, self._listener = self._listener, None
            open_sockets, self._sockets = self._sockets, []
        if listener is not None:
            # shutdown() wakes the thread blocked in accept(); close() frees the port.
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        for sock in open_sockets:
            _close(sock)

    close = cut

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._upstream, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:
                    _close(client)
                    _close(upstream)
                    return
                self._sockets += [client, upstream]
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(source, target), daemon=True).start()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    _close(source)
    _close(target)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
