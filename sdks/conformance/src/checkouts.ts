// Checked-out license files: a license file with an expiry of its own (`exp` before `valid_until`,
// or any `exp` on a perpetual license), made by the platform's buildCheckoutClaims.
import {
  buildCheckoutClaims,
  signJws,
  type BuildClaimsInput,
  type CheckoutExtraClaims,
  type CheckoutInput,
} from '@licensing/license-format';
import {
  ALGORITHMS,
  date,
  FINGERPRINT,
  licenseSummary,
  OTHER_FINGERPRINT,
  stable,
  type Context,
} from './context';
import { parts, withPayload } from './jose';
import { LICENSE_INPUT } from './licenses';
import type { TestKey } from './test-keys';
import { DAY, NOW, VectorFileBuilder, type VectorFile } from './vector-file';

/** The license ends in 30 days; a checkout made now lasts 7. */
const VALID_UNTIL = NOW + 30 * DAY;
const FILE_EXP = NOW + 7 * DAY;

export function checkoutVectors(context: Context): VectorFile {
  const { keys } = context;
  const file = new VectorFileBuilder(
    'license',
    'Checked-out license files (POST /v1/licenses/:id/checkout and /v1/activations/:id/checkout): ' +
      'license files whose exp is their own expiry. Verified as license files.',
  );
  const checkout = (
    key: TestKey,
    out: Partial<CheckoutInput> = {},
    license: Partial<BuildClaimsInput> = {},
    extra: CheckoutExtraClaims = {},
  ): string => {
    const claims = buildCheckoutClaims(
      { ...LICENSE_INPUT, issuedAt: date(NOW), ...license },
      { expiresAt: date(FILE_EXP), ...out },
      extra,
    );
    return stable(context, signJws(claims, { kid: key.kid!, privateKey: key.privateKey }), key);
  };
  const add = (
    id: string,
    description: string,
    key: string,
    token: string,
    options: Record<string, unknown>,
    errors: string[],
  ): void =>
    file.add({
      id,
      description,
      key,
      input: { text: token },
      options: { now: NOW, ...options },
      expected: {
        valid: errors.length === 0,
        errors,
        license: errors.includes('malformed') ? null : licenseSummary(token, errors),
      },
    });

  for (const algorithm of ALGORITHMS) {
    const key = keys[`product-${algorithm}`]!;
    const pem = file.pem(key);
    const token = checkout(key);
    add(
      `${algorithm}/valid`,
      `A 7-day checkout signed with the ${algorithm} key, a day after checkout`,
      pem,
      token,
      { now: NOW + DAY },
      [],
    );
    add(
      `${algorithm}/file-expired`,
      `The same checkout at its exp, before the license's valid_until`,
      pem,
      token,
      { now: FILE_EXP },
      ['file_expired'],
    );
    add(
      `${algorithm}/exp-extended`,
      "The same checkout with its exp moved to the license's valid_until after signing",
      pem,
      withPayload(token, { ...parts(token).payload, exp: VALID_UNTIL }),
      { now: FILE_EXP },
      ['signature_invalid'],
    );
  }

  const ed = keys['product-ed25519']!;
  const pem = file.pem(ed);
  const token = checkout(ed);
  add('time/before-exp', "One second before the file's exp", pem, token, { now: FILE_EXP - 1 }, []);
  add(
    'time/file-expired-within-tolerance',
    "30 s past the file's exp with a 60 s clock tolerance",
    pem,
    token,
    {
      now: FILE_EXP + 30,
      clock_tolerance_seconds: 60,
    },
    [],
  );
  add(
    'time/file-expired-beyond-tolerance',
    "61 s past the file's exp with a 60 s clock tolerance",
    pem,
    token,
    {
      now: FILE_EXP + 61,
      clock_tolerance_seconds: 60,
    },
    ['file_expired'],
  );
  add(
    'time/license-ended',
    "Past the license's valid_until too: both the license and the file have ended",
    pem,
    token,
    {
      now: VALID_UNTIL,
    },
    ['expired', 'file_expired'],
  );
  const capped = checkout(ed, { expiresAt: date(VALID_UNTIL + 30 * DAY) });
  add(
    'time/capped-before-end',
    'A checkout asked past valid_until is capped at it: an ordinary file',
    pem,
    capped,
    {
      now: VALID_UNTIL - 1,
    },
    [],
  );
  add(
    'time/capped-at-end',
    'The capped checkout at valid_until: expired, and not file_expired',
    pem,
    capped,
    {
      now: VALID_UNTIL,
    },
    ['expired'],
  );
  const perpetual = checkout(ed, {}, { licenseType: 'perpetual', validUntil: null });
  add(
    'time/perpetual-valid',
    'A checkout of a perpetual license: it expires on its own',
    pem,
    perpetual,
    {},
    [],
  );
  add(
    'time/perpetual-file-expired',
    'That checkout at its exp: only the file has expired',
    pem,
    perpetual,
    {
      now: FILE_EXP,
    },
    ['file_expired'],
  );
  add(
    'time/valid-until-unreadable',
    "A signed valid_until that is not a date: exp is then the license's end, so expired",
    pem,
    stable(
      context,
      signJws(
        { ...parts(token).payload, valid_until: 'not a date' },
        { kid: ed.kid!, privateKey: ed.privateKey },
      ),
      ed,
    ),
    { now: FILE_EXP },
    ['expired'],
  );

  const machine = checkout(ed, { fingerprint: FINGERPRINT });
  add(
    'machine/fingerprint-match',
    "An activation's checkout, on its machine",
    pem,
    machine,
    { fingerprint: FINGERPRINT },
    [],
  );
  add(
    'machine/fingerprint-mismatch',
    "An activation's checkout, on another machine",
    pem,
    machine,
    {
      fingerprint: OTHER_FINGERPRINT,
    },
    ['fingerprint_mismatch'],
  );
  add(
    'machine/fingerprint-not-given',
    "An activation's checkout, no fingerprint given: not checked",
    pem,
    machine,
    {},
    [],
  );
  const nodeLocked = checkout(
    ed,
    { fingerprint: FINGERPRINT },
    { licenseType: 'node_locked', hardwareBinding: { fingerprint: FINGERPRINT } },
  );
  add(
    'machine/node-locked-mismatch',
    "A node-locked license's activation checkout on another machine: one error",
    pem,
    nodeLocked,
    {
      fingerprint: OTHER_FINGERPRINT,
    },
    ['fingerprint_mismatch'],
  );

  const policy = {
    id: '7e6d5c4b-3a29-4817-9605-f4e3d2c1b0a9',
    name: 'Floating, 5 machines',
    max_machines: 5,
    max_processes: null,
    max_uses: 1000,
    uses_reset: 'month',
    heartbeat_interval_seconds: 600,
    heartbeat_grace_seconds: 120,
    check_in_interval_days: 14,
    overage: 'none',
    machine_matching: 'any',
  };
  add(
    'policy/limits',
    "A checkout carrying its policy's limits: the summary shows them",
    pem,
    checkout(ed, {}, {}, { policy }),
    {},
    [],
  );
  add(
    'policy/unknown-member',
    'A policy member verifiers do not know: kept',
    pem,
    checkout(ed, {}, {}, { policy: { ...policy, future_limit: 3 } as typeof policy }),
    {},
    [],
  );
  add(
    'policy/wrong-type',
    'A policy whose max_machines is a string: malformed',
    pem,
    stable(
      context,
      signJws(
        { ...parts(token).payload, policy: { max_machines: '5' } },
        { kid: ed.kid!, privateKey: ed.privateKey },
      ),
      ed,
    ),
    {},
    ['malformed'],
  );
  add(
    'entitlements',
    'A checkout with entitlements',
    pem,
    checkout(ed, {}, { entitlements: ['cloud-sync'] }),
    {},
    [],
  );
  return file.build();
}
