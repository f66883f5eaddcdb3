"""The online client against a scripted HTTP server on localhost.

Retries, backoff, timeouts, the grace period, signed answers, the machine token and the heartbeat
thread: the failure paths the platform does not produce on demand. test_online_e2e.py runs the
client against the platform itself.
"""

import json
import os
import re
import socket
import stat
import threading
import time
from dataclasses import replace

import pytest

import licensing_verifier as lv
from licensing_verifier._client import _retry_after
from stub_server import DROP, HANG, RESPONSE_KEYS, Answer, StubServer
from vectors import vector_files

SEAT = {
    "id": "0190a5b4-1c2d-7e8f-9a0b-1c2d3e4f5a6b",
    "license_id": "0190a5b4-0000-7e8f-9a0b-1c2d3e4f5a6b",
    "fingerprint": "machine-a",
    "hostname": None,
    "platform": None,
    "components": None,
    "created_at": "2026-01-01T00:00:00.000Z",
    "last_heartbeat_at": None,
    "expires_at": None,
}
RESULTS = {"results": [{"serial": "LIC-1", "status": "active", "revoked_at": None}]}
VALID = {"valid": True, "code": "VALID", "detail": "License is valid", "license": None, "activation": None}
SYNCED = {"status": "ok", "message": "License is valid", "server_time": "2026-01-01T00:00:00.000Z"}
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
DAY = 86_400


@pytest.fixture
def stub():
    server = StubServer()
    yield server
    server.close()


def client_for(stub, **options):
    settings = dict(api_key="lk_test", retry_delay_seconds=0.05)
    settings.update(options)
    if "license_token" in options:
        settings.pop("api_key")
    return lv.LicenseClient(stub.url, "LIC-1", **settings)


class MemoryStore:
    """Keeps what the client saves, as a file would."""

    def __init__(self, state=None, activation=None):
        self.states = [] if state is None else [state]
        self.activations = [] if activation is None else [activation]

    def load(self):
        return self.states[-1] if self.states else None

    def save(self, state):
        self.states.append(state)

    def load_activation(self):
        return self.activations[-1] if self.activations else None

    def save_activation(self, stored):
        self.activations.append(stored)


def gaps(stub):
    return [b.at - a.at for a, b in zip(stub.seen, stub.seen[1:])]


# Retries, backoff and timeouts.


def test_retries_a_5xx_with_a_growing_backoff_and_answers_the_first_success(stub):
    stub.script = [Answer(503), Answer(502), Answer(200, RESULTS)]
    assert client_for(stub).check_revocation() == [lv.RevocationStatus("LIC-1", "active", None)]
    assert len(stub.seen) == 3
    # Backoffs of 25 to 50 ms, then 50 to 100 ms: half fixed, half jitter.
    first, second = gaps(stub)
    assert 0.02 <= first < 0.5
    assert 0.045 <= second < 0.6


def test_never_retries_a_refusal_and_reports_its_problem_code(stub):
    stub.script = [Answer(403, {"code": "forbidden", "detail": "This API key may not"})]
    with pytest.raises(lv.LicenseClientError) as raised:
        client_for(stub).check_revocation()
    error = raised.value
    assert (error.code, error.status, error.message, error.offline) == (
        "forbidden",
        403,
        "This API key may not",
        False,
    )
    assert str(error) == "This API key may not"
    assert len(stub.seen) == 1


def test_a_problem_without_a_code_is_named_by_its_status(stub):
    stub.script = [Answer(418, {"title": "I'm a teapot"})]
    with pytest.raises(lv.LicenseClientError) as raised:
        client_for(stub).check_revocation()
    assert (raised.value.code, raised.value.message) == ("http_418", "I'm a teapot")


def test_waits_as_long_as_a_429s_retry_after_says(stub):
    stub.script = [
        Answer(429, {"code": "rate_limited"}, headers={"Retry-After": "1"}),
        Answer(200, RESULTS),
    ]
    assert client_for(stub).check_revocation()[0].status == "active"
    assert gaps(stub)[0] >= 0.95


