"""The online client against the running platform: the README's walk-through, as written, and more.

sdks/python/online.int-spec.ts starts the platform, makes an organization, a product with a key
pair, two licenses, a license token for the first, and runs this file with `-m online` and these
variables:

- what the README's example reads: LICENSING_URL, LICENSE_KEY (the first license's serial),
  LICENSE_TOKEN (its token) and PRODUCT_KEY (the product's public key, a PEM);
- what the checks need: LICENSING_E2E_LICENSE_ID (the first license's id), LICENSING_E2E_ADMIN_KEY
  (an admin key, to look and to revoke), LICENSING_E2E_CLIENT_KEY (a `client` API key),
  LICENSING_E2E_RESPONSE_KEYS (the organization's response keys, a JWK Set's JSON),
  LICENSING_E2E_OTHER_KEY and LICENSING_E2E_OTHER_ID (the second license's serial and id).

Without them every test here is skipped. The tests run in this order, and the last one revokes the
first license.
"""

import http.client
import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, List, Tuple
from urllib.parse import urlsplit

import pytest

import licensing_verifier as lv
from vectors import vector_files

README = Path(__file__).resolve().parent.parent / "README.md"
NEEDED = (
    "LICENSING_URL",
    "LICENSE_KEY",
    "LICENSE_TOKEN",
    "PRODUCT_KEY",
    "LICENSING_E2E_LICENSE_ID",
    "LICENSING_E2E_ADMIN_KEY",
    "LICENSING_E2E_CLIENT_KEY",
    "LICENSING_E2E_RESPONSE_KEYS",
    "LICENSING_E2E_OTHER_KEY",
    "LICENSING_E2E_OTHER_ID",
)
MISSING = [name for name in NEEDED if not os.environ.get(name)]

pytestmark = [
    pytest.mark.online,
    pytest.mark.skipif(
        bool(MISSING),
        reason="needs the running platform (sdks/python/online.int-spec.ts): " + ", ".join(MISSING),
    ),
]

env = os.environ.get
URL = env("LICENSING_URL", "")
SERIAL = env("LICENSE_KEY", "")
TOKEN = env("LICENSE_TOKEN", "")
PRODUCT_KEY = env("PRODUCT_KEY", "")
LICENSE_ID = env("LICENSING_E2E_LICENSE_ID", "")


def readme_walk_through() -> str:
    """The README's online example, exactly as printed there."""
    markdown = README.read_text("utf-8")
    match = re.search(r"<!-- online walk-through[^>]*-->\s*```python\n(.*?)```", markdown, re.S)
    assert match, "README.md has no block marked <!-- online walk-through -->"
    return match.group(1)


