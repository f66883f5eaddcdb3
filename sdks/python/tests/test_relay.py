"""RelayClient against a scripted relay on localhost.

The relay file is signed here with a conformance product key. It names the stub's signing key as
the relay's key, so the stub's signed answers verify. test_relay_e2e.py runs the client against a
real relay process.
"""

import base64
import json
import logging
import socket
import threading
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import load_pem_private_key

import licensing_verifier as lv
from stub_server import CONFORMANCE, HANG, Answer, StubServer, b64url
from vectors import vector_files

_CHECKOUTS = vector_files()["checkouts.json"]
_VECTOR = next(v for v in _CHECKOUTS["vectors"] if v["id"] == "ed25519/valid")
PRODUCT_KEY = _CHECKOUTS["keys"]["product-ed25519.pem"]["pem"]
_PRODUCT_PRIVATE = load_pem_private_key((CONFORMANCE / "keys" / "product-ed25519.pem").read_bytes(), None)
_RESPONSE_PRIVATE = load_pem_private_key((CONFORMANCE / "keys" / "response-ed25519.pem").read_bytes(), None)
#: The relay's key: the stub signs its answers with the private half.
RELAY_KEY = (
    _RESPONSE_PRIVATE.public_key()
    .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    .decode("ascii")
)
DAY = 86_400
LEASE_ID = "lease/1"


def relay_file(exp_in: float = 30 * DAY) -> str:
    """A relay file as the platform issues it: base64 of a checkout JWS with a `relay` claim."""
    header_b64, payload_b64, _ = _VECTOR["input"]["text"].split(".")
    header = json.loads(base64.urlsafe_b64decode(header_b64 + "=="))
    claims = json.loads(base64.urlsafe_b64decode(payload_b64 + "=" * (-len(payload_b64) % 4)))
    now = int(time.time())
    claims.update(
        iat=now,
        nbf=now - DAY,
        exp=now + int(exp_in),
        valid_from=lv._time.iso_from_seconds(now - DAY),
        valid_until=lv._time.iso_from_seconds(now + 365 * DAY),
        relay={"id": "relay-1", "site": "plant4", "public_key": RELAY_KEY},
    )
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    signature = _PRODUCT_PRIVATE.sign(signing_input.encode("ascii"))
    return base64.b64encode((signing_input + "." + b64url(signature)).encode("ascii")).decode("ascii")


def status_answer(file=None, **members) -> Answer:
    body = {
        "site": "plant4",
        "seats": 2,
        "seats_in_use": 1,
        "lease_seconds": 60,
        "file_expires_at": "2030-01-01T00:00:00.000Z",
        "expired": False,
        "revoked": False,
        "clock_rewound": False,
        "relay_file": relay_file() if file is None else file,
        **members,
    }
    return Answer(200, body, sign=True)


def lease_answer(expires_in: float = 60, status: int = 200) -> Answer:
    now = time.time()
    body = {
        "id": LEASE_ID,
        "fingerprint": "machine-a",
        "name": "bench",
        "leased_at": lv._time.iso_from_seconds(now),
        "last_heartbeat_at": lv._time.iso_from_seconds(now),
        "expires_at": lv._time.iso_from_seconds(now + expires_in),
    }
    return Answer(status, body, sign=True)


@pytest.fixture
def stub():
    server = StubServer()
    yield server
    server.close()


def relay_for(stub, **options) -> lv.RelayClient:
    return lv.RelayClient(stub.url, PRODUCT_KEY, "machine-a", **options)


def refusal(call) -> lv.LicenseClientError:
    with pytest.raises(lv.LicenseClientError) as raised:
        call()
    return raised.value


def leased(stub, **options) -> lv.RelayClient:
    relay = relay_for(stub, **options)
    stub.script = [status_answer(), lease_answer(status=201)]
    relay.activate()
    return relay


# The relay file and the answers' signatures.


def test_status_verifies_the_relay_file_and_the_answers_signature(stub):
    stub.script = [status_answer()]
    status = relay_for(stub).status()
    assert (status.site, status.seats, status.seats_in_use, status.lease_seconds) == ("plant4", 2, 1, 60)
    assert (status.expired, status.revoked, status.clock_rewound) == (False, False, False)
    assert status.serial == status.license.serial
    (seen,) = stub.seen
    assert (seen.method, seen.path) == ("GET", "/v1/status")
    assert seen.headers["accept"] == "application/json"
    assert len(seen.headers["licensing-nonce"]) == 24
    assert "authorization" not in seen.headers and "content-type" not in seen.headers


def test_refuses_a_relay_file_that_does_not_hold(stub):
    stub.script = [Answer(200, {"site": "plant4"}, sign=True)]
    assert refusal(relay_for(stub).status).code == "relay_file_invalid"
    stub.script = [status_answer(relay_file()[:-8] + "AAAAAAA=")]
    assert refusal(relay_for(stub).status).code == "relay_file_invalid"
    stub.script = [status_answer()]
    assert refusal(relay_for(stub, product_id="another").status).code == "product_mismatch"
    stub.script = [status_answer(relay_file(exp_in=-60))]
    error = refusal(relay_for(stub).status)
    assert (error.code, error.codes) == ("relay_file_expired", ("file_expired",))


