import { LicenseView, ProductView, SerialStatus } from '@licensing/contracts';
import { eventRow } from './record-event';

const ORG = '0190b4a6-5a39-7d55-9d47-6bc7d35f7f53';
const AT = new Date('2026-11-25T10:00:00.000Z');
const product = { id: 'p-1', name: 'Photo Editor' } as ProductView;
const license = { id: 'l-1', serial: 'LIC-A', status: 'revoked' } as LicenseView;
const serialStatus: SerialStatus = {
  serial: 'LIC-A',
  org_id: ORG,
  license_id: 'l-1',
  product_id: 'p-1',
  status: 'revoked',
  revoked_at: AT.toISOString(),
  valid_until: null,
  max_seats: 1,
  version: AT.getTime(),
};

describe('eventRow', () => {
  it("publishes a license event with its serial status on its organization's subject", () => {
    const { published, row } = eventRow({
      type: 'license.revoked',
      orgId: ORG,
      data: license,
      occurredAt: AT,
      serialStatus,
    });
    expect(row).toEqual({
      id: published.id,
      subject: `licensing.events.${ORG}.license.revoked`,
      payload: JSON.stringify(published),
    });
    expect(published).toMatchObject({
      type: 'license.revoked',
      org_id: ORG,
      occurred_at: AT.toISOString(),
      data: license,
      serial_status: serialStatus,
    });
  });

  it('publishes any other event without a serial status', () => {
    const { published } = eventRow({ type: 'product.created', orgId: ORG, data: product });
    expect(published).not.toHaveProperty('serial_status');
  });
});

// The `@ts-expect-error` lines are checked by `npm run typecheck`: it fails if one of them compiles.
export function wrongEvents(): void {
  // @ts-expect-error a license event carries the license's serial status
  eventRow({ type: 'license.revoked', orgId: ORG, data: license });
  // @ts-expect-error product.created carries a product, not a license
  eventRow({ type: 'product.created', orgId: ORG, data: license });
  // @ts-expect-error only license events carry a serial status
  eventRow({ type: 'product.created', orgId: ORG, data: product, serialStatus });
  // @ts-expect-error license.usage_incremented carries the increment
  eventRow({ type: 'license.usage_incremented', orgId: ORG, data: license, serialStatus });
}
