package licensing

import (
	"sort"
	"time"
)

const (
	listTyp  = "licensing-revocation-list+jwt"
	deltaTyp = "licensing-revocation-delta+jwt"
)

var revocationStatuses = map[string]bool{"revoked": true, "suspended": true, "expired": true}

var revocationMessages = map[ErrorCode]string{
	CodeMalformed:         "This is not a signed revocation list or delta",
	CodeUnknownKey:        "The list was signed by a key pair this key set does not hold",
	CodeSignatureInvalid:  "The signature does not verify with the key",
	CodeProductMismatch:   "The list belongs to another product",
	CodeVersionRegression: "The list is older than the one held",
	CodeVersionGap:        "The delta does not start from the list held (fetch the full list)",
}

// RevocationEntry names a license that is not active.
type RevocationEntry struct {
	Serial string `json:"serial"`
	// Status is revoked, suspended or expired.
	Status string `json:"status"`
	// At is when the license took that status (ISO 8601).
	At string `json:"at"`
}

// RevocationList is a product's revocation list, verified.
// Store it, and update it with the lists or deltas signed later.
// Its JSON form is the one every SDK stores.
type RevocationList struct {
	ProductID string `json:"product_id"`
	// Version grows with every change of the product's licenses' statuses; it never goes back.
	Version  int64  `json:"version"`
	IssuedAt string `json:"issued_at"`
	// NextUpdate is when the service expects the application to fetch a newer list.
	NextUpdate string `json:"next_update"`
	// Entries are sorted by serial.
	Entries []RevocationEntry `json:"entries"`
}

// Entry finds the entry of a serial: false when the list does not name it.
func (l *RevocationList) Entry(serial string) (RevocationEntry, bool) {
	i := sort.Search(len(l.Entries), func(i int) bool { return compareUTF16(l.Entries[i].Serial, serial) >= 0 })
	if i < len(l.Entries) && l.Entries[i].Serial == serial {
		return l.Entries[i], true
	}
	// A list made by hand may not be sorted.
	for _, entry := range l.Entries {
		if entry.Serial == serial {
			return entry, true
		}
	}
	return RevocationEntry{}, false
}

// IsRevoked reports whether the list names the serial as revoked, suspended or expired: the
// license must not run.
func (l *RevocationList) IsRevoked(serial string) bool {
	_, found := l.Entry(serial)
	return found
}

// IsStale reports whether the list is past its next_update at now.
// A stale list is still the best knowledge offline, but it is time to fetch a newer one.
func (l *RevocationList) IsStale(now time.Time) bool {
	next, ok := parseDate(l.NextUpdate)
	return ok && float64(next) < millisOf(now)
}

// RevocationListResult is the verdict on a revocation list or delta.
type RevocationListResult struct {
	// Valid is true exactly when Errors is empty.
	Valid bool `json:"valid"`
	// List is the list to keep from now on; nil unless valid.
	List *RevocationList `json:"list"`
	// Errors holds every problem that applies, in a fixed order.
	Errors []VerifyError `json:"errors"`
}

// Has reports whether the verdict holds the code.
func (r RevocationListResult) Has(code ErrorCode) bool { return hasCode(r.Errors, code) }

// RevocationListOptions says what to check a revocation list against.
type RevocationListOptions struct {
	// ProductID is the product the list must be for; empty: not checked.
	ProductID string
	// Previous is the list held so far, as a verifier returned it; nil when none is held.
	// A full list older than it, or a delta that would take it back, is refused
	// (version_regression): an attacker replaying an old list cannot un-revoke a license.
	// A delta needs it, and must start at or before its version (version_gap otherwise).
	Previous *RevocationList
}

