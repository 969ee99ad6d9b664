"""A TCP stand-in for a database server that hangs: it forwards to the real server until
``hang()``; from then on it accepts connections and holds them without a byte back, like a frozen
PostgreSQL. With no target it hangs from the start."""

from __future__ import annotations

import contextlib
import socket
import threading


class HangingProxy:
    def __init__(self, target: tuple[str, int] | None = None) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._hanging = threading.Event()
        if target is None:
            self._hanging.set()
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def hang(self) -> None:
        self._hanging.set()

    def restore(self) -> None:
        """Drop every connection (as a restarted server does) and forward again."""
        self._drop()
        self._hanging.clear()

    def close(self) -> None:
        self._listener.close()
        self._drop()

    def _drop(self) -> None:
        with self._lock:
            held, self._held = self._held, []
        for sock in held:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # a plain close() leaves a blocked recv() hanging
            sock.close()

    def _keep(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._held.append(sock)
        return sock

    def _accept(self) -> None:
        while True:
            try:
                client = self._keep(self._listener.accept()[0])
            except OSError:  # closed
                return
            if self._hanging.is_set() or self._target is None:
                continue  # held open, never answered
            upstream = self._keep(socket.create_connection(self._target))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
                if not data:
                    break
                if not self._hanging.is_set():  # hanging: swallowed, nothing goes either way
                    sink.sendall(data)
            except OSError:
                break
        for sock in (source, sink):
            sock.close()
