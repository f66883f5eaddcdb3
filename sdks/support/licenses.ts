// Licenses the SDKs' online specs hand to their tests, each with a license token: the id, the
// serial and the token, as the tests read them from one JSON variable.
import { ApiClient, createLicense } from '@licensing/shared/testing';

export interface TokenLicense {
  id: string;
  serial: string;
  token: string;
}

/** A license of the product, and a token for it. */
export async function licenseWithToken(api: ApiClient, body: Record<string, unknown>): Promise<TokenLicense> {
  const license = await createLicense(api, body);
  const token = await api.post(`/api/v1/licenses/${license.id}/tokens`, { name: 'sdk' });
  expect(token.status).toBe(201);
  return { id: license.id as string, serial: license.serial as string, token: token.body.token as string };
}

export interface OutageLicenses {
  lapsing: TokenLicense;
  reviving: TokenLicense;
}

/**
 * Seconds a seat of the outage licenses lives after its last heartbeat. The clients beat at half of
 * it: a beat that fails leaves more than a second for the next one to keep the seat.
 */
export const OUTAGE_HEARTBEAT_SECONDS = 6;

/**
 * What the outage tests start from: two licenses whose seats lapse 6 s after the last heartbeat.
 * `lapsing` has no heartbeat grace: its seat is swept at once. `reviving` has a grace of 30 s: its
 * seat says HEARTBEAT_DEAD, and a heartbeat brings it back.
 */
export async function outageLicenses(api: ApiClient, productId: string): Promise<OutageLicenses> {
  const licenseWithGrace = async (graceSeconds: number): Promise<TokenLicense> => {
    const policy = await api.post('/api/v1/policies', {
      product_id: productId,
      name: `outage, ${graceSeconds} s of grace`,
      max_machines: 2,
      heartbeat_interval_seconds: OUTAGE_HEARTBEAT_SECONDS,
      heartbeat_grace_seconds: graceSeconds,
    });
    expect(policy.status).toBe(201);
    return licenseWithToken(api, { policy_id: policy.body.id });
  };
  return { lapsing: await licenseWithGrace(0), reviving: await licenseWithGrace(30) };
}
