package licensing_test

import (
	"fmt"
	"time"

	licensing "github.com/licensing-platform/licensing/sdks/go/licensing"
)

// A product's public key (PEM) and one of its license files: the conformance vector
// licenses.json "ed25519/valid-pem".
const (
	examplePublicKey = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAH0HHGzj5Jkv+33i3a7fyUgMddKX5q81kJYQuqou6GPA=
-----END PUBLIC KEY-----
`
	exampleLicense = "" +
		"eyJhbGciOiJFZERTQSIsInR5cCI6ImxpY2Vuc2Urand0Iiwia2lkIjoiNmYxZDNjMmEtNWI0ZS00YTdkLTljOGItMW" +
		"UyZjNhNGI1YzAxIn0.eyJ2IjoxLCJqdGkiOiI0YjBjNWQwZS04YTQzLTRhOGItOWQwYi0yZjhmM2MxZTZhMTEiLCJz" +
		"dWIiOiJMSUMtUEhPVE8tRURJVE9SLTdLM0Y5UVgyTTRXOFQxWkMiLCJpc3MiOiIwZDhmMmM2NC0zZjU1LTRiN2UtYT" +
		"BkNC02ZDdiOGE5YzBlMTIiLCJpYXQiOjE4MDM4MTYwMDAsIm5iZiI6MTgwMzgxNjAwMCwiZXhwIjoxODA2NDk0NDAw" +
		"LCJwcm9kdWN0X2lkIjoiOWExYjJjM2QtNGU1Zi00YTZiLThjN2QtMGUxZjJhM2I0YzVkIiwicHJvZHVjdF9jb2RlIj" +
		"oicGhvdG8tZWRpdG9yIiwibGljZW5zZV90eXBlIjoic3Vic2NyaXB0aW9uIiwiY3VzdG9tZXJfaWQiOiJjdXNfNDIi" +
		"LCJjdXN0b21lcl9lbWFpbCI6ImFkYUBleGFtcGxlLmNvbSIsImZlYXR1cmVzIjpbImV4cG9ydCIsInBybyJdLCJtYX" +
		"hfc2VhdHMiOjMsImhhcmR3YXJlX2JpbmRpbmciOm51bGwsInZhbGlkX2Zyb20iOiIyMDI3LTAyLTI4VDEyOjAwOjAw" +
		"LjAwMFoiLCJ2YWxpZF91bnRpbCI6IjIwMjctMDMtMzFUMTI6MDA6MDAuMDAwWiJ9.hKBpJuHovZcY-6yjYScKtwuC8" +
		"Mm_7BLzsaVZ25Kt7kzUaI-XQIIdONoaSjSHbdpoNDJe0XzB-NGREytIzlb9CA"
)

func ExampleVerifyLicense() {
	keys, err := licensing.ParsePublicKey([]byte(examplePublicKey))
	if err != nil {
		panic(err)
	}
	result, err := licensing.VerifyLicense([]byte(exampleLicense), keys, licensing.LicenseOptions{
		Now:       time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC),
		ProductID: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(result.Valid, result.License.Serial, result.License.Features, *result.License.ExpiresAt)

	// A month later, the same file has expired.
	result, _ = licensing.VerifyLicense([]byte(exampleLicense), keys, licensing.LicenseOptions{
		Now: time.Date(2027, 4, 1, 12, 0, 0, 0, time.UTC),
	})
	for _, e := range result.Errors {
		fmt.Println(e.Code, "-", e.Message)
	}
	// Output:
	// true LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC [export pro] 2027-03-31T12:00:00.000Z
	// expired - The license has expired
}
