"""RelayClient against a real relay process.

sdks/python/relay.int-spec.ts starts the relay (`licensing-relay start`, from the sources) with a
relay file signed by a product key of the test's own, and runs this file with `-m online` and
these variables:

- RELAY_URL: the relay (two seats; a lease lives 2 s after its last heartbeat);
- RELAY_PRODUCT_KEY: the product's public key (PEM); RELAY_SERIAL: the relay file's serial;
- RELAY_PROXY_URL: a proxy to that relay that changes every lease answer's body;
- RELAY_FOREIGN_URL: a relay whose file another product's key signed;
- RELAY_REVOKE_COMMAND: the command (JSON: argv, cwd, env) that revokes the first relay's license.

Without them every test here is skipped. The tests run in this order; the last one revokes.
"""

import json
import os
import subprocess
import time

import pytest

import licensing_verifier as lv

NEEDED = (
    "RELAY_URL",
    "RELAY_PRODUCT_KEY",
    "RELAY_SERIAL",
    "RELAY_PROXY_URL",
    "RELAY_FOREIGN_URL",
    "RELAY_REVOKE_COMMAND",
)
MISSING = [name for name in NEEDED if not os.environ.get(name)]

pytestmark = [
    pytest.mark.online,
    pytest.mark.skipif(
        bool(MISSING), reason="needs a relay (sdks/python/relay.int-spec.ts): " + ", ".join(MISSING)
    ),
]

env = os.environ.get
URL = env("RELAY_URL", "")
KEY = env("RELAY_PRODUCT_KEY", "")


def client(fingerprint: str, url: str = URL, **options) -> lv.RelayClient:
    return lv.RelayClient(url, KEY, fingerprint, **options)


def refusal(call) -> str:
    with pytest.raises(lv.LicenseClientError) as caught:
        call()
    return caught.value.code


def test_leases_heartbeats_releases_and_refuses_a_third_machine() -> None:
    first = client("py-machine-1")
    assert first.validate().status == "no_activation"
    lease = first.activate()
    assert lease.fingerprint == "py-machine-1"
    state = first.validate()
    assert (state.valid, state.status, state.offline) == (True, "ok", False)
    status = first.status()
    seen = (status.seats, status.seats_in_use, status.serial, status.revoked)
    assert seen == (2, 1, env("RELAY_SERIAL"), False)

    # Without heartbeats the lease lapses after 2 s; the thread keeps it.
    first.start_heartbeat()
    time.sleep(3)
    assert first.heartbeat_error is None
    assert first.validate().status == "ok"
    renewed = first.heartbeat()
    assert renewed.id == lease.id
    assert renewed.expires_at > lease.expires_at

    second = client("py-machine-2")
    second.activate()
    third = client("py-machine-3")
    assert refusal(third.activate) == "no_seats"
    assert (third.validate().valid, third.validate().status) == (False, "no_seats")

    # Released: the seat is free at once, and the released client holds nothing.
    first.deactivate()
    assert first.validate().status == "no_activation"
    assert refusal(first.heartbeat) == "not_activated"
    third.activate()
    assert third.validate().status == "ok"
    second.deactivate()
    third.deactivate()


def test_refuses_an_answer_changed_on_the_way() -> None:
    fooled = client("py-machine-proxy", env("RELAY_PROXY_URL", ""))
    assert fooled.status().serial == env("RELAY_SERIAL")
    assert refusal(fooled.activate) == "unverified_answer"
    assert fooled.lease is None
    assert fooled.validate().valid is False


def test_refuses_a_relay_file_of_another_product() -> None:
    fooled = client("py-machine-foreign", env("RELAY_FOREIGN_URL", ""))
    assert refusal(fooled.validate) == "relay_file_invalid"
    assert refusal(fooled.activate) == "relay_file_invalid"
    pinned = client("py-machine-pinned", product_id="00000000-0000-4000-8000-000000000000")
    assert refusal(pinned.activate) == "product_mismatch"


def test_reports_a_revoked_license() -> None:
    machine = client("py-machine-revoked")
    machine.activate()
    command = json.loads(env("RELAY_REVOKE_COMMAND", ""))
    subprocess.run(command["argv"], cwd=command["cwd"], env={**os.environ, **command["env"]}, check=True)
    state = machine.validate()
    assert (state.valid, state.status) == (False, "revoked")
    assert refusal(machine.heartbeat) == "license_revoked"
    assert refusal(client("py-machine-late").activate) == "license_revoked"
