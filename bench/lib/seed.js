// The data set every scenario runs on: two organizations, several products, N licenses (some
// revoked, some suspended), machine activations, and the API keys the scenarios use.
//
// How the licenses are made: a representative share (1 %, at least 20 per product) through the
// gateway's POST /licenses as a customer would, and the rest with the license service's own code
// in bulk (lib/bulk-issue.js: its entities, serials and signer, a thousand per INSERT), which is
// ~50 times faster than one API call each on a 2-core machine. Revocations and suspensions are
// requests on the bus straight to the license service's handlers (`license.revoke.v1`,
// `license.update.v1`: its validation, transaction, events and cache write-through, without the
// gateway in front, hence without an audit entry), a few of them through the API.
const { bulkIssuer } = require('./bulk-issue');
const { pool } = require('./clients');

/** Bump when what is seeded changes: a cached database of another version is seeded again. */
const SEED_VERSION = 2;

const PRODUCTS = [
  // org, code, share of the licenses, product settings
  { org: 0, code: 'bench-desktop', share: 0.3, settings: { default_features: ['pro', 'export'] } },
  {
    org: 0,
    code: 'bench-server',
    share: 0.25,
    settings: { activation_heartbeat_interval: 3600, max_concurrent_activations: null },
  },
  { org: 0, code: 'bench-mobile', share: 0.15, settings: { default_valid_days: 30 } },
  // Where the license-create scenario issues its licenses (none seeded).
  { org: 0, code: 'bench-issue', share: 0, settings: {} },
  { org: 1, code: 'bench-suite', share: 0.2, settings: { default_features: ['suite'] } },
  { org: 1, code: 'bench-plugin', share: 0.1, settings: {} },
];
const REVOKED_EVERY = 20; // 5 %
const SUSPENDED_EVERY = 33; // 3 %
const VALIDATE_MACHINES = 200;
const SAMPLE = 20_000;
const BATCH = 1000;

function licenseRequest(productId, i) {
  const kind = i % 10;
  return {
    product_id: productId,
    license_type: kind < 6 ? 'subscription' : kind < 8 ? 'perpetual' : kind === 8 ? 'trial' : 'floating',
    customer_id: `cust-${i % 5000}`,
    customer_email: `customer${i}@example.com`,
    ...(kind < 6 ? { valid_days: 365 } : kind === 8 ? { valid_days: 14 } : {}),
    ...(kind === 9 ? { max_seats: 10 } : {}),
  };
}

const log = (line) => process.stdout.write(`  ${line}\n`);

/**
 * Seeds through `apiFor(key)` (HTTP) and `bus` (bus requests), given the two organizations'
 * `{id, adminKey}`. Answers the manifest the scenarios need.
 */
async function seed({ total, orgs, apiFor, bus, databaseUrl, codeSuffix = '', concurrency = 32 }) {
  const started = Date.now();
  let issuer;
  try {
    if (bus && databaseUrl) issuer = await bulkIssuer(databaseUrl);
  } catch (error) {
    log(
      `the license service's code could not be loaded for bulk issue (${error.message}); every license goes over the bus`,
    );
  }
  try {
    return await seedWith({ total, orgs, apiFor, bus, issuer, codeSuffix, concurrency, started });
  } finally {
    await issuer?.close();
  }
}

