// The scenarios: each is the same load on the platform (`/api/v1…`) and, where it has one, on its
// reference pipeline (`/ref…`), built from the seeded manifest. `requests(prefix)` answers
// autocannon request objects; dynamic ones rotate keys and bodies with setupRequest, identically
// for both sides, so both carry the same autocannon settings and load-generator cost.
// `fixedRate` marks the hot paths also measured at a fixed rate, with their p99 target in ms.
const { v7: timeOrderedUuid } = require('uuid');

const json = { 'content-type': 'application/json' };
const bearer = (key) => ({ ...json, authorization: `Bearer ${key}` });

/** Rotates over `items`: one counter per scenario run, shared by every connection. */
function rotation(items) {
  let next = 0;
  return () => items[next++ % items.length];
}

function unknownSerial(i) {
  return `LIC-BENCH-UNKNOWN${String(i).padStart(8, '0')}`;
}

/** 100 serials of one organization: 60 active, 15 revoked, 10 suspended, 10 unknown, 5 of the other organization. */
function checkBatch(samples) {
  const take = (list, n, offset = 0) => list.slice(offset, offset + n);
  return [
    ...take(samples.active, 60),
    ...take(samples.revoked, 15),
    ...take(samples.suspended, 10),
    ...Array.from({ length: 10 }, (_, i) => unknownSerial(i)),
    ...take(samples.otherOrg, 5),
    // A platform targeted with --url has one organization: unknown serials stand in for the other's.
    ...Array.from({ length: 5 - take(samples.otherOrg, 5).length }, (_, i) => unknownSerial(10 + i)),
  ];
}

/**
 * Tracks every sync report the load sends by its report_id, and whether it was answered 2xx:
 * a report still in flight when autocannon stops is sent again afterwards with the same id (as a
 * client retries; the platform counts it once), so the number analytics must reach is exact.
 */
function syncTracker() {
  const reports = new Map();
  return {
    reports,
    setup(req, context) {
      // As the SDK makes them (LicenseClient.sync): time-ordered.
      const id = timeOrderedUuid();
      reports.set(id, { body: undefined, status: 0 });
      context.reportId = id;
      return id;
    },
    record(status, context) {
      const report = reports.get(context.reportId);
      if (report) report.status = status;
    },
    answered: () => [...reports.values()].filter((r) => r.status >= 200 && r.status < 300).length,
  };
}

/**
 * The validate machines' licenses, each with a license token (issued by `issueTokens` before the
 * run): what a shipped application holds instead of the organization's client key.
 */
async function issueTokens(manifest, api) {
  return pool(manifest.samples.validate, async ({ key, fingerprint }) => {
    const { activations } = await retried(() =>
      api('GET', `/activations?license_key=${encodeURIComponent(key)}`),
    );
    const { token } = await retried(() =>
      api('POST', `/licenses/${activations[0].license_id}/tokens`, { name: 'bench' }),
    );
    return { key, fingerprint, token };
  });
}