def test_reads_retry_after_as_seconds_and_caps_it():
    assert _retry_after("2") == 2.0
    assert _retry_after(" 0.5 ") == 0.5
    assert _retry_after("3600") == 30.0
    for unreadable in (None, "", " ", "-1", "soon", "inf", "nan", "Wed, 21 Oct 2026 07:28:00 GMT"):
        assert _retry_after(unreadable) is None


def test_gives_up_after_the_configured_retries_with_the_last_failure(stub):
    stub.script = [Answer(503), Answer(503), Answer(504, {"code": "bus_timeout"})]
    with pytest.raises(lv.LicenseClientError) as raised:
        client_for(stub, retries=2).check_revocation()
    assert (raised.value.status, raised.value.code, raised.value.offline) == (504, "bus_timeout", True)
    assert len(stub.seen) == 3


def test_times_out_an_attempt_that_gets_no_answer(stub):
    stub.script = [HANG]
    started = time.monotonic()
    with pytest.raises(lv.LicenseClientError) as raised:
        client_for(stub, retries=0, timeout_seconds=0.2).check_revocation()
    elapsed = time.monotonic() - started
    assert (raised.value.code, raised.value.status, raised.value.offline) == ("timeout", 0, True)
    assert 0.19 <= elapsed < 2


def test_the_timeout_bounds_the_whole_answer_not_each_read(stub):
    # A byte every 100 ms: each read is quick, the whole answer would take seconds.
    stub.script = [Answer(200, RESULTS, drip=0.1)]
    started = time.monotonic()
    with pytest.raises(lv.LicenseClientError) as raised:
        client_for(stub, retries=0, timeout_seconds=0.5).check_revocation()
    assert raised.value.code == "timeout"
    assert time.monotonic() - started < 1.5


def test_an_unreachable_service_is_a_network_failure_and_is_retried():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
    client = lv.LicenseClient(
        "http://127.0.0.1:%d/" % port, "LIC-1", api_key="lk_test", retries=1, retry_delay_seconds=0.01
    )
    with pytest.raises(lv.LicenseClientError) as raised:
        client.check_revocation()
    assert (raised.value.code, raised.value.status, raised.value.offline) == ("network", 0, True)
    assert "unreachable" in raised.value.message


def test_a_connection_closed_without_an_answer_is_retried(stub):
    stub.script = [DROP, Answer(200, RESULTS)]
    assert client_for(stub).check_revocation()[0].serial == "LIC-1"
    assert len(stub.seen) == 2


def test_an_answer_that_is_not_the_routes_counts_as_no_answer(stub):
    stub.script = [Answer(200, {"unexpected": True})]
    state = client_for(stub, retries=0).validate()
    assert (state.valid, state.status, state.offline) == (False, "unknown", True)
    assert "code" in state.detail


# Credentials and the machine token.


def test_needs_exactly_one_of_license_token_and_api_key(stub):
    with pytest.raises(lv.InvalidOptionError, match="either license_token or api_key"):
        lv.LicenseClient(stub.url, "LIC-1")
    with pytest.raises(lv.InvalidOptionError):
        lv.LicenseClient(stub.url, "LIC-1", api_key="lk_a", license_token="lt_b")
    with pytest.raises(lv.InvalidOptionError):
        lv.LicenseClient(stub.url, "", license_token="lt_b")
    with pytest.raises(lv.InvalidOptionError):
        lv.LicenseClient(stub.url, "LIC-1", license_token="lt_b", timeout_seconds=0)
    with pytest.raises(lv.InvalidOptionError):
        lv.LicenseClient(stub.url, "LIC-1", license_token="lt_b", retries=-1)
    with pytest.raises(lv.InvalidPublicKeyError):
        lv.LicenseClient(stub.url, "LIC-1", license_token="lt_b", product_key="not a key")
    assert lv.LicenseClient(stub.url, "LIC-1", license_token="lt_b").license_key == "LIC-1"


