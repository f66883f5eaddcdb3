import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime, pageInfo, queryString, wordList } from '../data';
import type { Delivery, DeliveryDetail, Webhook, WebhookSecret } from '../types';
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
  TableWrap,
} from '../ui';

const PER_PAGE = 20;
const NEW_WEBHOOK = { url: '', events: '*', description: '' };

/** Endpoints that receive the organization's events (admin keys only: the API says so to others). */
export function WebhooksPage() {
  const { canWrite } = useSession();
  const hooks = useResource(
    () =>
      canWrite ? api.get<{ webhooks: Webhook[] }>('/webhooks?per_page=100') : Promise.resolve(undefined),
    [canWrite],
  );
  const [form, setForm] = useState(NEW_WEBHOOK);
  const [created, setCreated] = useState<Webhook & { secret: string }>();
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
          setCreated(undefined);
          void run(async () => {
            setCreated(
              await api.post<Webhook & { secret: string }>('/webhooks', {
                url: form.url.trim(),
                events: wordList(form.events),
                description: form.description.trim() || undefined,
              }),
            );
            setForm(NEW_WEBHOOK);
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
      {created && (
        <div class="notice ok" role="status" data-testid="created">
          <p>
            Created the webhook <a href={`#/webhooks/${created.id}`}>{created.url}</a>, id{' '}
            <code>{created.id}</code>. Its signing secret, shown only this once; copy it now:
          </p>
          <output class="mono wrap secret" data-testid="new-webhook-secret">
            {created.secret}
          </output>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <Async resource={hooks}>
        {(answer) =>
          !answer || answer.webhooks.length === 0 ? (
            <Empty>No webhook: events are not sent anywhere.</Empty>
          ) : (
            <TableWrap label="Webhooks">
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
            </TableWrap>
          )
        }
      </Async>
    </>
  );
}

/**
 * One endpoint: its settings (edited in place), a new secret (shown once), a test event, delete,
 * and its delivery log a page at a time; a delivery opens with its payload and can be sent again.
 */
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
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const [secret, setSecret] = useState<WebhookSecret>();
  const [shown, setShown] = useState<string>();
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
            <dl class="facts">
              <dt>Events</dt>
              <dd>{h.events.join(', ')}</dd>
              <dt>State</dt>
              <dd data-testid="webhook-state">
                {h.enabled ? 'enabled' : `disabled${h.disabled_reason ? `: ${h.disabled_reason}` : ''}`}
              </dd>
              <dt>Description</dt>
              <dd>{h.description || '—'}</dd>
              <dt>Updated</dt>
              <dd>{formatTime(h.updated_at)}</dd>
            </dl>
            <div class="actions">
              <button
                type="button"
                aria-expanded={editing}
                onClick={() => {
                  setEditing(!editing);
                  setSaved(false);
                }}
              >
                Edit
              </button>
              <button
                type="button"
                disabled={test.busy || !h.enabled}
                onClick={() =>
                  void test.run(() => api.post(`/webhooks/${h.id}/test`).then(deliveries.reload))
                }
              >
                Send a test event
              </button>
              <ConfirmButton
                label="Rotate secret"
                question="Make a new signing secret? For 24 hours every delivery is signed with both, so the receiver can switch."
                confirm="Rotate secret"
                action={async () => {
                  setSecret(await api.post<WebhookSecret>(`/webhooks/${h.id}/rotate-secret`));
                  hook.reload();
                }}
              />
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
            {saved && (
              <p class="notice ok" role="status">
                Saved the webhook's settings.
              </p>
            )}
            {secret && (
              <div class="notice ok" role="status">
                <p>
                  The new signing secret, shown only this once; copy it now. The previous one also signs
                  deliveries until {formatTime(secret.previous_secret_expires_at)}.
                </p>
                <output class="mono wrap secret" data-testid="new-webhook-secret">
                  {secret.secret}
                </output>
                <button type="button" onClick={() => setSecret(undefined)}>
                  I have copied it
                </button>
              </div>
            )}
            {editing && (
              <EditWebhook
                hook={h}
                onCancel={() => setEditing(false)}
                onSaved={() => {
                  setEditing(false);
                  setSaved(true);
                  hook.reload();
                }}
              />
            )}
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
                <TableWrap label="Deliveries">
                  <table>
                    <caption class="visually-hidden">Deliveries</caption>
                    <thead>
                      <tr>
                        <th scope="col">Event</th>
                        <th scope="col">Status</th>
                        <th scope="col">Attempts</th>
                        <th scope="col">Last answer</th>
                        <th scope="col">Created</th>
                        <th scope="col">
                          <span class="visually-hidden">Actions</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {rows.map((d) => (
                        <tr key={d.id}>
                          <td>{d.event_type}</td>
                          <td>
                            <DeliveryStatus status={d.status} />
                          </td>
                          <td>{d.attempts}</td>
                          <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
                          <td>{formatTime(d.created_at)}</td>
                          <td>
                            <button
                              type="button"
                              aria-expanded={shown === d.id}
                              aria-controls={shown === d.id ? 'delivery' : undefined}
                              onClick={() => setShown(shown === d.id ? undefined : d.id)}
                            >
                              {shown === d.id ? 'Hide' : 'Show'}
                              <span class="visually-hidden">
                                {' '}
                                delivery of {d.event_type}, {formatTime(d.created_at)}
                              </span>
                            </button>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
                <Pager info={pageInfo(page, PER_PAGE, total)} onPage={setPage} label="Deliveries" />
              </>
            )
          }
        </Async>
        {shown && (
          <DeliveryPanel id={shown} onClose={() => setShown(undefined)} onRedelivered={deliveries.reload} />
        )}
      </section>
    </>
  );
}

function DeliveryStatus({ status }: { status: Delivery['status'] }) {
  return <span class={`badge delivery-${status}`}>{status}</span>;
}

/** A webhook's url, events, description and whether it receives events (`PUT /webhooks/:id`). */
function EditWebhook({
  hook,
  onCancel,
  onSaved,
}: {
  hook: Webhook;
  onCancel: () => void;
  onSaved: () => void;
}) {
  const [form, setForm] = useState({
    url: hook.url,
    events: hook.events.join(', '),
    description: hook.description ?? '',
    enabled: hook.enabled,
  });
  const { busy, error, fields, run } = useAction();
  return (
    <form
      class="grid panel edit"
      aria-label="Edit webhook"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void run(async () => {
          await api.put<Webhook>(`/webhooks/${hook.id}`, {
            url: form.url.trim(),
            events: wordList(form.events),
            description: form.description.trim() || null,
            enabled: form.enabled,
          });
          onSaved();
        });
      }}
    >
      <Field label="Endpoint URL" error={fields.url}>
        <input
          name="url"
          type="url"
          value={form.url}
          onInput={(e) => setForm({ ...form, url: e.currentTarget.value })}
        />
      </Field>
      <Field
        label="Events"
        hint="Comma-separated: event types, license.*, or * for all"
        error={fields.events}
      >
        <input
          name="events"
          value={form.events}
          onInput={(e) => setForm({ ...form, events: e.currentTarget.value })}
        />
      </Field>
      <Field label="Description" error={fields.description}>
        <input
          name="description"
          value={form.description}
          onInput={(e) => setForm({ ...form, description: e.currentTarget.value })}
        />
      </Field>
      <label class="check">
        <input
          type="checkbox"
          name="enabled"
          checked={form.enabled}
          onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })}
        />
        <span>Enabled</span>
        <small class="muted">Off pauses deliveries; on resumes them.</small>
      </label>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Save webhook
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {error && <ErrorNotice message={error} />}
    </form>
  );
}