def test_refuses_a_status_the_relay_did_not_sign_for_this_request(stub):
    stub.script = [Answer(200, status_answer().body, sign=True, nonce="another-nonce")]
    error = refusal(relay_for(stub).status)
    assert (error.code, error.status) == ("unverified_answer", 200)
    assert error.message.startswith("the answer is not signed by the relay for this request (")
    assert error.message.endswith("): it counts as no answer")
    assert "nonce_mismatch" in error.codes


# The lease.


def test_leases_renews_and_releases_with_signed_answers(stub):
    relay = leased(stub, name="bench")
    assert relay.lease is not None and relay.lease.id == LEASE_ID and relay.lease.name == "bench"
    assert stub.seen[1].body == {"fingerprint": "machine-a", "name": "bench"}
    assert stub.seen[1].headers["content-type"] == "application/json"
    stub.script = [lease_answer(expires_in=120)]
    assert relay.heartbeat().expires_at == relay.lease.expires_at
    stub.script = [Answer(200, None, sign=True)]
    relay.deactivate()
    assert relay.lease is None
    # The relay is proven once; the lease id is one path segment.
    assert [(seen.method, seen.path) for seen in stub.seen] == [
        ("GET", "/v1/status"),
        ("POST", "/v1/leases"),
        ("POST", "/v1/leases/lease%2F1/heartbeat"),
        ("DELETE", "/v1/leases/lease%2F1"),
    ]
    assert refusal(relay.heartbeat).code == "not_activated"
    assert refusal(relay.start_heartbeat).code == "not_activated"


def test_refuses_a_lease_answer_changed_on_the_way(stub):
    relay = relay_for(stub)
    stub.script = [status_answer(), Answer(201, lease_answer().body, signed_body={"id": "other"})]
    error = refusal(relay.activate)
    assert (error.code, error.status) == ("unverified_answer", 201)
    assert relay.lease is None


def test_an_answer_that_is_not_a_lease_is_an_invalid_answer(stub):
    relay = relay_for(stub)
    stub.script = [status_answer(), Answer(201, [1, 2], sign=True)]
    error = refusal(relay.activate)
    assert (error.code, error.status, error.message) == (
        "invalid_answer",
        201,
        "the answer is not a JSON object",
    )
    stub.script = [Answer(201, {"id": LEASE_ID}, sign=True)]
    error = refusal(relay.activate)
    assert (error.code, error.status, error.message) == (
        "invalid_answer",
        200,
        "the lease has no fingerprint",
    )


def test_a_lease_the_relay_no_longer_knows_is_dropped(stub):
    relay = leased(stub)
    stub.script = [Answer(404, {"code": "not_found", "detail": "no such lease"})]
    error = refusal(relay.heartbeat)
    assert (error.code, error.status, error.message) == ("not_found", 404, "no such lease")
    assert relay.lease is None


# Refusals and failures.


def test_a_refusal_carries_the_relays_problem_code_and_detail(stub):
    relay = relay_for(stub)
    stub.script = [
        status_answer(),
        Answer(409, {"code": "no_seats", "title": "Conflict", "detail": "all taken"}),
    ]
    error = refusal(relay.activate)
    assert (error.code, error.status, error.message, error.offline) == ("no_seats", 409, "all taken", False)
    # A problem without code or detail is named by its status; its title is not read.
    stub.script = [Answer(418, {"title": "I'm a teapot"})]
    error = refusal(relay.activate)
    assert (error.code, error.message) == ("http_418", "HTTP 418")
    # A refusal is never retried.
    assert len(stub.seen) == 3


def test_no_answer_is_a_network_or_timeout_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = refusal(lv.RelayClient("http://127.0.0.1:%d" % port, PRODUCT_KEY, "machine-a").status)
    assert (error.code, error.status, error.offline) == ("network", 0, True)
    assert error.message.startswith("the relay is unreachable: ")


def test_an_answer_that_does_not_come_in_time_is_a_timeout(stub):
    stub.script = [HANG]
    started = time.monotonic()
    error = refusal(relay_for(stub, timeout_seconds=0.3).status)
    assert (error.code, error.status, error.message) == ("timeout", 0, "no answer within 0.3 s")
    assert time.monotonic() - started < 2


# validate.


def test_validate_tells_the_lease_and_the_relays_license(stub):
    relay = relay_for(stub)
    stub.script = [status_answer()]
    assert relay.validate().status == "no_activation"
    stub.script = [status_answer(seats_in_use=2)]
    assert relay.validate().status == "no_seats"
    # The relay was proven by validate: activate asks for the lease alone.
    stub.script = [lease_answer(status=201), status_answer()]
    relay.activate()
    state = relay.validate()
    assert (state.valid, state.status, state.offline, state.grace_until) == (
        True,
        "ok",
        False,
        relay.lease.expires_at,
    )
    stub.script = [status_answer(revoked=True)]
    state = relay.validate()
    assert (state.valid, state.status) == (False, "revoked")
    stub.script = [status_answer(relay_file(exp_in=-60))]
    assert relay.validate().status == "expired"