def test_keeps_the_machine_token_uses_it_for_the_seat_and_never_shows_it(stub):
    store = MemoryStore()
    client = client_for(stub, license_token="lt_license", fingerprint="machine-a", store=store)
    license_view = {
        "id": SEAT["license_id"],
        "serial": "LIC-1",
        "last_check_in_at": "2026-01-01T00:00:00.000Z",
    }
    stub.script = [
        Answer(201, {**SEAT, "machine_token": "mt_first"}),
        Answer(200, SEAT),
        Answer(200, VALID),
        Answer(200, SYNCED),
        Answer(200, license_view),
        Answer(200, {"message": "deleted"}),
    ]
    activation = client.activate()
    assert activation == lv.Activation.from_dict(SEAT)
    assert store.activations == [lv.StoredActivation("LIC-1", activation, "mt_first")]
    assert "mt_first" not in repr(client) + repr(store.activations[-1]) + str(client)

    client.heartbeat()
    assert client.validate().status == "ok"
    assert client.sync().status == "ok"
    assert client.check_in()["last_check_in_at"] == "2026-01-01T00:00:00.000Z"
    client.deactivate()
    assert stub.lines() == [
        "POST /v1/activations lt_license",
        "POST /v1/activations/%s/heartbeat mt_first" % SEAT["id"],
        "POST /v1/licenses/validate mt_first",
        "POST /v1/licenses/sync mt_first",
        # Check-in is the license's: the machine token may not.
        "POST /v1/licenses/%s/check-in lt_license" % SEAT["license_id"],
        "DELETE /v1/activations/%s mt_first" % SEAT["id"],
    ]
    assert stub.seen[0].body == {"license_key": "LIC-1", "fingerprint": "machine-a"}
    assert store.activations[-1] is None
    assert client.activation is None


def test_activate_sends_the_machines_hostname_platform_and_components(stub):
    client = client_for(
        stub,
        fingerprint="machine-a",
        hostname="build-01",
        platform="linux-x64",
        components={"cpu": "c1", "disk": "d1"},
    )
    stub.script = [Answer(201, SEAT), Answer(200, VALID)]
    client.activate()
    client.validate()
    assert stub.seen[0].body == {
        "license_key": "LIC-1",
        "fingerprint": "machine-a",
        "hostname": "build-01",
        "platform": "linux-x64",
        "components": {"cpu": "c1", "disk": "d1"},
    }
    # An API key gets no machine token: the seat's calls go with the key.
    assert stub.seen[1].credential == "lk_test"
    assert stub.seen[1].body == {
        "key": "LIC-1",
        "fingerprint": "machine-a",
        "components": {"cpu": "c1", "disk": "d1"},
    }


def test_drops_a_machine_token_refused_401_and_asks_again_with_the_license_token(stub):
    store = MemoryStore()
    client = client_for(stub, license_token="lt_license", fingerprint="machine-a", store=store)
    gone = Answer(404, {"code": "not_found", "detail": "Activation not found"})
    stub.script = [
        Answer(201, {**SEAT, "machine_token": "mt_first"}),
        Answer(401, {"code": "unauthorized"}),
        gone,
        gone,
    ]
    client.activate()
    for _ in range(2):
        with pytest.raises(lv.LicenseClientError) as raised:
            client.heartbeat()
        assert (raised.value.code, raised.value.status) == ("not_found", 404)
    assert [seen.credential for seen in stub.seen] == ["lt_license", "mt_first", "lt_license", "lt_license"]
    assert store.activations[-1] == lv.StoredActivation("LIC-1", lv.Activation.from_dict(SEAT), None)