/** One delivery: its status and last answer, the exact payload it sends, and a redelivery. */
function DeliveryPanel({
  id,
  onClose,
  onRedelivered,
}: {
  id: string;
  onClose: () => void;
  onRedelivered: () => void;
}) {
  const delivery = useResource(() => api.get<DeliveryDetail>(`/webhook-deliveries/${id}`), [id]);
  const redeliver = useAction();
  const [queued, setQueued] = useState(false);
  return (
    <section id="delivery" class="panel" aria-labelledby="delivery-title">
      <Async resource={delivery}>
        {(d) => (
          <>
            <h3 id="delivery-title">
              Delivery of {d.event_type} <DeliveryStatus status={d.status} />
            </h3>
            <dl class="facts">
              <dt>Delivery</dt>
              <dd class="mono wrap">{d.id}</dd>
              <dt>Event</dt>
              <dd class="mono wrap">{d.event_id}</dd>
              <dt>Attempts</dt>
              <dd>{d.attempts}</dd>
              <dt>Last answer</dt>
              <dd>
                {d.last_status_code ?? '—'}
                {d.last_error ? ` (${d.last_error})` : ''}
                {d.last_duration_ms === null ? '' : `, in ${d.last_duration_ms} ms`}
              </dd>
              <dt>Last attempt</dt>
              <dd>{formatTime(d.last_attempt_at)}</dd>
              {d.next_attempt_at && (
                <>
                  <dt>Next attempt</dt>
                  <dd>{formatTime(d.next_attempt_at)}</dd>
                </>
              )}
              <dt>Delivered</dt>
              <dd>{formatTime(d.delivered_at)}</dd>
            </dl>
            <h4>Payload</h4>
            {/* Focusable: a scrolling region must be reachable with the keyboard. */}
            <pre
              class="payload"
              tabIndex={0}
              role="region"
              aria-label="Payload"
              data-testid="delivery-payload"
            >
              {JSON.stringify(d.payload, null, 2)}
            </pre>
            <div class="actions">
              <button
                type="button"
                class="primary"
                disabled={redeliver.busy}
                onClick={() =>
                  void redeliver.run(async () => {
                    setQueued(false);
                    await api.post(`/webhook-deliveries/${d.id}/redeliver`);
                    setQueued(true);
                    delivery.reload();
                    onRedelivered();
                  })
                }
              >
                Redeliver
              </button>
              <button type="button" onClick={onClose}>
                Close
              </button>
            </div>
            {queued && (
              <p class="notice ok" role="status">
                Sent again: the same event, with a fresh set of attempts.
              </p>
            )}
            {redeliver.error && <ErrorNotice message={redeliver.error} />}
          </>
        )}
      </Async>
    </section>
  );
}
