import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { RANGES, RangeKey, UsageBucket, queryString, timeRange, topShares, usageSeries } from '../data';
import { LICENSE_STATUSES } from '../types';
import { Async, Chart, Empty, useResource } from '../ui';

const RANGE_LABELS: Record<RangeKey, string> = {
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

/** Licenses by status, active machines, syncs over time, top features and versions. */
export function OverviewPage() {
  const [rangeKey, setRangeKey] = useState<RangeKey>('30d');
  const range = useMemo(() => timeRange(rangeKey, new Date()), [rangeKey]);
  const window = `?from=${range.from.toISOString()}&to=${range.to.toISOString()}`;

  const statuses = useResource(
    () =>
      Promise.all(
        LICENSE_STATUSES.map(async (status) => ({
          status,
          total: (await api.get<{ total: number }>(`/licenses${queryString({ status, per_page: 1 })}`)).total,
        })),
      ),
    [],
  );
  const active = useResource(
    () => api.get<{ licenses: number; machines: number }>(`/analytics/active?window=${rangeKey}`),
    [rangeKey],
  );
  const day = useMemo(() => timeRange('24h', new Date()), [rangeKey]);
  const month = useMemo(() => timeRange('30d', new Date()), [rangeKey]);
  const usage = (r: typeof day) =>
    api
      .get<{ buckets: UsageBucket[] }>(
        `/analytics/usage${queryString({ from: r.from.toISOString(), to: r.to.toISOString(), interval: r.interval, per_page: 100 })}`,
      )
      .then(({ buckets }) => usageSeries(buckets, r));
  const hourly = useResource(() => usage(day), [day]);
  const daily = useResource(() => usage(month), [month]);
  const features = useResource(
    () =>
      api.get<{ features: { feature: string; count: number }[] }>(
        `/analytics/features${window}&per_page=100`,
      ),
    [window],
  );
  const versions = useResource(
    () =>
      api.get<{ versions: { app_version: string | null; count: number }[] }>(
        `/analytics/versions${window}&per_page=100`,
      ),
    [window],
  );

  return (
    <>
      <div class="page-head">
        <h1>Overview</h1>
        <label class="inline">
          <span>Time range</span>
          <select value={rangeKey} onChange={(event) => setRangeKey(event.currentTarget.value as RangeKey)}>
            {RANGES.map((key) => (
              <option key={key} value={key}>
                {RANGE_LABELS[key]}
              </option>
            ))}
          </select>
        </label>
      </div>

      <section aria-labelledby="by-status">
        <h2 id="by-status">Licenses by status</h2>
        <Async resource={statuses}>
          {(rows) => (
            <ul class="tiles">
              {rows.map(({ status, total }) => (
                <li key={status}>
                  <a href={`#/licenses?status=${status}`} class={`tile status-${status}`}>
                    <strong data-testid={`count-${status}`}>{total}</strong> {status}
                  </a>
                </li>
              ))}
            </ul>
          )}
        </Async>
      </section>

      <section aria-labelledby="active">
        <h2 id="active">Active seats ({RANGE_LABELS[rangeKey].toLowerCase()})</h2>
        <Async resource={active}>
          {(counts) => (
            <ul class="tiles">
              <li class="tile">
                <strong data-testid="active-licenses">{counts.licenses}</strong> licenses synced
              </li>
              <li class="tile">
                <strong data-testid="active-machines">{counts.machines}</strong> machines in use
              </li>
            </ul>
          )}
        </Async>
      </section>

      <section aria-labelledby="syncs">
        <h2 id="syncs">Syncs</h2>
        <div class="charts">
          <Async resource={hourly}>
            {(series) => (
              <Chart
                title="Last 24 hours, per hour"
                data={series.data}
                series={['Syncs', 'Licenses']}
                summary={`${series.total} syncs`}
              />
            )}
          </Async>
          <Async resource={daily}>
            {(series) => (
              <Chart
                title="Last 30 days, per day"
                data={series.data}
                series={['Syncs', 'Licenses']}
                summary={`${series.total} syncs`}
              />
            )}
          </Async>
        </div>
      </section>

      <div class="columns">
        <section aria-labelledby="features">
          <h2 id="features">Top features</h2>
          <Async resource={features}>
            {({ features: rows }) =>
              rows.length === 0 ? (
                <Empty>No sync reported a feature in this range.</Empty>
              ) : (
                <Bars
                  rows={topShares(rows).map((r) => ({ label: r.feature, count: r.count, share: r.share }))}
                />
              )
            }
          </Async>
        </section>
        <section aria-labelledby="versions">
          <h2 id="versions">App versions</h2>
          <Async resource={versions}>
            {({ versions: rows }) =>
              rows.length === 0 ? (
                <Empty>No sync in this range.</Empty>
              ) : (
                <Bars
                  rows={topShares(rows).map((r) => ({
                    label: r.app_version ?? 'not reported',
                    count: r.count,
                    share: r.share,
                  }))}
                />
              )
            }
          </Async>
        </section>
      </div>
    </>
  );
}

/** A ranked list with a bar per row: a <meter>, so its value is announced, not only drawn. */
function Bars({ rows }: { rows: { label: string; count: number; share: number }[] }) {
  return (
    <table class="bars">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Reports</th>
          <th scope="col" class="bar-cell">
            <span class="visually-hidden">Share</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.label}>
            <td>{row.label}</td>
            <td>{row.count}</td>
            <td class="bar-cell">
              <meter min={0} max={1} value={row.share} aria-label={`${row.label}: ${row.count} reports`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
