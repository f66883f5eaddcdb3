import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import {
  base64Bytes,
  dailyUsageSeries,
  type DurationUnit,
  expiryInstant,
  formatTime,
  licenseChanges,
  licenseEdit,
  pageInfo,
  parseRelayRequest,
  queryString,
  relayFileBody,
  type RelayFileForm,
  wordList,
} from '../data';
import {
  Activation,
  AuditEvent,
  Entitlement,
  LICENSE_STATUSES,
  LICENSE_TYPES,
  License,
  LicenseStatus,
  LicenseToken,
  LicenseUsage,
  Product,
  RelayFile,
  RelayFileCreated,
} from '../types';
import {
  Async,
  Chart,
  ConfirmButton,
  DownloadButton,
  Empty,
  ErrorNotice,
  Field,
  FieldErrors,
  Pager,
  routeQuery,
  useAction,
  useResource,
  useSession,
  TableWrap,
} from '../ui';

const PER_PAGE = 20;

interface Filters {
  serial: string;
  customer_email: string;
  product_id: string;
  status: string;
}

/** Search (serial, e-mail, product, status), a page at a time from the server, and create. */
export function LicensesPage() {
  const { canWrite } = useSession();
  const query = routeQuery();
  const initial: Filters = {
    serial: '',
    customer_email: '',
    product_id: query.get('product') ?? '',
    status: query.get('status') ?? '',
  };
  const [draft, setDraft] = useState<Filters>(initial);
  const [filters, setFilters] = useState<Filters>(initial);
  const [page, setPage] = useState(1);
  const products = useResource(() => api.get<{ products: Product[] }>('/products?per_page=100'), []);
  const list = useResource(
    () =>
      api.get<{ licenses: License[]; total: number }>(
        `/licenses${queryString({ ...filters, serial: filters.serial.trim(), customer_email: filters.customer_email.trim(), page, per_page: PER_PAGE })}`,
      ),
    [filters, page],
  );
  const set = (name: keyof Filters) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [name]: event.currentTarget.value });

  return (
    <>
      <h1>Licenses</h1>
      {canWrite && <CreateLicense products={products.data?.products ?? []} onCreated={list.reload} />}
      <form
        class="filters"
        role="search"
        aria-label="Search licenses"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(1);
          setFilters(draft);
        }}
      >
        <Field label="Serial">
          <input name="serial" value={draft.serial} onInput={set('serial')} placeholder="LIC-…" />
        </Field>
        <Field label="Customer e-mail">
          <input name="customer_email" value={draft.customer_email} onInput={set('customer_email')} />
        </Field>
        <Field label="Product">
          <select name="product_id" value={draft.product_id} onChange={set('product_id')}>
            <option value="">Any product</option>
            {products.data?.products.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Status">
          <select name="status" value={draft.status} onChange={set('status')}>
            <option value="">Any status</option>
            {LICENSE_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit">Search</button>
      </form>
      <Async resource={list}>
        {({ licenses, total }) =>
          total === 0 ? (
            <Empty>
              No license matches.{' '}
              {canWrite ? 'Create one above, or change the search.' : 'Change the search.'}
            </Empty>
          ) : (
            <>
              <TableWrap label="Licenses">
                <table>
                  <caption class="visually-hidden">Licenses</caption>
                  <thead>
                    <tr>
                      <th scope="col">Serial</th>
                      <th scope="col">Customer</th>
                      <th scope="col">Product</th>
                      <th scope="col">Status</th>
                      <th scope="col">Valid until</th>
                    </tr>
                  </thead>
                  <tbody>
                    {licenses.map((license) => (
                      <tr key={license.id}>
                        <td>
                          <a href={`#/licenses/${license.id}`} class="mono">
                            {license.serial}
                          </a>
                        </td>
                        <td>{license.customer_email ?? '—'}</td>
                        <td>{license.product_name}</td>
                        <td>
                          <StatusBadge status={license.status} />
                        </td>
                        <td>{license.valid_until ? formatTime(license.valid_until) : 'never'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <Pager info={pageInfo(page, PER_PAGE, total)} onPage={setPage} label="Licenses" />
            </>
          )
        }
      </Async>
    </>
  );
}

export function StatusBadge({ status }: { status: LicenseStatus }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

const NEW_LICENSE = {
  product_id: '',
  customer_email: '',
  license_type: 'subscription',
  valid_days: '',
  max_seats: '1',
  features: '',
};

function CreateLicense({ products, onCreated }: { products: Product[]; onCreated: () => void }) {
  const [form, setForm] = useState(NEW_LICENSE);
  const { busy, error, run } = useAction();
  const [created, setCreated] = useState<License>();
  const set = (name: keyof typeof form) => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [name]: event.currentTarget.value });
  return (
    <details class="panel">
      <summary>Create a license</summary>
      {products.length === 0 ? (
        <Empty>
          A license needs a product: <a href="#/products">create one</a> first.
        </Empty>
      ) : (
        <form
          class="grid"
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              const license = await api.post<License>('/licenses', {
                product_id: form.product_id || products[0]!.id,
                customer_email: form.customer_email.trim() || undefined,
                license_type: form.license_type,
                valid_days: form.valid_days === '' ? undefined : Number(form.valid_days),
                max_seats: Number(form.max_seats),
                features: form.features.trim() ? wordList(form.features) : undefined,
              });
              setCreated(license);
              setForm(NEW_LICENSE);
              onCreated();
            });
          }}
        >
          <Field label="Product">
            <select name="product_id" value={form.product_id || products[0]!.id} onChange={set('product_id')}>
              {products.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Customer e-mail">
            <input
              name="customer_email"
              type="email"
              value={form.customer_email}
              onInput={set('customer_email')}
            />
          </Field>
          <Field label="Type">
            <select name="license_type" value={form.license_type} onChange={set('license_type')}>
              {LICENSE_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Valid days" hint="Empty: the product's default; 0: no end">
            <input
              name="valid_days"
              type="number"
              min={0}
              value={form.valid_days}
              onInput={set('valid_days')}
            />
          </Field>
          <Field label="Seats">
            <input
              name="max_seats"
              type="number"
              min={1}
              required
              value={form.max_seats}
              onInput={set('max_seats')}
            />
          </Field>
          <Field label="Features" hint="Comma-separated; empty: the product's defaults">
            <input name="features" value={form.features} onInput={set('features')} />
          </Field>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Create license
            </button>
          </div>
          {error && <ErrorNotice message={error} />}
          {created && (
            <p class="notice ok" role="status" data-testid="created">
              Created the license <a href={`#/licenses/${created.id}`}>{created.serial}</a> for{' '}
              {created.customer_email ?? 'no customer'}, id <code>{created.id}</code>.
            </p>
          )}
        </form>
      )}
    </details>
  );
}

/** One license: its fields, status changes, file, tokens, activations, usage and audit trail. */
export function LicenseDetail({ id }: { id: string }) {
  const { canWrite } = useSession();
  const license = useResource(() => api.get<License>(`/licenses/${id}`), [id]);
  const activations = useResource(
    () =>
      api.get<{ activations: Activation[]; total: number }>(
        `/activations${queryString({ license_id: id, per_page: 100 })}`,
      ),
    [id],
  );
  const usage = useResource(() => api.get<LicenseUsage>(`/licenses/${id}/usage?per_page=100`), [id]);
  // The audit log is for admin keys only: a read key is not asked for it.
  const audit = useResource(
    () =>
      canWrite
        ? api.get<{ audit_events: AuditEvent[] }>(
            `/audit-events${queryString({ resource_id: id, per_page: 50 })}`,
          )
        : Promise.resolve(undefined),
    [id, canWrite],
  );
  const reloadAll = () => {
    license.reload();
    audit.reload();
  };
  const now = useMemo(() => new Date(), [usage.data]);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState<string>();

  return (
    <>
      <p>
        <a href="#/licenses">← Licenses</a>
      </p>
      <Async resource={license}>
        {(l) => (
          <>
            <div class="page-head">
              <h1 class="mono">{l.serial}</h1>
              <StatusBadge status={l.status} />
            </div>
            <dl class="facts">
              <dt>Product</dt>
              <dd>{l.product_name}</dd>
              <dt>Customer</dt>
              <dd>
                {l.customer_email ?? '—'}
                {l.customer_id ? ` (${l.customer_id})` : ''}
              </dd>
              <dt>Type</dt>
              <dd>{l.license_type}</dd>
              <dt>Seats</dt>
              <dd>{l.max_seats}</dd>
              <dt>Features</dt>
              <dd>{l.features.join(', ') || '—'}</dd>
              <dt>Entitlements</dt>
              <dd class="mono">{l.entitlements.join(', ') || '—'}</dd>
              <dt>Uses</dt>
              <dd>
                {l.uses} of {l.max_uses ?? 'no limit'}
              </dd>
              <dt>Valid</dt>
              <dd>
                {formatTime(l.valid_from)} → {l.valid_until ? formatTime(l.valid_until) : 'no end'}
              </dd>
              {l.revoked_at && (
                <>
                  <dt>Revoked</dt>
                  <dd>{formatTime(l.revoked_at)}</dd>
                </>
              )}
            </dl>
            <div class="actions">
              <DownloadButton
                label="Download .lic"
                file={async () => ({
                  blob: await api.blob(`/licenses/${l.id}/download`),
                  name: `${l.serial}.lic`,
                })}
              />
              {canWrite && l.status === 'active' && (
                <ConfirmButton
                  label="Suspend"
                  question={`Suspend ${l.serial}? Its applications stop validating until it is reinstated.`}
                  confirm="Suspend license"
                  action={() => api.patch(`/licenses/${l.id}`, { status: 'suspended' }).then(reloadAll)}
                />
              )}
              {canWrite && l.status === 'suspended' && (
                <ConfirmButton
                  label="Reinstate"
                  question={`Reinstate ${l.serial}?`}
                  confirm="Reinstate license"
                  action={() => api.patch(`/licenses/${l.id}`, { status: 'active' }).then(reloadAll)}
                />
              )}
              {canWrite && l.status !== 'revoked' && (
                <button
                  type="button"
                  aria-expanded={editing}
                  onClick={() => {
                    setEditing(!editing);
                    setSaved(undefined);
                  }}
                >
                  Edit
                </button>
              )}
              {canWrite && l.status !== 'revoked' && (
                <ConfirmButton
                  label="Revoke"
                  danger
                  question={`Revoke ${l.serial} for good? This cannot be undone.`}
                  confirm="Revoke license"
                  action={() => api.delete(`/licenses/${l.id}`).then(reloadAll)}
                />
              )}
            </div>
            {saved && (
              <p class="notice ok" role="status">
                Saved the changes to {l.serial}: {saved}.
              </p>
            )}
            {editing && canWrite && l.status !== 'revoked' && (
              <EditLicense
                license={l}
                onCancel={() => setEditing(false)}
                onSaved={(fields) => {
                  setEditing(false);
                  setSaved(fields.join(', '));
                  reloadAll();
                }}
              />
            )}
          </>
        )}
      </Async>

      {canWrite && license.data && license.data.status !== 'revoked' && (
        <LicenseEntitlements license={license.data} onChange={reloadAll} />
      )}

      <LicenseTokens licenseId={id} revoked={license.data?.status === 'revoked'} />

      {license.data?.license_type === 'floating' && (
        <RelayFiles license={license.data} onIssued={audit.reload} />
      )}

      <section aria-labelledby="activations">
        <h2 id="activations">Activations</h2>
        <Async resource={activations}>
          {({ activations: rows }) =>
            rows.length === 0 ? (
              <Empty>No machine has activated this license.</Empty>
            ) : (
              <TableWrap label="Activations">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Fingerprint</th>
                      <th scope="col">Host</th>
                      <th scope="col">Activated</th>
                      <th scope="col">Last heartbeat</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((a) => (
                      <tr key={a.id}>
                        <td class="mono">{a.fingerprint}</td>
                        <td>{[a.hostname, a.platform].filter(Boolean).join(' · ') || '—'}</td>
                        <td>{formatTime(a.created_at)}</td>
                        <td>{formatTime(a.last_heartbeat_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )
          }
        </Async>
      </section>

      <section aria-labelledby="usage">
        <h2 id="usage">Usage</h2>
        <Async resource={usage}>
          {(u) =>
            u.syncs === 0 ? (
              <Empty>This license has not synced in the last 30 days.</Empty>
            ) : (
              <>
                <p>
                  {u.syncs} syncs, last {formatTime(u.last_sync_at)}; peak {u.peak_seats_in_use ?? '—'} seats
                  in use; versions {u.versions.join(', ') || '—'}.
                </p>
                <Chart
                  title="Syncs and machines per day (30 days)"
                  data={dailyUsageSeries(u.daily, now)}
                  series={['Syncs', 'Machines']}
                  summary={`${u.syncs} syncs from ${u.total} machines`}
                />
              </>
            )
          }
        </Async>
      </section>

      {canWrite && (
        <section aria-labelledby="audit">
          <h2 id="audit">Audit trail</h2>
          <Async resource={audit}>
            {(answer) =>
              !answer || answer.audit_events.length === 0 ? (
                <Empty>No change recorded yet.</Empty>
              ) : (
                <ol class="audit">
                  {answer.audit_events.map((event) => (
                    <li key={event.id}>
                      <strong>{event.action}</strong> {formatTime(event.occurred_at)} by {event.actor.name} (
                      <span class="mono">{event.actor.prefix}</span>)
                      {Object.keys(event.changes).length > 0 && (
                        <span class="muted"> — {Object.keys(event.changes).join(', ')}</span>
                      )}
                    </li>
                  ))}
                </ol>
              )
            }
          </Async>
        </section>
      )}
    </>
  );
}

const EDITED: Record<string, string> = {
  customer_email: 'customer e-mail',
  customer_id: 'customer ID',
  valid_until: 'end of validity',
  max_seats: 'seats',
  features: 'features',
};

/**
 * Edits a license's customer, end of validity, seats and features (`PATCH /licenses/:id`, which
 * signs it again). Only the fields that changed are sent; a refused field is marked where it is.
 */
function EditLicense({
  license,
  onCancel,
  onSaved,
}: {
  license: License;
  onCancel: () => void;
  onSaved: (fields: string[]) => void;
}) {
  const [form, setForm] = useState(() => licenseEdit(license));
  const { busy, error, fields, run } = useAction();
  const set = (name: keyof typeof form) => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [name]: event.currentTarget.value });
  return (
    <form
      class="grid panel edit"
      aria-label="Edit license"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void run(async () => {
          const edit = licenseChanges(license, form);
          if ('errors' in edit) throw new FieldErrors(edit.errors as Record<string, string>);
          const names = Object.keys(edit.changes);
          if (names.length === 0) throw new Error('Nothing changed.');
          await api.patch<License>(`/licenses/${license.id}`, edit.changes);
          onSaved(names.map((name) => EDITED[name] ?? name));
        });
      }}
    >
      <Field label="Customer e-mail" error={fields.customer_email}>
        <input
          name="customer_email"
          type="email"
          value={form.customer_email}
          onInput={set('customer_email')}
        />
      </Field>
      <Field
        label="Customer ID"
        hint="Your own reference for the customer; optional"
        error={fields.customer_id}
      >
        <input name="customer_id" value={form.customer_id} onInput={set('customer_id')} />
      </Field>
      <Field
        label="Valid until"
        hint="Your local time; empty: no end. In the past: the license is expired."
        error={fields.valid_until}
      >
        <input
          name="valid_until"
          type="datetime-local"
          value={form.valid_until}
          onInput={set('valid_until')}
        />
      </Field>
      <Field label="Seats" error={fields.max_seats}>
        <input name="max_seats" type="number" min={1} value={form.max_seats} onInput={set('max_seats')} />
      </Field>
      <Field label="Features" hint="Comma-separated" error={fields.features}>
        <input name="features" value={form.features} onInput={set('features')} />
      </Field>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Save license
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {error && <ErrorNotice message={error} />}
    </form>
  );
}

const TOKENS_PER_PAGE = 20;

/**
 * The license's tokens (never the tokens themselves), and for admin keys a form that creates one,
 * shown once, and a revoke button per token.
 */
/**
 * Admin controls for what a license holds: attach a catalog entitlement, detach one, and reset its
 * uses. Each change signs the license again; files downloaded before keep their claims.
 */
function LicenseEntitlements({ license, onChange }: { license: License; onChange: () => void }) {
  const catalog = useResource(
    () => api.get<{ entitlements: Entitlement[] }>('/entitlements?per_page=100'),
    [],
  );
  const [code, setCode] = useState('');
  const { busy, error, run } = useAction();
  const change = (method: 'post' | 'delete', codes: string[]) =>
    run(async () => {
      await (method === 'post'
        ? api.post(`/licenses/${license.id}/entitlements`, { codes })
        : api.delete(`/licenses/${license.id}/entitlements`, { codes }));
      setCode('');
      onChange();
    });
  return (
    <section aria-labelledby="entitlements">
      <h2 id="entitlements">Entitlements and uses</h2>
      {license.entitlements.length === 0 ? (
        <Empty>This license holds no entitlement.</Empty>
      ) : (
        <ul class="chips">
          {license.entitlements.map((held) => (
            <li key={held}>
              <span class="mono">{held}</span>{' '}
              <button type="button" disabled={busy} onClick={() => void change('delete', [held])}>
                Detach {held}
              </button>
            </li>
          ))}
        </ul>
      )}
      <Async resource={catalog}>
        {({ entitlements }) => {
          const attachable = entitlements.filter((e) => !license.entitlements.includes(e.code));
          return attachable.length === 0 ? (
            <p class="muted">Every entitlement of the catalog is attached, or the catalog is empty.</p>
          ) : (
            <form
              class="grid panel"
              aria-label="Attach an entitlement"
              onSubmit={(event) => {
                event.preventDefault();
                if (code) void change('post', [code]);
              }}
            >
              <Field label="Entitlement to attach">
                <select name="code" value={code} onChange={(e) => setCode(e.currentTarget.value)}>
                  <option value="">Choose one</option>
                  {attachable.map((e) => (
                    <option key={e.id} value={e.code}>
                      {e.code} ({e.name})
                    </option>
                  ))}
                </select>
              </Field>
              <div class="actions">
                <button type="submit" class="primary" disabled={busy || !code}>
                  Attach
                </button>
              </div>
            </form>
          );
        }}
      </Async>
      {error && <ErrorNotice message={error} />}
      <div class="actions">
        <ConfirmButton
          label="Reset uses"
          question={`Reset the uses of ${license.serial} (${license.uses} now) to 0?`}
          confirm="Reset uses"
          action={() => api.delete(`/licenses/${license.id}/usage`).then(onChange)}
        />
      </div>
    </section>
  );
}

function LicenseTokens({ licenseId, revoked }: { licenseId: string; revoked: boolean }) {
  const { canWrite } = useSession();
  const [page, setPage] = useState(1);
  const tokens = useResource(
    () =>
      api.get<{ license_tokens: LicenseToken[]; total: number }>(
        `/licenses/${licenseId}/tokens${queryString({ page, per_page: TOKENS_PER_PAGE })}`,
      ),
    [licenseId, page],
  );
  const [created, setCreated] = useState<LicenseToken & { token: string }>();
  const now = useMemo(() => new Date(), [tokens.data]);
  return (
    <section aria-labelledby="license-tokens">
      <h2 id="license-tokens">License tokens</h2>
      <p class="muted">
        A license token (<code>lt_…</code>) acts on this license only. Ship it with an application in place of
        an organization <code>client</code> key.
      </p>
      {canWrite && !revoked && (
        <CreateLicenseToken
          licenseId={licenseId}
          onCreated={(token) => {
            setCreated(token);
            setPage(1);
            tokens.reload();
          }}
        />
      )}
      {created && (
        <div class="notice ok" role="status">
          <p>
            The license token <strong>{created.name ?? created.prefix}</strong>, shown only this once; copy it
            now:
          </p>
          <output class="mono wrap secret" data-testid="new-license-token">
            {created.token}
          </output>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <Async resource={tokens}>
        {({ license_tokens: rows, total }) =>
          total === 0 ? (
            <Empty>
              This license has no token.{' '}
              {canWrite && !revoked ? 'Create one above for an application to hold.' : ''}
            </Empty>
          ) : (
            <>
              <TableWrap label="Tokens of this license">
                <table>
                  <caption class="visually-hidden">License tokens</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Prefix</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Created</th>
                      {canWrite && (
                        <th scope="col">
                          <span class="visually-hidden">Actions</span>
                        </th>
                      )}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((token) => {
                      const label = token.name ?? `${token.prefix}…`;
                      return (
                        <tr key={token.id}>
                          <td>{token.name ?? <span class="muted">unnamed</span>}</td>
                          <td class="mono">{token.prefix}…</td>
                          <td>
                            {token.expires_at ? formatTime(token.expires_at) : 'never'}{' '}
                            {token.expires_at && Date.parse(token.expires_at) <= now.getTime() && (
                              <span class="badge status-expired">expired</span>
                            )}
                          </td>
                          <td>{formatTime(token.created_at)}</td>
                          {canWrite && (
                            <td>
                              <ConfirmButton
                                label={`Revoke token ${label}`}
                                danger
                                question={`Revoke the license token ${label} (${token.prefix}…)? Applications holding it are refused at once.`}
                                confirm="Revoke token"
                                action={() => api.delete(`/license-tokens/${token.id}`).then(tokens.reload)}
                              />
                            </td>
                          )}
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </TableWrap>
              {total > TOKENS_PER_PAGE && (
                <Pager
                  info={pageInfo(page, TOKENS_PER_PAGE, total)}
                  onPage={setPage}
                  label="License tokens"
                />
              )}
            </>
          )
        }
      </Async>
    </section>
  );
}

function CreateLicenseToken({
  licenseId,
  onCreated,
}: {
  licenseId: string;
  onCreated: (token: LicenseToken & { token: string }) => void;
}) {
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const { busy, error, run } = useAction();
  return (
    <form
      class="grid panel"
      aria-label="New license token"
      onSubmit={(event) => {
        event.preventDefault();
        void run(async () => {
          const expiry = expiryInstant(expires, new Date());
          if ('error' in expiry) throw new Error(expiry.error);
          onCreated(
            await api.post<LicenseToken & { token: string }>(`/licenses/${licenseId}/tokens`, {
              name: name.trim() || undefined,
              expires_at: expiry.iso,
            }),
          );
          setName('');
          setExpires('');
        });
      }}
    >
      <Field label="Token name" hint="Optional: where it is shipped, e.g. photo-editor on ada-laptop">
        <input name="name" maxLength={255} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field label="Expires" hint="Optional, your local time; empty: works until revoked">
        <input
          name="expires_at"
          type="datetime-local"
          value={expires}
          onInput={(e) => setExpires(e.currentTarget.value)}
        />
      </Field>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Create license token
        </button>
      </div>
      {error && <ErrorNotice message={error} />}
    </form>
  );
}

const RELAY_FILES_PER_PAGE = 20;

/**
 * A floating license's relay files (their records: the files themselves are shown once, when
 * issued), and for admin keys a form that issues one from a relay's request and downloads it.
 */
function RelayFiles({ license, onIssued }: { license: License; onIssued: () => void }) {
  const { canWrite } = useSession();
  const [page, setPage] = useState(1);
  const files = useResource(
    () =>
      api.get<{ relay_files: RelayFile[]; total: number }>(
        `/relay-files${queryString({ license_id: license.id, page, per_page: RELAY_FILES_PER_PAGE })}`,
      ),
    [license.id, page],
  );
  const [issued, setIssued] = useState<RelayFileCreated>();
  const now = useMemo(() => new Date(), [files.data]);
  return (
    <section aria-labelledby="relay-files">
      <h2 id="relay-files">Relay files</h2>
      <p class="muted">
        A relay leases this license's seats on a network with no internet. It starts from a relay file issued
        to its site and key (<code>licensing-relay start --file</code>).
      </p>
      {canWrite &&
        (license.status === 'active' ? (
          <IssueRelayFile
            license={license}
            onIssued={(file) => {
              setIssued(file);
              setPage(1);
              files.reload();
              onIssued();
            }}
          />
        ) : (
          <p class="muted">Only an active license gets a relay file.</p>
        ))}
      {issued && (
        <div class="notice ok" role="status" data-testid="issued-relay-file">
          <p>
            Issued the relay file <code>{issued.id}</code> for <strong>{issued.site}</strong>, valid until{' '}
            {formatTime(issued.expires_at)}. Download it now: the platform keeps its record, not the file.
          </p>
          <div class="actions">
            <DownloadButton
              label="Download .relay.lic"
              file={async () => ({
                blob: new Blob([base64Bytes(issued.relay_file)], { type: 'application/octet-stream' }),
                name: `${license.serial}.relay.lic`,
              })}
            />
            <button type="button" onClick={() => setIssued(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      <Async resource={files}>
        {({ relay_files: rows, total }) =>
          total === 0 ? (
            <Empty>
              No relay file has been issued for this license.
              {canWrite && license.status === 'active' ? ' Issue one above from the relay request.' : ''}
            </Empty>
          ) : (
            <>
              <TableWrap label="Relay files of this license">
                <table>
                  <caption class="visually-hidden">Relay files</caption>
                  <thead>
                    <tr>
                      <th scope="col">Site</th>
                      <th scope="col">Id</th>
                      <th scope="col">Issued</th>
                      <th scope="col">Expires</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((file) => (
                      <tr key={file.id}>
                        <td>{file.site}</td>
                        <td class="mono">{file.id}</td>
                        <td>{formatTime(file.issued_at)}</td>
                        <td>
                          {formatTime(file.expires_at)}{' '}
                          {Date.parse(file.expires_at) <= now.getTime() && (
                            <span class="badge status-expired">expired</span>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              {total > RELAY_FILES_PER_PAGE && (
                <Pager
                  info={pageInfo(page, RELAY_FILES_PER_PAGE, total)}
                  onPage={setPage}
                  label="Relay files"
                />
              )}
            </>
          )
        }
      </Async>
    </section>
  );
}

const NEW_RELAY_FILE: RelayFileForm = { request: '', site: '', public_key: '', ttl: '', unit: 'days' };

/**
 * Issues a relay file: the relay request pasted (it fills the site and the public key), or both
 * typed, and an optional lifetime. A refused value is marked at its field.
 */
function IssueRelayFile({
  license,
  onIssued,
}: {
  license: License;
  onIssued: (file: RelayFileCreated) => void;
}) {
  const [form, setForm] = useState(NEW_RELAY_FILE);
  const { busy, error, fields, run } = useAction();
  const set = (name: 'site' | 'public_key' | 'ttl') => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [name]: event.currentTarget.value });
  const pasted = form.request.trim() === '' ? undefined : parseRelayRequest(form.request);
  return (
    <form
      class="grid panel"
      aria-label="Issue a relay file"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void run(async () => {
          const request = relayFileBody(form);
          if ('errors' in request) throw new FieldErrors(request.errors);
          onIssued(await api.post<RelayFileCreated>(`/licenses/${license.id}/relay-files`, request.body));
          setForm(NEW_RELAY_FILE);
        });
      }}
    >
      <Field
        label="Relay request"
        hint="Paste relay-request.json, which licensing-relay init writes: it fills the two fields below"
        error={fields['request'] ?? (pasted && 'error' in pasted ? pasted.error : undefined)}
        wide
      >
        <textarea
          name="request"
          rows={3}
          spellcheck={false}
          value={form.request}
          onInput={(event) => {
            const text = event.currentTarget.value;
            const request = text.trim() === '' ? undefined : parseRelayRequest(text);
            setForm(
              request && !('error' in request)
                ? { ...form, request: text, ...request }
                : { ...form, request: text },
            );
          }}
        />
      </Field>
      <Field label="Site" hint="The name the relay was set up with" error={fields['site']}>
        <input name="site" maxLength={200} value={form.site} onInput={set('site')} />
      </Field>
      <Field
        label="Lifetime"
        hint="Optional; empty: the organization's offline file lifetime"
        error={fields['ttl_seconds']}
      >
        <input name="ttl" type="number" min={0} step="any" value={form.ttl} onInput={set('ttl')} />
      </Field>
      <Field label="Unit">
        <select
          name="unit"
          value={form.unit}
          onChange={(event) => setForm({ ...form, unit: event.currentTarget.value as DurationUnit })}
        >
          <option value="days">days</option>
          <option value="hours">hours</option>
        </select>
      </Field>
      <Field
        label="Public key"
        hint="The relay's Ed25519 public key, a PEM block"
        error={fields['public_key']}
        wide
      >
        <textarea
          name="public_key"
          rows={4}
          spellcheck={false}
          value={form.public_key}
          onInput={set('public_key')}
        />
      </Field>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Issue relay file
        </button>
      </div>
      {error && <ErrorNotice message={error} />}
    </form>
  );
}
