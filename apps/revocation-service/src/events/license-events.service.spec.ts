import { redeliveryDelayMs } from './license-events.service';

describe('redeliveryDelayMs', () => {
  it('waits longer on each redelivery while Redis is down, up to 15 s', () => {
    expect([0, 1, 2, 3, 10, 30, 31, 1000].map(redeliveryDelayMs)).toEqual([
      500, 500, 1000, 1500, 5000, 15000, 15000, 15000,
    ]);
  });
});
