"""A stand-in Kubernetes API server for tests: records requests on 127.0.0.1, sends nothing out.

The real `kubernetes` client talks to it through a generated kubeconfig, so the tests check the
exact HTTP requests (method, path, headers, JSON body) a real API server would receive. It
answers `201 Created` with the posted object echoed back (plus a uid), or a canned error status;
it serves at most `max_requests` requests and shuts itself down after `lifetime_s` seconds even
if a test forgets to stop it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOKEN = "test-token-not-a-secret"


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names lowercased
    body: Any  # parsed JSON, or None


class RecordingApiServer:
    def __init__(
        self,
        status: int = 201,
        fail_kinds: tuple[str, ...] = (),
        max_requests: int = 10,
        lifetime_s: float = 30.0,
        reason: str = "AlreadyExists",
        message: str = "jobs.batch already exists",
    ) -> None:
        self.requests: list[Request] = []
        self.status = status  # returned for a POST whose kind is in fail_kinds
        self.fail_kinds = fail_kinds
        self.reason, self.message = reason, message  # of that failure's Status body
        self.max_requests = max_requests
        self.lock = threading.Lock()  # held while a request is recorded
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with recorder.lock:
                    over = len(recorder.requests) >= recorder.max_requests
                    if not over:
                        recorder.requests.append(
                            Request(
                                self.command,
                                self.path,
                                {k.lower(): v for k, v in self.headers.items()},
                                body,
                            )
                        )
                if over:
                    self._reply(429, _status(429, "TooManyRequests", "recorder limit reached"))
                elif self.command == "POST" and body and body.get("kind") in recorder.fail_kinds:
                    self._reply(
                        recorder.status,
                        _status(recorder.status, recorder.reason, recorder.message),
                    )
                elif self.command == "POST":
                    body.setdefault("metadata", {})["uid"] = "00000000-0000-0000-0000-000000000001"
                    self._reply(201, body)
                else:
                    self._reply(200, _status(200, "", "ok"))

            do_POST = do_GET = do_DELETE = _handle

            def _reply(self, code: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._timer = threading.Timer(lifetime_s, self._server.shutdown)
        self._timer.daemon = True

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> RecordingApiServer:
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def close_unstarted(self) -> None:
        """Frees the port of a server never entered: its kubeconfig then points at nothing."""
        self._server.server_close()

    def write_kubeconfig(self, path: Path, namespace: str = "default") -> Path:
        """A kubeconfig with context `recorder` (current) pointing here and `elsewhere`."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "recorder", "cluster": {"server": self.url}}],
            "users": [{"name": "tester", "user": {"token": TOKEN}}],
            "contexts": [
                {
                    "name": "recorder",
                    "context": {"cluster": "recorder", "user": "tester", "namespace": namespace},
                },
                {"name": "elsewhere", "context": {"cluster": "recorder", "user": "tester"}},
            ],
            "current-context": "recorder",
        }
        path.write_text(json.dumps(config), encoding="utf-8")  # JSON is valid YAML
        return path


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure" if code >= 400 else "Success",
        "message": message,
        "reason": reason,
        "code": code,
    }
