// Command verify-license verifies a license file offline with the product's public key.
//
//	go run ./examples/verify-license public-key.pem license.lic
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/licensing-platform/licensing/sdks/go/licensing"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: verify-license PUBLIC-KEY-FILE LICENSE-FILE")
	}
	pem, err := os.ReadFile(os.Args[1]) // the product's public key: PEM, JWK or JWK Set
	if err != nil {
		log.Fatal(err)
	}
	file, err := os.ReadFile(os.Args[2]) // the license file, or its license_blob
	if err != nil {
		log.Fatal(err)
	}
	keys, err := licensing.ParsePublicKey(pem)
	if err != nil {
		log.Fatal(err)
	}
	result, err := licensing.VerifyLicense(file, keys, licensing.LicenseOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if !result.Valid {
		log.Fatalf("license refused: %v", result.Errors)
	}
	fmt.Println("licensed:", result.License.Serial, result.License.Features)
}
