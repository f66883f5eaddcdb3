package licensing_test

// RelayClient against a real relay process. sdks/go/relay.int-spec.ts starts the relay
// (`licensing-relay start`, from the sources) with a relay file signed by a product key of its own,
// and runs TestRelay with these variables:
//   - RELAY_URL: the relay (two seats; a lease lives 2 s after its last heartbeat);
//   - RELAY_PRODUCT_KEY: the product's public key (PEM); RELAY_SERIAL: the relay file's serial;
//   - RELAY_PROXY_URL: a proxy to that relay that changes every lease answer's body;
//   - RELAY_FOREIGN_URL: a relay whose file another product's key signed;
//   - RELAY_REVOKE_COMMAND: the command (JSON: argv, cwd, env) that revokes the relay's license.
// Without them the test is skipped (a plain `go test ./...`).

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/licensing-platform/licensing/sdks/go/licensing"
)

func TestRelay(t *testing.T) {
	env := map[string]string{}
	for _, name := range []string{"RELAY_URL", "RELAY_PRODUCT_KEY", "RELAY_SERIAL", "RELAY_PROXY_URL", "RELAY_FOREIGN_URL", "RELAY_REVOKE_COMMAND"} {
		if env[name] = os.Getenv(name); env[name] == "" {
			t.Skipf("%s is not set: the test needs a relay (see relay.int-spec.ts)", name)
		}
	}
	keys, err := licensing.ParsePublicKeyPEM(env["RELAY_PRODUCT_KEY"])
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client := func(fingerprint, url, productID string) *licensing.RelayClient {
		c, err := licensing.NewRelayClient(licensing.RelayOptions{RelayURL: url, PublicKey: keys, Fingerprint: fingerprint, ProductID: productID})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	refusal := func(err error) string {
		var failure *licensing.ClientError
		if !errors.As(err, &failure) {
			t.Fatalf("want a refusal, got %v", err)
		}
		return failure.Code
	}
	status := func(c *licensing.RelayClient) licensing.LicenseState {
		state, err := c.Validate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return state
	}
	must := func(lease licensing.RelayLease, err error) licensing.RelayLease {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return lease
	}

	t.Run("leases, heartbeats, releases, refuses a third machine", func(t *testing.T) {
		first := client("go-machine-1", env["RELAY_URL"], "")
		if got := status(first).Status; got != licensing.StatusNoActivation {
			t.Fatalf("before a lease: %s", got)
		}
		lease := must(first.Activate(ctx))
		if state := status(first); !state.Valid || state.Status != licensing.StatusOK || state.Offline {
			t.Fatalf("leased: %+v", state)
		}
		relay, err := first.Status(ctx)
		if err != nil || relay.Seats != 2 || relay.SeatsInUse != 1 || relay.License.Serial != env["RELAY_SERIAL"] || relay.Revoked {
			t.Fatalf("status: %+v, %v", relay, err)
		}

		// Without heartbeats the lease lapses after 2 s; the goroutine keeps it.
		if err := first.StartHeartbeat(ctx, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		if err := first.HeartbeatError(); err != nil {
			t.Fatal(err)
		}
		if got := status(first).Status; got != licensing.StatusOK {
			t.Fatalf("after 3 s of heartbeats: %s", got)
		}
		renewed := must(first.Heartbeat(ctx))
		if renewed.ID != lease.ID || renewed.ExpiresAt <= lease.ExpiresAt {
			t.Fatalf("renewed %+v, was %+v", renewed, lease)
		}

		second := client("go-machine-2", env["RELAY_URL"], "")
		must(second.Activate(ctx))
		third := client("go-machine-3", env["RELAY_URL"], "")
		if _, err := third.Activate(ctx); refusal(err) != "no_seats" {
			t.Fatalf("a third machine: %v", err)
		}
		if state := status(third); state.Valid || state.Status != licensing.StatusNoSeats {
			t.Fatalf("a third machine: %+v", state)
		}

		// Released: the seat is free at once, and the released client holds nothing.
		if err := first.Deactivate(ctx); err != nil {
			t.Fatal(err)
		}
		if got := status(first).Status; got != licensing.StatusNoActivation {
			t.Fatalf("released: %s", got)
		}
		if _, err := first.Heartbeat(ctx); refusal(err) != licensing.NotActivated {
			t.Fatalf("a heartbeat after the release: %v", err)
		}
		must(third.Activate(ctx))
		if got := status(third).Status; got != licensing.StatusOK {
			t.Fatalf("the freed seat: %s", got)
		}
		if err := second.Deactivate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := third.Deactivate(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("refuses an answer changed on the way", func(t *testing.T) {
		fooled := client("go-machine-proxy", env["RELAY_PROXY_URL"], "")
		if relay, err := fooled.Status(ctx); err != nil || relay.License.Serial != env["RELAY_SERIAL"] {
			t.Fatalf("the genuine status through the proxy: %v", err)
		}
		if _, err := fooled.Activate(ctx); refusal(err) != licensing.UnverifiedAnswer {
			t.Fatalf("a changed lease: %v", err)
		}
		if fooled.CurrentLease() != nil || status(fooled).Valid {
			t.Fatal("a changed lease was kept")
		}
	})

	t.Run("refuses a relay file of another product", func(t *testing.T) {
		fooled := client("go-machine-foreign", env["RELAY_FOREIGN_URL"], "")
		if _, err := fooled.Validate(ctx); refusal(err) != licensing.RelayFileInvalid {
			t.Fatalf("validate: %v", err)
		}
		if _, err := fooled.Activate(ctx); refusal(err) != licensing.RelayFileInvalid {
			t.Fatalf("activate: %v", err)
		}
		pinned := client("go-machine-pinned", env["RELAY_URL"], "00000000-0000-4000-8000-000000000000")
		if _, err := pinned.Activate(ctx); refusal(err) != licensing.RelayProductMismatch {
			t.Fatalf("another product id: %v", err)
		}
	})

	t.Run("reports a revoked license", func(t *testing.T) {
		machine := client("go-machine-revoked", env["RELAY_URL"], "")
		must(machine.Activate(ctx))
		var command struct {
			Argv []string          `json:"argv"`
			Cwd  string            `json:"cwd"`
			Env  map[string]string `json:"env"`
		}
		if err := json.Unmarshal([]byte(env["RELAY_REVOKE_COMMAND"]), &command); err != nil {
			t.Fatal(err)
		}
		revoke := exec.Command(command.Argv[0], command.Argv[1:]...)
		revoke.Dir = command.Cwd
		revoke.Env = os.Environ()
		for name, value := range command.Env {
			revoke.Env = append(revoke.Env, name+"="+value)
		}
		if output, err := revoke.CombinedOutput(); err != nil {
			t.Fatalf("revocations import: %v: %s", err, output)
		}
		if state := status(machine); state.Valid || state.Status != licensing.StatusRevoked {
			t.Fatalf("revoked: %+v", state)
		}
		if _, err := machine.Heartbeat(ctx); refusal(err) != "license_revoked" {
			t.Fatalf("a heartbeat: %v", err)
		}
		if _, err := client("go-machine-late", env["RELAY_URL"], "").Activate(ctx); refusal(err) != "license_revoked" {
			t.Fatalf("a new lease: %v", err)
		}
	})
}
