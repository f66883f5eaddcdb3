import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime } from '../data';
import type { ApiKey, Scope } from '../types';
import {
  Async,
  ConfirmButton,
  Empty,
  ErrorNotice,
  Field,
  useAction,
  useResource,
  useSession,
  TableWrap,
} from '../ui';

const SCOPES: [Scope, string][] = [
  ['admin', 'admin: everything'],
  ['read', 'read: every read'],
  ['client', 'client: what a shipped application needs'],
];

/**
 * The organization's API keys; a new key is shown once, at creation. The key signed in here has
 * no revoke button: an admin cannot lock themselves out by a click (another admin key can).
 */
export function ApiKeysPage() {
  const { canWrite, key: current } = useSession();
  const keys = useResource(() => api.get<{ api_keys: ApiKey[] }>('/api-keys?per_page=100'), []);
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('read');
  const [created, setCreated] = useState<ApiKey & { key: string }>();
  const { busy, error, run } = useAction();
  return (
    <>
      <h1>API keys</h1>
      {canWrite && (
        <form
          class="grid panel"
          aria-label="New API key"
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              setCreated(
                await api.post<ApiKey & { key: string }>('/api-keys', { name: name.trim(), scopes: [scope] }),
              );
              setName('');
              keys.reload();
            });
          }}
        >
          <Field label="Key name">
            <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field
            label="Scope"
            hint="For a shipped application, prefer a license token, made on the license's page"
          >
            <select name="scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as Scope)}>
              {SCOPES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </Field>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Create API key
            </button>
          </div>
          {error && <ErrorNotice message={error} />}
        </form>
      )}
      {created && (
        <div class="notice ok" role="status">
          <p>
            The key <strong>{created.name}</strong>, shown only this once; copy it now:
          </p>
          <output class="mono wrap secret" data-testid="new-api-key">
            {created.key}
          </output>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <Async resource={keys}>
        {({ api_keys: rows }) =>
          rows.length === 0 ? (
            <Empty>No API key.</Empty>
          ) : (
            <TableWrap label="API keys">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Created</th>
                    {canWrite && (
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((key) => (
                    <tr key={key.id}>
                      <td>{key.name}</td>
                      <td class="mono">{key.prefix}…</td>
                      <td>{key.scopes.join(', ')}</td>
                      <td>{formatTime(key.created_at)}</td>
                      {canWrite && key.id === current.id && (
                        <td>
                          {/* Revoking the key this console signed in with would lock its user out. */}
                          <span class="badge this-key" title="The key this console signed in with">
                            This key
                          </span>
                        </td>
                      )}
                      {canWrite && key.id !== current.id && (
                        <td>
                          <ConfirmButton
                            label={`Revoke ${key.name}`}
                            danger
                            question={`Revoke the key ${key.name} (${key.prefix}…)? Everything using it is refused at once.`}
                            confirm="Revoke key"
                            action={() => api.delete(`/api-keys/${key.id}`).then(keys.reload)}
                          />
                        </td>
                      )}
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
