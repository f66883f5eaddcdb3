// REFERENCE PIPELINES — not part of the product. Reads the platform's serial entries
// (libs/shared/serial-cache/src/serial-entry.ts): `status|version|revoked_at|valid_until|
// max_seats|license_id|product_id`, `-` for a serial the organization has no license of.
module.exports = function readEntry(value) {
  if (value === null || value === '-') return undefined;
  const [status, , revokedAt, validUntil, maxSeats, licenseId, productId] = value.split('|');
  return {
    status,
    revoked_at: revokedAt || null,
    valid_until: validUntil || null,
    max_seats: Number(maxSeats),
    license_id: licenseId,
    product_id: productId,
  };
};
