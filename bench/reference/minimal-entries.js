// REFERENCE PIPELINES — not part of the product. The strict ceilings' cache: for each license of
// the reference's organization, an entry holding the fewest bytes its answer needs, written once
// at start from PostgreSQL, under keys of the reference's own (`<prefix>:min:<kind>:<serial>`).
// The platform's entries carry more (a version for ordering writes, the ids a sync report needs
// for check-revocation too); these ceilings show what that costs.
const BATCH = 5_000;
/** Long enough for any run; the keys are the reference's own and go away by themselves. */
const TTL_SECONDS = 6 * 3600;

const loaded = new Map();

/** Writes each kind's entries once per process; `kinds` maps a kind to its encoder of a row. */
module.exports = function minimalEntries({ pg, redis, orgId, prefix }, kind, encode) {
  const key = (serial) => `${prefix}:min:${kind}:${serial}`;
  if (!loaded.has(kind)) loaded.set(kind, load(pg, redis, orgId, key, encode));
  return loaded.get(kind).then(() => key);
};

async function load(pg, redis, orgId, key, encode) {
  const { rows } = await pg.query(
    `SELECT serial, id, product_id, status, revoked_at, valid_until, max_seats
       FROM license.licenses WHERE org_id = $1`,
    [orgId],
  );
  for (let start = 0; start < rows.length; start += BATCH) {
    const pipeline = redis.pipeline();
    for (const row of rows.slice(start, start + BATCH)) {
      pipeline.set(key(row.serial), encode(row), 'EX', TTL_SECONDS);
    }
    await pipeline.exec();
  }
}
