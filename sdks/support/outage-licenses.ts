// What the SDKs' outage tests start from: two licenses whose seats lapse 4 s after the last
// heartbeat, each with a license token. `lapsing` has no heartbeat grace: its seat is swept at once.
// `reviving` has a grace of 30 s: its seat says HEARTBEAT_DEAD, and a heartbeat brings it back.
import { ApiClient, createLicense } from '@licensing/shared/testing';

export interface OutageLicense {
  id: string;
  serial: string;
  token: string;
}

export interface OutageLicenses {
  lapsing: OutageLicense;
  reviving: OutageLicense;
}

/** Seconds a seat of these licenses lives after its last heartbeat. */
export const OUTAGE_HEARTBEAT_SECONDS = 4;

export async function outageLicenses(api: ApiClient, productId: string): Promise<OutageLicenses> {
  const licenseWithGrace = async (graceSeconds: number): Promise<OutageLicense> => {
    const policy = await api.post('/api/v1/policies', {
      product_id: productId,
      name: `outage, ${graceSeconds} s of grace`,
      max_machines: 2,
      heartbeat_interval_seconds: OUTAGE_HEARTBEAT_SECONDS,
      heartbeat_grace_seconds: graceSeconds,
    });
    expect(policy.status).toBe(201);
    const license = await createLicense(api, { policy_id: policy.body.id });
    const token = await api.post(`/api/v1/licenses/${license.id}/tokens`, { name: 'outage' });
    expect(token.status).toBe(201);
    return { id: license.id as string, serial: license.serial as string, token: token.body.token as string };
  };
  return { lapsing: await licenseWithGrace(0), reviving: await licenseWithGrace(30) };
}
