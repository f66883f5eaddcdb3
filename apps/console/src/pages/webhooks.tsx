import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime, pageInfo, queryString, wordList } from '../data';
import type { Delivery, Webhook } from '../types';
import {
  Async,
  ConfirmButton,
  Empty,
  ErrorNotice,
  Field,
  Pager,
  useAction,
  useResource,
  useSession,
} from '../ui';

const PER_PAGE = 20;

/** Endpoints that receive the organization's events (admin keys only: the API says so to others). */
export function WebhooksPage() {
  const { canWrite } = useSession();
  const hooks = useResource(
    () =>
      canWrite ? api.get<{ webhooks: Webhook[] }>('/webhooks?per_page=100') : Promise.resolve(undefined),
    [canWrite],
  );
  const [form, setForm] = useState({ url: '', events: '*', description: '' });
  const [secret, setSecret] = useState<string>();
  const { busy, error, run } = useAction();
  if (!canWrite) {
    return (
      <>
        <h1>Webhooks</h1>
        <Empty>Webhooks and their deliveries are visible to admin keys only.</Empty>
      </>
    );
  }
  return (
    <>
      <h1>Webhooks</h1>
      <form
        class="grid panel"
        aria-label="New webhook"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const created = await api.post<Webhook & { secret: string }>('/webhooks', {
              url: form.url.trim(),
              events: wordList(form.events),
              description: form.description.trim() || undefined,
            });
            setSecret(created.secret);
            hooks.reload();
          });
        }}
      >
        <Field label="Endpoint URL" hint="HTTPS, reachable from the platform">
          <input
            name="url"
            type="url"
            required
            value={form.url}
            onInput={(e) => setForm({ ...form, url: e.currentTarget.value })}
          />
        </Field>
        <Field
          label="Events"
          hint="Comma-separated: event types (license.revoked), one resource's (license.*), or * for all"
        >
          <input
            name="events"
            required
            value={form.events}
            onInput={(e) => setForm({ ...form, events: e.currentTarget.value })}
          />
        </Field>
        <Field label="Description">
          <input
            name="description"
            value={form.description}
            onInput={(e) => setForm({ ...form, description: e.currentTarget.value })}
          />
        </Field>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Create webhook
          </button>
        </div>
        {error && <ErrorNotice message={error} />}
      </form>
      {secret && (
        <div class="notice ok" role="status">
          <p>The signing secret, shown only this once:</p>
          <output class="mono wrap secret">{secret}</output>
          <button type="button" onClick={() => setSecret(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <Async resource={hooks}>
        {(answer) =>
          !answer || answer.webhooks.length === 0 ? (
            <Empty>No webhook: events are not sent anywhere.</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">URL</th>
                    <th scope="col">Events</th>
                    <th scope="col">State</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {answer.webhooks.map((hook) => (
                    <tr key={hook.id}>
                      <td>
                        <a href={`#/webhooks/${hook.id}`} class="wrap">
                          {hook.url}
                        </a>
                      </td>
                      <td>{hook.events.join(', ')}</td>
                      <td>
                        {hook.enabled
                          ? 'enabled'
                          : `disabled${hook.disabled_reason ? `: ${hook.disabled_reason}` : ''}`}
                      </td>
                      <td>{formatTime(hook.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Async>
    </>
  );
}

/** One endpoint: send a test event, delete it, and its delivery log a page at a time. */
export function WebhookDetail({ id }: { id: string }) {
  const hook = useResource(() => api.get<Webhook>(`/webhooks/${id}`), [id]);
  const [page, setPage] = useState(1);
  const deliveries = useResource(
    () =>
      api.get<{ deliveries: Delivery[]; total: number }>(
        `/webhooks/${id}/deliveries${queryString({ page, per_page: PER_PAGE })}`,
      ),
    [id, page],
  );
  const test = useAction();
  return (
    <>
      <p>
        <a href="#/webhooks">← Webhooks</a>
      </p>
      <Async resource={hook}>
        {(h) => (
          <>
            <h1 class="wrap">{h.url}</h1>
            <p>
              {h.events.join(', ')} · {h.enabled ? 'enabled' : 'disabled'}
              {h.description ? ` · ${h.description}` : ''}
            </p>
            <div class="actions">
              <button
                type="button"
                disabled={test.busy}
                onClick={() =>
                  void test.run(() => api.post(`/webhooks/${h.id}/test`).then(deliveries.reload))
                }
              >
                Send a test event
              </button>
              <ConfirmButton
                label="Delete"
                danger
                question={`Delete the webhook ${h.url}? Its pending deliveries are dropped.`}
                confirm="Delete webhook"
                action={async () => {
                  await api.delete(`/webhooks/${h.id}`);
                  window.location.hash = '#/webhooks';
                }}
              />
            </div>
            {test.error && <ErrorNotice message={test.error} />}
          </>
        )}
      </Async>
      <section aria-labelledby="deliveries">
        <h2 id="deliveries">Deliveries</h2>
        <Async resource={deliveries}>
          {({ deliveries: rows, total }) =>
            total === 0 ? (
              <Empty>No delivery yet.</Empty>
            ) : (
              <>
                <div class="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Event</th>
                        <th scope="col">Status</th>
                        <th scope="col">Attempts</th>
                        <th scope="col">Last answer</th>
                        <th scope="col">Created</th>
                      </tr>
                    </thead>
                    <tbody>
                      {rows.map((d) => (
                        <tr key={d.id}>
                          <td>{d.event_type}</td>
                          <td>{d.status}</td>
                          <td>{d.attempts}</td>
                          <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
                          <td>{formatTime(d.created_at)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager info={pageInfo(page, PER_PAGE, total)} onPage={setPage} label="Deliveries" />
              </>
            )
          }
        </Async>
      </section>
    </>
  );
}