def admin(method: str, path: str, body: Any = None) -> Tuple[int, Any]:
    """A call with the organization's admin key: what an admin does on the console."""
    request = urllib.request.Request(
        URL + path,
        method=method,
        data=None if body is None else json.dumps(body).encode("utf-8"),
        headers={
            "Authorization": "Bearer " + env("LICENSING_E2E_ADMIN_KEY", ""),
            **({} if body is None else {"Content-Type": "application/json"}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def wait_for(what: str, check: Callable[[], Any], timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("waited %g s for %s" % (timeout, what))
        time.sleep(0.1)


def seats(license_id: str) -> List[dict]:
    status, body = admin("GET", "/v1/activations?license_id=" + license_id)
    assert status == 200, body
    return body["activations"]


def syncs_counted(license_id: str) -> int:
    status, body = admin("GET", "/v1/licenses/%s/usage" % license_id)
    assert status == 200, body
    return body["syncs"]


class Relay:
    """A proxy in front of the platform, standing for a network that can lose answers.

    With `lose_sync_answers` set, a sync reaches the service, and its answer is dropped on the
    way back: the client sees the connection close and sends the report again.
    """

    def __init__(self, upstream: str) -> None:
        target = urlsplit(upstream)
        self.lose_sync_answers = 0
        #: Each sync report that went through, and the kind of credential it carried (lt, mt, lk).
        self.syncs: List[Tuple[dict, str]] = []
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    data = answer.read()
                finally:
                    upstream.close()
                if self.path.endswith("/licenses/sync"):
                    credential = self.headers.get("authorization", "")[len("Bearer ") :][:2]
                    relay.syncs.append((json.loads(body or b"{}"), credential))
                    if relay.lose_sync_answers > 0:
                        relay.lose_sync_answers -= 1
                        self.close_connection = True
                        return
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in (
                        "connection",
                        "content-length",
                        "transfer-encoding",
                        "keep-alive",
                    ):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_DELETE = do_GET

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def test_signed_answers_of_the_platform_verify_and_a_wrong_key_set_is_caught():
    response_keys = env("LICENSING_E2E_RESPONSE_KEYS", "")
    signed = lv.LicenseClient(URL, SERIAL, license_token=TOKEN, response_keys=response_keys)
    state = signed.validate()
    assert (state.valid, state.status, state.offline) == (True, "ok", False), state

    keyed = lv.LicenseClient(
        URL, SERIAL, api_key=env("LICENSING_E2E_CLIENT_KEY", ""), response_keys=response_keys
    )
    assert keyed.check_revocation() == [lv.RevocationStatus(SERIAL, "active", None)]

    # Keys that did not sign it: the answer is not believed, and nothing was known before.
    other_key = vector_files()["licenses.json"]["keys"]["other-ed25519.pem"]["pem"]
    wrong = lv.LicenseClient(URL, SERIAL, license_token=TOKEN, response_keys=other_key, retries=0)
    state = wrong.validate()
    assert (state.valid, state.status, state.offline) == (False, "unknown", True)
    assert "signature_invalid" in state.detail


def test_a_license_token_reaches_its_own_license_only():
    other_serial, other_id = env("LICENSING_E2E_OTHER_KEY", ""), env("LICENSING_E2E_OTHER_ID", "")
    # License A's token, naming license B.
    client = lv.LicenseClient(
        URL, other_serial, license_token=TOKEN, fingerprint="abuse-machine", license_id=other_id, retries=0
    )
    for state in (client.validate(), client.sync(features_used=["export"])):
        assert (state.valid, state.status, state.offline) == (False, "not_found", False), state
    for call in (client.activate, client.check_in, client.checkout):
        with pytest.raises(lv.LicenseClientError) as raised:
            call()
        assert (raised.value.code, raised.value.status) == ("not_found", 404), call.__name__
    # Nothing happened to license B: no seat, no report counted.
    assert seats(other_id) == []
    time.sleep(1)
    assert syncs_counted(other_id) == 0


def test_a_client_api_key_still_takes_a_seat_without_a_machine_token(tmp_path):
    other_serial, other_id = env("LICENSING_E2E_OTHER_KEY", ""), env("LICENSING_E2E_OTHER_ID", "")
    store = lv.FileStore(tmp_path / "keyed.json")
    client = lv.LicenseClient(
        URL,
        other_serial,
        api_key=env("LICENSING_E2E_CLIENT_KEY", ""),
        fingerprint="keyed-machine",
        hostname="build-02",
        platform="linux-x64",
        components={"cpu": "c1"},
        store=store,
    )
    activation = client.activate()
    assert (activation.license_id, activation.hostname, activation.platform) == (
        other_id,
        "build-02",
        "linux-x64",
    )
    assert store.load_activation().machine_token is None
    assert client.heartbeat().id == activation.id
    assert client.validate().status == "ok"
    client.deactivate()
    assert seats(other_id) == [] and store.load_activation() is None
    assert client.validate().status == "no_activation"


def test_the_readme_walk_through_then_retried_syncs_and_a_revocation(tmp_path, monkeypatch, capsys):
    example = readme_walk_through()
    assert len([line for line in example.splitlines() if line.strip()]) <= 10
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(example, str(README), "exec"), namespace)
    client: lv.LicenseClient = namespace["client"]
    try:
        validated, synced = capsys.readouterr().out.splitlines()
        for printed in (validated, synced):
            assert printed.startswith("LicenseState(valid=True, status='ok', offline=False, checked_at='")

        # The seat is this machine's, with a machine token kept for the next run.
        fingerprint = lv.machine_fingerprint()
        (seat,) = seats(LICENSE_ID)
        assert seat["fingerprint"] == fingerprint and seat["id"] == client.activation.id
        stored = lv.FileStore("licensing.json").load_activation()
        assert stored is not None and stored.machine_token.startswith("mt_")
        assert lv.FileStore("licensing.json").load() == lv.LicenseState.from_dict(
            json.loads(Path("licensing.json").read_text("utf-8"))["state"]
        )

        # The heartbeat thread keeps it: the product's interval is 3 s, so it beats every 1.5 s.
        assert client.heartbeat_running
        wait_for(
            "a beat of the heartbeat thread",
            lambda: seats(LICENSE_ID)[0]["last_heartbeat_at"] != seat["last_heartbeat_at"],
        )
        assert client.heartbeat_error is None

        # Checked in.
        status, license_view = admin("GET", "/v1/licenses/" + LICENSE_ID)
        assert status == 200 and license_view["last_check_in_at"] is not None

        # The checked-out file verifies offline, on this machine only.
        checked_out = Path("license.lic").read_bytes()
        result = lv.verify_license(checked_out, PRODUCT_KEY, fingerprint=fingerprint)
        assert result.valid, result.codes
        assert (result.license.serial, result.license.fingerprint) == (SERIAL, fingerprint)
        assert result.license.expires_at is not None and not result.license.is_file_expired
        assert lv.verify_license(checked_out, PRODUCT_KEY, fingerprint="another-machine").codes == (
            "fingerprint_mismatch",
        )

        # Check-revocation is for API keys: the license token is refused.
        with pytest.raises(lv.LicenseClientError) as raised:
            client.check_revocation()
        assert (raised.value.code, raised.value.status) == ("forbidden", 403)

        # A sync whose answer is lost: sent again with the same report id, under the stored machine
        # token, and counted once.
        relay = Relay(URL)
        try:
            flaky = lv.LicenseClient(
                relay.url,
                SERIAL,
                license_token=TOKEN,
                fingerprint=fingerprint,
                store=lv.FileStore("licensing.json"),
                retry_delay_seconds=0.05,
            )
            relay.lose_sync_answers = 1
            state = flaky.sync(features_used=["export"])
            assert (state.valid, state.status, state.offline) == (True, "ok", False)
        finally:
            relay.close()
        (first, first_credential), (again, again_credential) = relay.syncs
        assert first == again and first["report_id"] == again["report_id"]
        assert (first_credential, again_credential) == ("mt", "mt")
        # Sent once more with that id, on purpose: still one report.
        assert client.sync(report_id=first["report_id"]).valid
        # The walk-through's report and this one.
        wait_for("two reports counted", lambda: syncs_counted(LICENSE_ID) >= 2)
        time.sleep(1.5)
        assert syncs_counted(LICENSE_ID) == 2

        # An admin revokes the license: the next validate and sync say so, and stay so offline.
        status, body = admin("DELETE", "/v1/licenses/" + LICENSE_ID)
        assert status == 200, body
        state = client.validate()
        assert (state.valid, state.status, state.offline, state.grace_until) == (
            False,
            "revoked",
            False,
            None,
        )
        assert client.sync().status == "revoked"
        keyed = lv.LicenseClient(URL, SERIAL, api_key=env("LICENSING_E2E_CLIENT_KEY", ""))
        (revocation,) = keyed.check_revocation()
        assert (revocation.status, revocation.revoked_at is not None) == ("revoked", True)
        with pytest.raises(lv.LicenseClientError) as raised:
            client.checkout()
        assert (raised.value.code, raised.value.status) == ("license_not_active", 422)
        unreachable = lv.LicenseClient(
            "http://127.0.0.1:9", SERIAL, license_token=TOKEN, store=lv.FileStore("licensing.json"), retries=0
        )
        assert (unreachable.validate().status, unreachable.validate().valid) == ("revoked", False)
    finally:
        client.close()
    assert not client.heartbeat_running