/** `fn`, tried again after a second when it fails (a platform still busy with the seed answers 503). */
async function retried(fn, attempts = 5) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** `fn` over `items`, 4 at a time, answers in order. */
async function pool(items, fn) {
  const answers = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      answers[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return answers;
}

/**
 * The same sync or validate load authenticated two ways, both on the platform: each machine with
 * its license token (ours), and with the organization's client key (the "reference"). The ratio is
 * what a license token costs on a hot path against an API key.
 */
function tokenScenario(name, path, bodyOf, { org, tokens }) {
  return {
    name: `${name}-token`,
    label: `${name} by license token (vs client key)`,
    target: { ratio: 0.8 },
    referenceOnPlatform: true,
    requests: (prefix) => {
      const machine = rotation(tokens);
      return [
        {
          method: 'POST',
          path: `/api/v1${path}`,
          setupRequest(req) {
            const { key, fingerprint, token } = machine();
            req.headers = bearer(prefix === '/ref' ? org.clientKey : token);
            req.body = JSON.stringify(bodyOf(key, fingerprint));
            return req;
          },
        },
      ];
    },
  };
}

function scenarios(manifest) {
  const org = manifest.orgs[0];
  const s = manifest.samples;
  const product = manifest.products['bench-desktop'].id;
  const issueProduct = manifest.products['bench-issue'].id;
  return [
    {
      name: 'check-revocation',
      label: 'check-revocation (100 serials)',
      target: { ratio: 0.8, p99: 2 },
      // Against entries of `status|revoked_at|valid_until` only (reference/check-revocation-strict.js).
      strictTarget: { ratio: 0.8, p99: 1.5 },
      fixedRate: { p99: 10 },
      requests: (prefix) => [
        {
          method: 'POST',
          path: `${prefix}/licenses/check-revocation`,
          headers: bearer(org.clientKey),
          body: JSON.stringify({ serials: checkBatch(s) }),
        },
      ],
    },
    {
      name: 'sync',
      label: 'sync (JetStream-acknowledged)',
      target: { ratio: 0.8 },
      // Against entries of what the answer and the report need only (reference/sync-strict.js).
      strictTarget: { ratio: 0.9, p99: 1.5 },
      tracked: true,
      fixedRate: { p99: 10 },
      requests: (prefix, tracker) => {
        const serial = rotation(s.active.slice(0, 1000));
        return [
          {
            method: 'POST',
            path: `${prefix}/licenses/sync`,
            headers: bearer(org.clientKey),
            setupRequest(req, context) {
              const reportId = tracker.setup(req, context);
              req.body = JSON.stringify({
                license_serial: serial(),
                hardware_fingerprint: `bench-machine-${reportId.slice(-4)}`,
                app_version: '2.4.1',
                features_used: ['pro'],
                seats_in_use: 1,
                report_id: reportId,
              });
              tracker.reports.get(reportId).body = req.body;
              return req;
            },
            onResponse: (status, _body, context) => tracker.record(status, context),
          },
        ];
      },
    },
    {
      name: 'verify',
      label: 'verify (product_id)',
      target: { ratio: 0.7 },
      fixedRate: { p99: 10 },
      requests: (prefix) => [
        {
          method: 'POST',
          path: `${prefix}/licenses/verify`,
          headers: bearer(org.clientKey),
          body: JSON.stringify(s.verify),
        },
      ],
    },
    {
      name: 'validate',
      label: 'validate (key + fingerprint)',
      target: { ratio: 0.7 },
      fixedRate: { p99: 10 },
      requests: (prefix) => {
        const machine = rotation(s.validate);
        return [
          {
            method: 'POST',
            path: `${prefix}/licenses/validate`,
            headers: bearer(org.clientKey),
            setupRequest(req) {
              req.body = JSON.stringify(machine());
              return req;
            },
          },
        ];
      },
    },
    {
      name: 'validate-policy',
      label: 'validate (a policy license: seats, check-in, components, entitlements)',
      target: { ratio: 0.7 },
      requests: (prefix) => {
        const machine = rotation(s.validatePolicy);
        return [
          {
            method: 'POST',
            // Its own ceiling: the reference answers a policy license's validate apart.
            path: prefix === '/ref' ? '/ref/licenses/validate-policy' : `${prefix}/licenses/validate`,
            headers: bearer(org.clientKey),
            setupRequest(req) {
              req.body = JSON.stringify(machine());
              return req;
            },
          },
        ];
      },
    },
    ...(manifest.tokens
      ? [
          tokenScenario(
            'sync',
            '/licenses/sync',
            (key, fingerprint) => ({
              license_serial: key,
              hardware_fingerprint: fingerprint,
              app_version: '2.4.1',
              features_used: ['pro'],
              seats_in_use: 1,
              report_id: timeOrderedUuid(),
            }),
            { org, tokens: manifest.tokens },
          ),
          tokenScenario('validate', '/licenses/validate', (key, fingerprint) => ({ key, fingerprint }), {
            org,
            tokens: manifest.tokens,
          }),
        ]
      : []),
    {
      name: 'get',
      label: 'GET /products/:id (one hop)',
      target: { ratio: 0.7 },
      requests: (prefix) => {
        const key = rotation(org.readKeys);
        return [
          {
            method: 'GET',
            path: `${prefix}/products/${product}`,
            setupRequest(req) {
              req.headers = bearer(key());
              return req;
            },
          },
        ];
      },
    },
    {
      name: 'activation',
      label: 'activation + heartbeat',
      target: { ratio: 0.6 },
      // Both sides walk the same licenses in the same order, activation then heartbeat.
      requests: (prefix) => {
        // Each license at most a few times per run: activations are limited to 60 per license per hour.
        const license = rotation(s.activation);
        return [
          {
            method: 'POST',
            path: `${prefix}/activations`,
            headers: bearer(org.clientKey),
            setupRequest(req) {
              const serial = license();
              req.body = JSON.stringify({ license_key: serial, fingerprint: `bench-seat-${serial}` });
              return req;
            },
            onResponse(status, body, context) {
              context.activation = status < 300 ? JSON.parse(body).id : undefined;
            },
          },
          {
            method: 'POST',
            setupRequest(req, context) {
              if (!context.activation) return undefined;
              req.path = `${prefix}/activations/${context.activation}/heartbeat`;
              // No body, so no content type: plain Fastify (the reference's) refuses an empty JSON body.
              req.headers = { authorization: `Bearer ${org.clientKey}` };
              return req;
            },
          },
        ];
      },
    },
    {
      name: 'license-create',
      label: 'license create',
      target: { ratio: 0.5 },
      requests: (prefix) => {
        const key = rotation(org.adminKeys);
        let n = 0;
        return [
          {
            method: 'POST',
            path: `${prefix}/licenses`,
            setupRequest(req) {
              req.headers = bearer(key());
              req.body = JSON.stringify({
                product_id: issueProduct,
                customer_email: `buyer${n++}@example.com`,
                valid_days: 365,
              });
              return req;
            },
          },
        ];
      },
    },
  ];
}

module.exports = { issueTokens, scenarios, syncTracker, checkBatch };