def test_validate_rides_out_an_outage_on_a_live_lease(stub):
    relay = leased(stub)
    stub.script = [Answer(503, {"code": "unavailable"})]
    state = relay.validate()
    assert (state.valid, state.status, state.offline, state.checked_at) == (True, "ok", True, None)
    stub.script = [Answer(200, status_answer().body, sign=True, nonce="another-nonce")]
    assert refusal(relay.validate).code == "unverified_answer"
    stub.script = [Answer(503, {"code": "unavailable"})]
    assert relay_for(stub).validate().status == "unknown"


# The heartbeat thread.


def heartbeats(stub):
    return [seen for seen in stub.seen if seen.path.endswith("/heartbeat")]


def test_the_heartbeat_thread_beats_at_half_the_leases_remaining_lifetime(stub):
    relay = relay_for(stub, heartbeat_interval_seconds=30)
    stub.script = [status_answer(), lease_answer(expires_in=2, status=201)]
    relay.activate()
    stub.fallback = lambda seen: lease_answer(expires_in=2)
    started = time.monotonic()
    with relay:
        relay.start_heartbeat()
        (thread,) = [t for t in threading.enumerate() if t.name == "relay-heartbeat"]
        assert thread.daemon
        deadline = time.monotonic() + 5
        while len(heartbeats(stub)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    # Leaving the block stopped it.
    assert not thread.is_alive()
    first, second = heartbeats(stub)[:2]
    assert 0.8 <= first.at - started < 1.6
    assert 0.8 <= second.at - first.at < 1.6
    assert relay.heartbeat_error is None


def test_the_heartbeat_thread_waits_at_least_half_a_second_and_at_most_the_interval(stub):
    relay = relay_for(stub, heartbeat_interval_seconds=0.05)
    stub.script = [status_answer(), lease_answer(status=201)]
    relay.activate()
    stub.fallback = lambda seen: lease_answer()
    relay.start_heartbeat()
    time.sleep(1.3)
    relay.stop_heartbeat()
    count = len(heartbeats(stub))
    assert 2 <= count <= 3
    time.sleep(0.6)
    assert len(heartbeats(stub)) == count


def test_the_heartbeat_thread_reports_failures_and_ends_with_the_lease(stub, caplog):
    reported = []

    def on_error(error):
        reported.append(error)
        raise RuntimeError("a broken callback must not stop the thread")

    relay = relay_for(stub, heartbeat_interval_seconds=0.05, on_heartbeat_error=on_error)
    stub.script = [status_answer(), lease_answer(status=201)]
    relay.activate()
    stub.fallback = Answer(503, {"code": "unavailable", "detail": "restarting"})
    with caplog.at_level(logging.WARNING, logger="licensing_verifier"):
        relay.start_heartbeat()
        try:
            deadline = time.monotonic() + 5
            while len(reported) < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert (relay.heartbeat_error.code, relay.heartbeat_error.status) == ("unavailable", 503)
            assert all(error.code == "unavailable" for error in reported)
            stub.fallback = lambda seen: lease_answer()
            deadline = time.monotonic() + 5
            while relay.heartbeat_error is not None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert relay.heartbeat_error is None
            # A lease the relay no longer knows ends the thread.
            stub.fallback = Answer(404, {"code": "not_found", "detail": "no such lease"})
            (thread,) = [t for t in threading.enumerate() if t.name == "relay-heartbeat"]
            thread.join(5)
            assert not thread.is_alive()
            assert relay.lease is None and relay.heartbeat_error.code == "not_found"
        finally:
            relay.stop_heartbeat()
    messages = [record.getMessage() for record in caplog.records]
    assert "relay heartbeat failed: restarting (unavailable)" in messages
    assert "on_heartbeat_error raised" in messages


def test_deactivate_stops_the_heartbeat_before_it_releases_the_seat(stub):
    relay = relay_for(stub, heartbeat_interval_seconds=0.05)
    stub.script = [status_answer(), lease_answer(status=201)]
    relay.activate()
    stub.fallback = lambda seen: Answer(200, None, sign=True) if seen.method == "DELETE" else lease_answer()
    relay.start_heartbeat()
    time.sleep(0.6)
    relay.deactivate()
    assert not [t for t in threading.enumerate() if t.name == "relay-heartbeat"]
    time.sleep(0.6)
    assert stub.seen[-1].method == "DELETE"


def test_the_heartbeat_thread_outlives_an_unexpected_exception(stub):
    relay = relay_for(stub, heartbeat_interval_seconds=0.05)
    stub.script = [status_answer(), lease_answer(status=201)]
    relay.activate()

    def broken():
        raise RuntimeError("boom")

    relay.heartbeat = broken
    relay.start_heartbeat()
    try:
        time.sleep(1.2)
        error = relay.heartbeat_error
        assert (error.code, error.status, error.message) == ("network", 0, "RuntimeError: boom")
        assert [t for t in threading.enumerate() if t.name == "relay-heartbeat"]
    finally:
        relay.stop_heartbeat()