def test_takes_the_stored_seat_after_a_restart_when_it_is_this_machines(stub):
    seat = lv.Activation.from_dict(SEAT)
    stored = lv.StoredActivation("LIC-1", seat, "mt_stored")
    stub.script = [Answer(200, SEAT)]
    restarted = client_for(
        stub, license_token="lt_license", fingerprint="machine-a", store=MemoryStore(None, stored)
    )
    assert restarted.heartbeat() == seat
    assert [seen.credential for seen in stub.seen] == ["mt_stored"]

    elsewhere = replace(stored, activation=replace(seat, fingerprint="machine-b"))
    other = client_for(
        stub, license_token="lt_license", fingerprint="machine-a", store=MemoryStore(None, elsewhere)
    )
    with pytest.raises(lv.NotActivatedError, match="activate"):
        other.heartbeat()
    another = replace(stored, license_key="LIC-2")
    with pytest.raises(lv.NotActivatedError):
        client_for(
            stub, license_token="lt_l", fingerprint="machine-a", store=MemoryStore(None, another)
        ).deactivate()
    # A store that keeps JSON (dicts) works too.
    as_json = MemoryStore(None, json.loads(json.dumps(stored.to_dict())))
    stub.script = [Answer(200, SEAT)]
    client_for(stub, license_token="lt_license", fingerprint="machine-a", store=as_json).heartbeat()
    assert [seen.credential for seen in stub.seen] == ["mt_stored", "mt_stored"]


# The last-known state and the grace period.


def test_rides_out_an_outage_on_the_last_known_state_for_the_grace_period_and_no_longer(stub):
    clock = [1_800_000_000.0]
    store = MemoryStore()
    client = client_for(
        stub, retries=0, offline_grace_period_seconds=3 * DAY, store=store, now=lambda: clock[0]
    )
    stub.script = [Answer(200, SYNCED)]
    online = client.sync(features_used=["export"])
    assert online == lv.LicenseState(
        valid=True,
        status="ok",
        offline=False,
        checked_at="2027-01-15T08:00:00.000Z",
        grace_until="2027-01-18T08:00:00.000Z",
        detail="License is valid",
    )
    assert store.states == [online]

    stub.fallback = DROP
    clock[0] += 2 * DAY
    offline = client.sync()
    assert (offline.valid, offline.status, offline.offline) == (True, "ok", True)
    assert (offline.checked_at, offline.grace_until) == (online.checked_at, online.grace_until)
    assert "unreachable" in offline.detail
    assert client.last_known_state().valid

    clock[0] += DAY + 1
    late = client.validate()
    assert (late.valid, late.status, late.offline) == (False, "ok", True)

    # Another run of the application, still offline, starts from the stored state.
    clock[0] = 1_800_000_000.0 + DAY
    restarted = client_for(
        stub, retries=0, offline_grace_period_seconds=3 * DAY, store=store, now=lambda: clock[0]
    )
    assert restarted.validate().valid
    # With nothing known, an offline application is not licensed.
    unknown = client_for(stub, retries=0).sync()
    assert (unknown.valid, unknown.status, unknown.offline, unknown.checked_at) == (
        False,
        "unknown",
        True,
        None,
    )
    with pytest.raises(lv.LicenseClientError) as raised:
        client_for(stub, retries=0, fingerprint="machine-a").activate()
    assert (raised.value.code, raised.value.status) == ("network", 0)


def test_learns_of_a_revocation_and_an_outage_after_it_does_not_bring_the_license_back(stub):
    client = client_for(stub, retries=0)
    stub.script = [
        Answer(200, SYNCED),
        Answer(200, {**SYNCED, "status": "revoked", "message": "License has been revoked"}),
    ]
    assert client.sync().valid
    revoked = client.sync()
    assert (revoked.valid, revoked.status, revoked.offline, revoked.grace_until) == (
        False,
        "revoked",
        False,
        None,
    )
    stub.fallback = Answer(503, {"code": "unavailable"})
    after = client.sync()
    assert (after.valid, after.status, after.offline) == (False, "revoked", True)


def test_throws_a_refusal_from_validate_and_sync_instead_of_riding_on_the_last_state(stub):
    client = client_for(stub, retries=0)
    stub.script = [Answer(200, VALID), Answer(401, {"code": "unauthorized", "detail": "Invalid API key"})]
    client.validate()
    with pytest.raises(lv.LicenseClientError) as raised:
        client.validate()
    assert (raised.value.code, raised.value.offline) == ("unauthorized", False)


