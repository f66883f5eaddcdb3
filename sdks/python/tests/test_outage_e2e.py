"""The heartbeat thread and the grace period through a real outage of the platform.

sdks/python/online.int-spec.ts starts the platform and runs this file with LICENSING_URL,
LICENSING_E2E_ADMIN_KEY and LICENSING_E2E_OUTAGE: two licenses of policies whose seats lapse 6 s
after the last heartbeat, each with a license token (a JSON object, `lapsing` with no heartbeat
grace, `reviving` with a grace of 30 s). The clients reach the platform through a TCP relay that
the test cuts: they get refused and reset connections, as when the service's host goes down.
"""

import json
import logging
import os
import time
from datetime import datetime
from typing import Any, Callable, List
from urllib.parse import urlsplit

import pytest

import licensing_verifier as lv
from tcp_relay import TcpRelay
from test_online_e2e import seats

OUTAGE = os.environ.get("LICENSING_E2E_OUTAGE", "")
MISSING = [name for name in ("LICENSING_URL", "LICENSING_E2E_ADMIN_KEY") if not os.environ.get(name)]
if not OUTAGE:
    MISSING.append("LICENSING_E2E_OUTAGE")

pytestmark = [
    pytest.mark.online,
    pytest.mark.skipif(
        bool(MISSING),
        reason="needs the running platform (sdks/python/online.int-spec.ts): " + ", ".join(MISSING),
    ),
]

# The client's own grace period: short, so that the test sees it run out.
GRACE_SECONDS = 2.0


def wait_for(what: str, check: Callable[[], Any], timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("waited %g s for %s" % (timeout, what))
        time.sleep(0.02)


def seconds_of(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class Machine:
    """One client of one license behind the relay, with what its heartbeat thread reported."""

    def __init__(self, relay: TcpRelay, license: dict, fingerprint: str) -> None:
        self.license = license
        self.failures: List[lv.LicenseClientError] = []
        self.client = lv.LicenseClient(
            relay.url,
            license["serial"],
            license_token=license["token"],
            fingerprint=fingerprint,
            retries=0,
            offline_grace_period_seconds=GRACE_SECONDS,
            on_heartbeat_error=self.failures.append,
        )

    def failed_since(self, count: int) -> bool:
        return len(self.failures) > count


def test_heartbeat_and_grace_through_an_outage(caplog):
    licenses = json.loads(OUTAGE)
    url = urlsplit(os.environ["LICENSING_URL"])
    relay = TcpRelay((url.hostname, url.port))
    lapsing = Machine(relay, licenses["lapsing"], "outage-machine-a")
    reviving = Machine(relay, licenses["reviving"], "outage-machine-b")
    machines = (lapsing, reviving)
    caplog.set_level(logging.WARNING, logger="licensing_verifier")
    try:
        for machine in machines:
            machine.client.activate()
            machine.client.start_heartbeat()
            state = machine.client.validate()
            assert (state.valid, state.status, state.offline) == (True, "ok", False), state

        # A short outage. validate() answers the last-known state, marked offline, within the grace.
        relay.cut()
        state = lapsing.client.validate()
        assert (state.valid, state.status, state.offline) == (True, "ok", True), state
        assert state.grace_until is not None and "unreachable" in state.detail
        # The next beat fails. The failure is kept, logged and handed over; the thread goes on.
        wait_for("a failed beat", lambda: lapsing.failures)
        failure = lapsing.failures[0]
        assert (failure.code, failure.status, failure.offline) == ("network", 0, True)
        assert lapsing.client.heartbeat_error is failure
        assert lapsing.client.heartbeat_running
        assert any("licensing heartbeat failed" in record.getMessage() for record in caplog.records)
        # The service comes back before the seat lapses: the next beat keeps the seat.
        relay.restore()
        beat_before = seats(lapsing.license["id"])[0]["last_heartbeat_at"]
        wait_for("the heartbeat to recover", lambda: lapsing.client.heartbeat_error is None, timeout=5)
        (seat,) = seats(lapsing.license["id"])
        assert seat["id"] == lapsing.client.activation.id and seat["last_heartbeat_at"] != beat_before
        for machine in machines:
            state = machine.client.validate()
            assert (state.valid, state.status, state.offline) == (True, "ok", False), state

        # A long outage: the grace runs out, then both seats lapse.
        relay.cut()
        cut_at = time.time()
        state = reviving.client.validate()
        assert (state.valid, state.offline) == (True, True), state
        wait_for("the end of the grace", lambda: time.time() > cut_at + GRACE_SECONDS + 0.1)
        for machine in machines:
            state = machine.client.validate()
            assert (state.valid, state.status, state.offline) == (False, "ok", True), state
            assert seconds_of(state.grace_until) < time.time()
            assert machine.client.last_known_state().valid is False
        lapse_at = max(seconds_of(machine.client.activation.expires_at) for machine in machines)
        wait_for("both seats to lapse", lambda: time.time() > lapse_at + 0.2, timeout=8)
        # A beat after the lapse failed too; the next one is a second away at least.
        failed = len(reviving.failures)
        wait_for("a failed beat after the lapse", lambda: reviving.failed_since(failed), timeout=3)
        assert all(machine.client.heartbeat_running for machine in machines)
        assert all(failure.code == "network" for machine in machines for failure in machine.failures)

        relay.restore()
        # Within its policy's heartbeat grace, the seat says heartbeat_dead, and a beat revives it.
        state = reviving.client.validate()
        assert (state.valid, state.status, state.offline) == (False, "heartbeat_dead", False), state
        wait_for("the seat to revive", lambda: reviving.client.heartbeat_error is None, timeout=5)
        state = reviving.client.validate()
        assert (state.valid, state.status, state.offline) == (True, "ok", False), state

        # Without a grace, the seat is gone: beats get 404 not_found, and the thread keeps going.
        wait_for("the lapsed seat to be swept", lambda: seats(lapsing.license["id"]) == [])
        refused = lambda: getattr(lapsing.client.heartbeat_error, "status", None) == 404  # noqa: E731
        wait_for("a beat refused", refused, timeout=5)
        assert lapsing.client.heartbeat_error.code == "not_found"
        assert lapsing.client.heartbeat_running
        state = lapsing.client.validate()
        assert (state.valid, state.status, state.offline) == (False, "no_activation", False), state
        # Activating again takes a seat anew.
        lapsing.client.activate()
        state = lapsing.client.validate()
        assert (state.valid, state.status, state.offline) == (True, "ok", False), state
        # The same thread keeps the new seat.
        wait_for("a beat of the new seat", lambda: lapsing.client.heartbeat_error is None, timeout=5)
    finally:
        for machine in machines:
            machine.client.close()
        relay.close()
    assert not any(machine.client.heartbeat_running for machine in machines)