// VerifyRevocationList verifies a product's revocation list, or a delta, with the product's
// public key (the one that verifies its licenses).
//
// It answers the list to keep: the list itself, or the delta applied to options.Previous
// (its removed serials dropped, its entries added or replaced, and the delta's product_id,
// version, issued_at and next_update).
// The algorithm comes from the key, never from the document.
// A bad list is a result, not an error: the error is only for a nil key set.
//
// The error codes come in this order: malformed (alone), then unknown_key or signature_invalid,
// product_mismatch (at most once), version_regression, version_gap.
func VerifyRevocationList(jws string, keys *KeySet, options RevocationListOptions) (RevocationListResult, error) {
	if keys == nil {
		return RevocationListResult{}, ErrNoKeys
	}
	malformed := RevocationListResult{Errors: errorsOf([]ErrorCode{CodeMalformed}, revocationMessages)}
	decoded, ok := decodeCompactJWS(trimSpace(jws), nil, false)
	if !ok {
		return malformed, nil
	}
	typ := decoded.header["typ"]
	if typ != listTyp && typ != deltaTyp {
		return malformed, nil
	}
	document, ok := readRevocationDocument(decoded.payload, typ == deltaTyp)
	if !ok {
		return malformed, nil
	}

	var codes []ErrorCode
	if code := signatureCode(decoded, keys); code != "" {
		codes = append(codes, code)
	}
	previous := options.Previous
	if options.ProductID != "" && document.ProductID != options.ProductID ||
		previous != nil && previous.ProductID != document.ProductID {
		codes = append(codes, CodeProductMismatch)
	}
	if previous != nil && document.Version < previous.Version {
		codes = append(codes, CodeVersionRegression)
	}
	if document.delta && (previous == nil || document.since > previous.Version) {
		codes = append(codes, CodeVersionGap)
	}
	if len(codes) > 0 {
		return RevocationListResult{Errors: errorsOf(codes, revocationMessages)}, nil
	}

	list := document.RevocationList
	if document.delta {
		list.Entries = applyDelta(previous.Entries, document)
	}
	entries := make([]RevocationEntry, len(list.Entries))
	copy(entries, list.Entries)
	sort.SliceStable(entries, func(i, j int) bool { return compareUTF16(entries[i].Serial, entries[j].Serial) < 0 })
	list.Entries = entries
	return RevocationListResult{Valid: true, List: &list, Errors: []VerifyError{}}, nil
}

type revocationDocument struct {
	RevocationList
	delta   bool
	since   int64
	removed []string
}

// readRevocationDocument checks what a list or delta holds.
// product_id is a string, version an integer of 0 or more, issued_at and next_update dates, and
// entries an array of objects with a string serial, a status of revoked, suspended or expired,
// and a date at.
// A full list has neither since nor removed.
// A delta has since (an integer of 0 or more, at most version) and removed (an array of objects
// with a string serial).
func readRevocationDocument(payload map[string]any, delta bool) (*revocationDocument, bool) {
	doc := &revocationDocument{delta: delta}
	var ok bool
	if doc.ProductID, ok = payload["product_id"].(string); !ok {
		return nil, false
	}
	if doc.Version, ok = version(payload["version"]); !ok {
		return nil, false
	}
	if doc.IssuedAt, ok = date(payload["issued_at"]); !ok {
		return nil, false
	}
	if doc.NextUpdate, ok = date(payload["next_update"]); !ok {
		return nil, false
	}
	entries, ok := payload["entries"].([]any)
	if !ok {
		return nil, false
	}
	doc.Entries = make([]RevocationEntry, 0, len(entries))
	for _, item := range entries {
		entry, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		serial, ok1 := entry["serial"].(string)
		status, ok2 := entry["status"].(string)
		at, ok3 := date(entry["at"])
		if !ok1 || !ok2 || !revocationStatuses[status] || !ok3 {
			return nil, false
		}
		doc.Entries = append(doc.Entries, RevocationEntry{Serial: serial, Status: status, At: at})
	}
	_, hasSince := payload["since"]
	removedValue, hasRemoved := payload["removed"]
	if !delta {
		return doc, !hasSince && !hasRemoved
	}
	if doc.since, ok = version(payload["since"]); !ok || doc.since > doc.Version {
		return nil, false
	}
	removed, ok := removedValue.([]any)
	if !ok {
		return nil, false
	}
	for _, item := range removed {
		object, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		serial, ok := object["serial"].(string)
		if !ok {
			return nil, false
		}
		doc.removed = append(doc.removed, serial)
	}
	return doc, true
}

// version reads an integer of 0 or more.
func version(v any) (int64, bool) {
	n, ok := safeInteger(v)
	return n, ok && n >= 0
}

// date reads a string that holds a date.
func date(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	_, ok = parseDate(s)
	return s, ok
}

// applyDelta drops the delta's removed serials from the held entries, then adds or replaces
// the delta's entries.
func applyDelta(held []RevocationEntry, delta *revocationDocument) []RevocationEntry {
	var order []string
	bySerial := map[string]RevocationEntry{}
	set := func(entry RevocationEntry) {
		if _, found := bySerial[entry.Serial]; !found {
			order = append(order, entry.Serial)
		}
		bySerial[entry.Serial] = entry
	}
	for _, entry := range held {
		set(entry)
	}
	for _, serial := range delta.removed {
		delete(bySerial, serial)
	}
	for _, entry := range delta.Entries {
		set(entry)
	}
	out := make([]RevocationEntry, 0, len(bySerial))
	seen := map[string]bool{}
	for _, serial := range order {
		if entry, found := bySerial[serial]; found && !seen[serial] {
			out = append(out, entry)
			seen[serial] = true
		}
	}
	return out
}
