// Command online runs the online client's walk-through against a licensing service.
//
// It reads its settings from the environment:
//
//	LICENSING_URL            the API, e.g. https://licensing.example.com
//	LICENSING_LICENSE_TOKEN  the license's token (lt_…)
//	LICENSING_LICENSE_KEY    the license's serial
//	LICENSING_PUBLIC_KEY     a file with the product's public key (PEM)
//	LICENSING_RESPONSE_KEYS  optional: a file with the organization's response keys (JWK Set)
//	LICENSING_CLIENT_KEY     optional: an API key with the client scope, for check-revocation
//
//	go run ./examples/online
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/licensing-platform/licensing/sdks/go/licensing"
)

func main() {
	options := licensing.ClientOptions{
		BaseURL:      os.Getenv("LICENSING_URL"),
		LicenseToken: os.Getenv("LICENSING_LICENSE_TOKEN"),
		LicenseKey:   os.Getenv("LICENSING_LICENSE_KEY"),
		Fingerprint:  "machine-a",
		Hostname:     "build-01",
		Platform:     "linux-x64",
		AppVersion:   "2.4.1",
	}
	if err := WalkThrough(context.Background(), options, os.Getenv("LICENSING_CLIENT_KEY")); err != nil {
		log.Fatal(err)
	}
}

// WalkThrough activates this machine, keeps its seat, validates, checks in, checks out a license
// file, syncs, checks revocation, and frees the seat.
func WalkThrough(ctx context.Context, options licensing.ClientOptions, clientKey string) error {
	// The product's public key verifies checked-out files offline.
	pem, err := os.ReadFile(os.Getenv("LICENSING_PUBLIC_KEY"))
	if err != nil {
		return err
	}
	if options.ProductKeys, err = licensing.ParsePublicKey(pem); err != nil {
		return err
	}
	// The response keys, when given, make the client check every signed answer.
	if file := os.Getenv("LICENSING_RESPONSE_KEYS"); file != "" {
		jwks, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if options.ResponseKeys, err = licensing.ParsePublicKey(jwks); err != nil {
			return err
		}
	}
	client, err := licensing.NewClient(options)
	if err != nil {
		return err
	}

	// Take a seat. The client keeps the seat's machine token for the calls that follow.
	activation, err := client.Activate(ctx)
	if err != nil {
		return err
	}
	fmt.Println("activated:", activation.ID)

	// Keep the seat: one heartbeat now, then a goroutine until StopHeartbeat.
	if _, err := client.Heartbeat(ctx); err != nil {
		return err
	}
	if err := client.StartHeartbeat(ctx, func(err error) { log.Println("heartbeat failed:", err) }); err != nil {
		return err
	}
	defer client.StopHeartbeat()

	// May the application run? An outage answers the last-known state, within the grace period.
	state, err := client.Validate(ctx)
	if err != nil {
		return err
	}
	fmt.Println("validate:", state.Status, "valid:", state.Valid)
	if !state.Valid {
		return fmt.Errorf("the license is not valid: %s", state.Status)
	}

	// Tell the service the application is in touch.
	checkIn, err := client.CheckIn(ctx)
	if err != nil {
		return err
	}
	fmt.Println("checked in at:", *checkIn.LastCheckInAt)

	// A license file for a week without the network, verified offline with the product's key.
	checkout, err := client.Checkout(ctx, licensing.CheckoutOptions{TTL: 7 * 24 * time.Hour})
	if err != nil {
		return err
	}
	fmt.Println("checked out until:", checkout.ExpiresAt, "valid offline:", checkout.Verification.Valid)
	if err := os.WriteFile("license.lic", checkout.File, 0o600); err != nil {
		return err
	}

	// Report usage. Retries send the same report_id, so the report counts once.
	seats := 1
	state, err = client.Sync(ctx, licensing.SyncReport{FeaturesUsed: []string{"pro"}, SeatsInUse: &seats})
	if err != nil {
		return err
	}
	fmt.Println("sync:", state.Status)

	// Check revocation needs an API key with the client scope: a license token is refused.
	if clientKey != "" {
		keyed := options
		keyed.LicenseToken, keyed.APIKey = "", clientKey
		withKey, err := licensing.NewClient(keyed)
		if err != nil {
			return err
		}
		results, err := withKey.CheckRevocation(ctx)
		if err != nil {
			return err
		}
		fmt.Println("revocation:", results[0].Serial, results[0].Status)
	}

	// Give the seat back.
	if err := client.Deactivate(ctx); err != nil {
		return err
	}
	fmt.Println("deactivated")
	return nil
}