@pytest.mark.parametrize(
    "code, status",
    [
        ("VALID", "ok"),
        ("REVOKED", "revoked"),
        ("SUSPENDED", "suspended"),
        ("EXPIRED", "expired"),
        ("NOT_FOUND", "not_found"),
        ("FINGERPRINT_MISMATCH", "fingerprint_mismatch"),
        ("NO_ACTIVATION", "no_activation"),
        ("HEARTBEAT_DEAD", "heartbeat_dead"),
        ("COMPONENTS_MISMATCH", "components_mismatch"),
        ("OVERDUE", "overdue"),
        ("ENTITLEMENTS_MISSING", "entitlements_missing"),
        # More machines than seats, which the policy allows: the application runs.
        ("OVERAGE", "overage"),
        # As the JavaScript SDK reads them: codes outside its vocabulary are `unknown`.
        ("SOMETHING_NEW", "unknown"),
        # A relay client's state, never the service's code.
        ("NO_SEATS", "unknown"),
    ],
)
def test_validate_codes_in_one_vocabulary(stub, code, status):
    runs = status in ("ok", "overage")
    stub.script = [Answer(200, {**VALID, "valid": runs, "code": code})]
    state = client_for(stub).validate()
    assert (state.status, state.valid, state.grace_until is not None) == (status, runs, runs)
    assert state.status in lv.STATUS_CODES


@pytest.mark.parametrize("status", ["ok", "revoked", "suspended", "expired", "not_found"])
def test_sync_statuses_in_the_same_vocabulary(stub, status):
    stub.script = [Answer(200, {**SYNCED, "status": status})]
    state = client_for(stub).sync()
    assert (state.status, state.valid) == (status, status == "ok")


# Sync reports.


def test_sync_sends_one_report_id_on_every_retry_and_a_new_one_per_report(stub):
    client = client_for(stub, retries=2, fingerprint="machine-a", app_version="2.4.1")
    stub.script = [Answer(503), DROP, Answer(200, SYNCED), Answer(200, SYNCED)]
    assert client.sync(features_used=("export", "pro"), seats_in_use=2).valid
    first = [seen.body for seen in stub.seen]
    assert len(first) == 3
    assert first[0] == {
        "license_serial": "LIC-1",
        "hardware_fingerprint": "machine-a",
        "app_version": "2.4.1",
        "features_used": ["export", "pro"],
        "seats_in_use": 2,
        "report_id": first[0]["report_id"],
    }
    assert all(body == first[0] for body in first)
    assert UUID7.match(first[0]["report_id"])
    client.sync()
    assert stub.seen[-1].body["report_id"] != first[0]["report_id"]


def test_sync_takes_a_report_id_of_the_application(stub):
    stub.script = [Answer(200, SYNCED)]
    client_for(stub).sync(report_id="0190a5b4-1c2d-7e8f-9a0b-1c2d3e4f5a6b")
    assert stub.seen[0].body["report_id"] == "0190a5b4-1c2d-7e8f-9a0b-1c2d3e4f5a6b"


def test_time_ordered_uuids_are_version_7_and_grow_with_time():
    ids = [lv.time_ordered_uuid(now) for now in (1_700_000_000, 1_700_000_000.001, 1_800_000_000)]
    assert all(UUID7.match(value) for value in ids)
    assert ids == sorted(ids)
    assert ids[2].startswith("01a3185c-5000")
    assert lv.time_ordered_uuid() != lv.time_ordered_uuid()


# Signed answers.