async function seedWith({ total, orgs, apiFor, bus, issuer, codeSuffix, concurrency, started }) {
  const manifest = { version: SEED_VERSION, licenses: total, orgs: [], products: {}, samples: {} };
  for (const [index, org] of orgs.entries()) {
    const admin = apiFor(org.adminKey);
    const keyPair = await admin('POST', '/key-pairs', { name: 'bench' });
    const key = async (name, scopes) => (await admin('POST', '/api-keys', { name, scopes })).key;
    // The admin and read budgets are per API key (500/s and 1,000/s by default): the scenarios that
    // spend them rotate over several keys, as several client applications would.
    const entry = {
      id: org.id,
      adminKey: org.adminKey,
      clientKey: await key('bench client', ['client']),
      adminKeys: [],
      readKeys: [],
    };
    for (let i = 0; i < 8; i++) entry.adminKeys.push(await key(`bench admin ${i}`, ['admin']));
    for (let i = 0; i < 8; i++) entry.readKeys.push(await key(`bench read ${i}`, ['read']));
    for (const product of PRODUCTS.filter((p) => p.org === index)) {
      const created = await admin('POST', '/products', {
        name: product.code,
        code: `${product.code}${codeSuffix}`,
        key_pair_id: keyPair.id,
        ...product.settings,
      });
      const { public_key } = await admin('GET', `/products/${created.id}/public-key`);
      manifest.products[product.code] = { id: created.id, org: index, publicKey: public_key };
    }
    manifest.orgs.push(entry);
  }

  // Licenses, product by product.
  const byProduct = {};
  let made = 0;
  const products = PRODUCTS.filter((p) => p.org < orgs.length);
  const share = products.reduce((sum, p) => sum + p.share, 0);
  for (const product of products) {
    const count = Math.round((total * product.share) / share);
    if (count === 0) continue;
    const { id: productId, org } = manifest.products[product.code];
    const orgId = manifest.orgs[org].id;
    const admin = apiFor(manifest.orgs[org].adminKey);
    // Without the bus (a platform targeted with --url) every license goes through the API.
    const viaApi = bus ? Math.min(count, Math.max(20, Math.ceil(count / 100))) : count;
    const licenses = await pool(viaApi, concurrency, async (i) => {
      const created = await admin('POST', '/licenses', licenseRequest(productId, made + i));
      return { id: created.id, serial: created.serial, blob: i === 0 ? created.license_blob : undefined };
    });
    const batches = [];
    for (let from = viaApi; from < count; from += BATCH) {
      batches.push(Array.from({ length: Math.min(BATCH, count - from) }, (_, j) => made + from + j));
    }
    const issued = await pool(batches.length, 2, (b) =>
      issuer
        ? issuer.issue(
            orgId,
            productId,
            batches[b].map((i) => licenseRequest(productId, i)),
          )
        : pool(batches[b].length, concurrency, (j) =>
            bus.send('license.create.v1', orgId, licenseRequest(productId, batches[b][j])),
          ),
    );
    for (const batch of issued) for (const { id, serial } of batch) licenses.push({ id, serial });
    made += count;
    byProduct[product.code] = licenses;
    log(`${product.code}: ${count} licenses (${viaApi} through the API) — ${elapsed(started)}`);
  }

  // Revoked and suspended shares, a few of each through the API.
  const changed = { revoked: [], suspended: [] };
  for (const product of PRODUCTS) {
    const licenses = byProduct[product.code];
    if (!licenses) continue;
    const { org } = manifest.products[product.code];
    const orgId = manifest.orgs[org].id;
    const admin = apiFor(manifest.orgs[org].adminKey);
    const targets = [];
    licenses.forEach((license, i) => {
      if (i === 0) return; // the verify sample stays active
      if (i % REVOKED_EVERY === 0) targets.push({ license, status: 'revoked' });
      else if (i % SUSPENDED_EVERY === 0) targets.push({ license, status: 'suspended' });
    });
    await pool(targets.length, concurrency, async (t) => {
      const { license, status } = targets[t];
      const viaApi = t < 5 || !bus;
      if (status === 'revoked') {
        if (viaApi) await admin('DELETE', `/licenses/${license.id}`);
        else await bus.send('license.revoke.v1', orgId, { id: license.id });
      } else if (viaApi) await admin('PATCH', `/licenses/${license.id}`, { status: 'suspended' });
      else await bus.send('license.update.v1', orgId, { id: license.id, changes: { status: 'suspended' } });
      license.status = status;
      changed[status].push(license.serial);
    });
  }
  log(`${changed.revoked.length} revoked, ${changed.suspended.length} suspended — ${elapsed(started)}`);

  // Machines that validate: activations of active desktop licenses, through the API.
  const client = apiFor(manifest.orgs[0].clientKey);
  const desktop = byProduct['bench-desktop'].filter((l) => !l.status);
  const machines = desktop.slice(1, 1 + Math.min(VALIDATE_MACHINES, desktop.length - 1));
  await pool(machines.length, concurrency, async (i) => {
    const fingerprint = `bench-validate-${i}`;
    await client('POST', '/activations', { license_key: machines[i].serial, fingerprint });
    machines[i].fingerprint = fingerprint;
  });
  log(`${machines.length} activations for validate — ${elapsed(started)}`);

  // Machines of licenses that follow a policy (two machines each, 1.5× overage, a check-in every
  // 30 days, with an entitlement attached): validate then reads the policy and counts the seats.
  const admin0 = apiFor(manifest.orgs[0].adminKeys[0]);
  const entitlement = `bench-entitlement${codeSuffix}`;
  await admin0('POST', '/entitlements', { code: entitlement, name: 'Bench entitlement' });
  const policy = await admin0('POST', '/policies', {
    product_id: manifest.products['bench-desktop'].id,
    name: 'Bench workstation',
    max_machines: 2,
    overage: '1.5x',
    check_in_interval_days: 30,
    machine_matching: 'most',
  });
  const policyMachines = Array.from({ length: VALIDATE_MACHINES }, (_, i) => ({
    fingerprint: `bench-policy-${i}`,
  }));
  await pool(policyMachines.length, concurrency, async (i) => {
    // Over the eight admin keys: each has its own rate budget.
    const admin = apiFor(manifest.orgs[0].adminKeys[i % manifest.orgs[0].adminKeys.length]);
    const license = await admin('POST', '/licenses', { policy_id: policy.id, customer_id: `policy-${i}` });
    await admin('POST', `/licenses/${license.id}/entitlements`, { codes: [entitlement] });
    await client('POST', '/activations', {
      license_key: license.serial,
      fingerprint: policyMachines[i].fingerprint,
      components: { disk: `disk-${i}`, cpu: 'cpu', board: 'board' },
    });
    policyMachines[i].key = license.serial;
  });
  log(`${policyMachines.length} policy licenses and activations for validate — ${elapsed(started)}`);

  const active = (code) => (byProduct[code] ?? []).filter((l) => !l.status).map((l) => l.serial);
  const orgA = PRODUCTS.filter((p) => p.org === 0).flatMap((p) => active(p.code));
  const desktopSample = byProduct['bench-desktop'][0];
  // Every serial, per organization: the cache-warming pass reads them all.
  manifest.serials = [0, 1].map((org) =>
    PRODUCTS.filter((p) => p.org === org).flatMap((p) => (byProduct[p.code] ?? []).map((l) => l.serial)),
  );
  manifest.samples = {
    active: spread(orgA, SAMPLE),
    // Another organization's serials are `not_found` to this one, like unknown ones.
    otherOrg: spread(
      PRODUCTS.filter((p) => p.org === 1).flatMap((p) => active(p.code)),
      1000,
    ),
    revoked: spread(changed.revoked, SAMPLE),
    suspended: spread(changed.suspended, SAMPLE),
    verify: { product_id: manifest.products['bench-desktop'].id, license_blob: desktopSample.blob },
    validate: machines.map((l) => ({ key: l.serial, fingerprint: l.fingerprint })),
    validatePolicy: policyMachines.map((m, i) => ({
      key: m.key,
      fingerprint: m.fingerprint,
      components: { disk: `disk-${i}`, cpu: 'cpu', board: 'other' },
      entitlements: [entitlement],
    })),
    // Activation rate limit: 60 per license per hour, so that scenario walks over many licenses.
    activation: active('bench-server'),
  };
  manifest.seconds = Math.round((Date.now() - started) / 1000);
  return manifest;
}

/** At most `n` items spread over the whole of `list`. */
function spread(list, n) {
  if (list.length <= n) return list;
  const step = list.length / n;
  return Array.from({ length: n }, (_, i) => list[Math.floor(i * step)]);
}

function elapsed(started) {
  return `${((Date.now() - started) / 1000).toFixed(1)} s`;
}

module.exports = { seed, SEED_VERSION };