def test_asks_for_signed_answers_and_checks_them(stub):
    client = client_for(stub, response_keys=RESPONSE_KEYS)
    stub.script = [
        Answer(200, VALID, sign=True),
        Answer(503),
        Answer(200, SYNCED, sign=True),
        Answer(200, RESULTS, sign=True),
    ]
    assert client.validate().valid
    assert client.sync().valid
    assert client.check_revocation()[0].status == "active"
    nonces = [seen.headers.get("licensing-nonce") for seen in stub.seen]
    assert all(nonce and re.fullmatch(r"[A-Za-z0-9._~+/=-]{8,128}", nonce) for nonce in nonces)
    # A fresh nonce for every attempt, retries included.
    assert len(set(nonces)) == 4


def test_without_response_keys_no_signature_is_asked_for(stub):
    stub.script = [Answer(200, VALID)]
    client_for(stub).validate()
    assert "licensing-nonce" not in stub.seen[0].headers


def test_takes_the_response_keys_as_json_text(stub):
    stub.script = [Answer(200, VALID, sign=True)]
    assert client_for(stub, response_keys=json.dumps(RESPONSE_KEYS)).validate().valid


@pytest.mark.parametrize(
    "answer, code",
    [
        (Answer(200, VALID), "unsigned"),
        (Answer(200, VALID, sign=True, nonce="another-request-nonce"), "nonce_mismatch"),
        (Answer(200, {**VALID, "code": "REVOKED"}, signed_body=VALID), "signature_invalid"),
    ],
)
def test_an_answer_whose_signature_fails_counts_as_no_answer(stub, answer, code):
    client = client_for(stub, retries=0, response_keys=RESPONSE_KEYS)
    stub.script = [Answer(200, VALID, sign=True), answer]
    assert client.validate().valid
    # Whatever the forged answer says, the client keeps to what it knew, within the grace period.
    state = client.validate()
    assert (state.valid, state.status, state.offline) == (True, "ok", True)
    assert code in state.detail

    stub.script = [answer]
    with pytest.raises(lv.LicenseClientError) as raised:
        client.check_revocation()
    assert (raised.value.code, raised.value.codes, raised.value.offline) == (
        "unverified_answer",
        (code,),
        True,
    )


def test_an_unverified_answer_is_retried_with_a_new_nonce(stub):
    stub.script = [Answer(200, VALID), Answer(200, VALID, sign=True)]
    assert client_for(stub, retries=1, response_keys=RESPONSE_KEYS).validate().valid
    assert len(stub.seen) == 2


def test_a_signature_too_old_for_the_clock_is_refused(stub):
    client = client_for(stub, retries=0, response_keys=RESPONSE_KEYS, now=lambda: time.time() + 3600)
    stub.script = [Answer(200, VALID, sign=True)]
    state = client.validate()
    assert (state.valid, state.offline) == (False, True)
    assert "too_old" in state.detail


# The heartbeat thread.


def heartbeats(stub):
    return [seen for seen in stub.seen if seen.path.endswith("/heartbeat")]


def test_the_heartbeat_thread_beats_every_interval_and_stops_cleanly(stub):
    client = client_for(stub, fingerprint="machine-a", heartbeat_interval_seconds=0.1)
    stub.script = [Answer(201, SEAT)]
    stub.fallback = Answer(200, SEAT)
    client.activate()
    with client:
        client.start_heartbeat()
        assert client.heartbeat_running
        (thread,) = [t for t in threading.enumerate() if t.name == "licensing-heartbeat"]
        assert thread.daemon
        time.sleep(0.65)
    # Leaving the block stopped it: no beat starts after close() returns.
    assert not client.heartbeat_running and not thread.is_alive()
    count = len(heartbeats(stub))
    assert 3 <= count <= 7
    time.sleep(0.3)
    assert len(heartbeats(stub)) == count
    assert client.heartbeat_error is None
    assert all(0.08 <= gap for gap in gaps(stub)[1:])


def test_the_heartbeat_thread_beats_at_half_the_seats_remaining_lifetime(stub):
    def seat_for_three_seconds(_seen=None):
        expires = time.time() + 3
        return Answer(200, {**SEAT, "expires_at": lv._time.iso_from_seconds(expires)})

    client = client_for(stub, fingerprint="machine-a")
    stub.script = [lambda seen: replace(seat_for_three_seconds(), status=201)]
    stub.fallback = seat_for_three_seconds
    client.activate()
    started = time.monotonic()
    client.start_heartbeat()
    try:
        deadline = time.monotonic() + 5
        while len(heartbeats(stub)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        client.stop_heartbeat()
    first, second = heartbeats(stub)[:2]
    assert 1.3 <= first.at - started < 2.5
    assert 1.3 <= second.at - first.at < 2.5


def test_the_heartbeat_thread_reports_failures_and_clears_them_once_a_beat_succeeds(stub):
    reported = []

    def on_error(error):
        reported.append(error)
        raise RuntimeError("a broken callback must not stop the thread")

    client = client_for(
        stub, fingerprint="machine-a", heartbeat_interval_seconds=0.05, retries=0, on_heartbeat_error=on_error
    )
    stub.script = [Answer(201, SEAT)]
    stub.fallback = Answer(404, {"code": "not_found", "detail": "Activation not found"})
    client.activate()
    client.start_heartbeat()
    try:
        deadline = time.monotonic() + 5
        while len(reported) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert client.heartbeat_error is not None
        assert (client.heartbeat_error.code, client.heartbeat_error.status) == ("not_found", 404)
        assert all(error.code == "not_found" for error in reported)
        stub.fallback = Answer(200, SEAT)
        deadline = time.monotonic() + 5
        while client.heartbeat_error is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert client.heartbeat_error is None
        assert client.heartbeat_running
    finally:
        client.stop_heartbeat()


def test_deactivate_stops_the_heartbeat_before_it_frees_the_seat(stub):
    client = client_for(stub, fingerprint="machine-a", heartbeat_interval_seconds=0.05)
    stub.script = [Answer(201, SEAT)]
    stub.fallback = lambda seen: Answer(200, {"message": "deleted"} if seen.method == "DELETE" else SEAT)
    client.activate()
    client.start_heartbeat()
    time.sleep(0.2)
    client.deactivate()
    assert not client.heartbeat_running
    time.sleep(0.2)
    assert stub.seen[-1].method == "DELETE"
    with pytest.raises(lv.NotActivatedError):
        client.start_heartbeat()


# Check-in and checkout.


def checkout_vector(vector_id):
    file = vector_files()["checkouts.json"]
    vector = next(v for v in file["vectors"] if v["id"] == vector_id)
    return vector, file["keys"][vector["key"]]["pem"]


def checkout_answer(text):
    return Answer(
        200,
        {
            "license_blob": lv.license_blob_of(text),
            "issued_at": "2027-02-28T12:00:00.000Z",
            "expires_at": "2027-03-07T12:00:00.000Z",
        },
    )


def test_checks_out_the_seats_file_and_verifies_it_with_the_product_key(stub, tmp_path):
    vector, pem = checkout_vector("machine/fingerprint-match")
    fingerprint = vector["options"]["fingerprint"]
    client = client_for(
        stub,
        license_token="lt_license",
        fingerprint=fingerprint,
        product_key=pem,
        now=lambda: vector["options"]["now"],
    )
    stub.script = [
        Answer(201, {**SEAT, "fingerprint": fingerprint, "machine_token": "mt_seat"}),
        checkout_answer(vector["input"]["text"]),
    ]
    client.activate()
    checked_out = client.checkout(ttl_seconds=7 * DAY)
    assert checked_out.verified
    assert checked_out.license.fingerprint == fingerprint
    assert checked_out.file == vector["input"]["text"].encode("ascii")
    checked_out.save(tmp_path / "license.lic")
    assert (tmp_path / "license.lic").read_bytes() == checked_out.file
    assert lv.verify_license(
        checked_out.file, pem, fingerprint=fingerprint, now=vector["options"]["now"]
    ).valid
    assert stub.lines()[-1] == "POST /v1/activations/%s/checkout mt_seat" % SEAT["id"]
    assert stub.seen[-1].body == {"ttl_seconds": 7 * DAY}


@pytest.mark.parametrize(
    "vector_id, key, fingerprint, code",
    [
        ("machine/fingerprint-match", "other-ed25519.pem", None, "signature_invalid"),
        ("machine/fingerprint-match", None, "another-machine", "fingerprint_mismatch"),
        ("ed25519/file-expired", None, None, "file_expired"),
    ],
)
def test_refuses_a_checked_out_file_that_does_not_verify(stub, vector_id, key, fingerprint, code):
    vector, pem = checkout_vector(vector_id)
    if key is not None:
        pem = vector_files()["licenses.json"]["keys"][key]["pem"]
    client = client_for(
        stub,
        license_id=SEAT["license_id"],
        fingerprint=fingerprint or vector["options"].get("fingerprint"),
        product_key=pem,
        now=lambda: vector["options"]["now"] + 61,
        clock_tolerance_seconds=60,
    )
    stub.script = [checkout_answer(vector["input"]["text"])]
    with pytest.raises(lv.LicenseClientError) as raised:
        client.checkout()
    assert (raised.value.code, raised.value.offline) == ("invalid_license_file", False)
    assert code in raised.value.codes


def test_checks_out_the_licenses_file_without_a_seat_given_its_id(stub):
    vector, _ = checkout_vector("ed25519/valid")
    client = client_for(stub, license_token="lt_license")
    with pytest.raises(lv.NotActivatedError, match="license_id"):
        client.checkout()
    with pytest.raises(lv.NotActivatedError, match="license_id"):
        client.check_in()
    assert stub.seen == []

    client = client_for(stub, license_token="lt_license", license_id=SEAT["license_id"])
    stub.script = [
        checkout_answer(vector["input"]["text"]),
        Answer(200, {"id": SEAT["license_id"], "last_check_in_at": None}),
    ]
    checked_out = client.checkout()
    # Without a product key the file is only decoded.
    assert not checked_out.verified and checked_out.license.serial == "LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC"
    client.check_in()
    assert stub.lines() == [
        "POST /v1/licenses/%s/checkout lt_license" % SEAT["license_id"],
        "POST /v1/licenses/%s/check-in lt_license" % SEAT["license_id"],
    ]
    assert stub.seen[0].body == {}


# Keeping state in a file, and the machine's fingerprint.


def test_a_file_store_keeps_the_state_and_the_seat_for_the_next_run(stub, tmp_path):
    path = tmp_path / "state" / "licensing.json"
    stub.script = [Answer(201, {**SEAT, "machine_token": "mt_kept"}), Answer(200, VALID)]
    client = client_for(stub, license_token="lt_license", fingerprint="machine-a", store=lv.FileStore(path))
    client.activate()
    state = client.validate()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text("utf-8"))["state"] == state.to_dict()
    assert "mt_kept" not in repr(lv.FileStore(path))

    restarted = client_for(
        stub, license_token="lt_license", fingerprint="machine-a", store=lv.FileStore(path), retries=0
    )
    stub.fallback = DROP
    assert restarted.last_known_state().valid
    stub.script = [Answer(200, SEAT)]
    restarted.heartbeat()
    assert stub.seen[-1].credential == "mt_kept"

    path.write_text("{ not json", "utf-8")
    assert lv.FileStore(path).load() is None and lv.FileStore(path).load_activation() is None


def test_a_license_state_round_trips_through_json():
    state = lv.LicenseState(True, "ok", False, "2027-01-15T08:00:00.000Z", "2027-01-22T08:00:00.000Z", None)
    assert lv.LicenseState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    assert lv.LicenseState.from_dict({"status": "ok"}) is None
    assert lv.LicenseState.from_dict("ok") is None


def test_the_machine_fingerprint_is_stable_hex_and_salted():
    try:
        first = lv.machine_fingerprint()
    except lv.NoMachineIdError:
        pytest.skip("this system has no machine id")
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert lv.machine_fingerprint() == first
    assert lv.machine_fingerprint(salt="photo-editor") != first
