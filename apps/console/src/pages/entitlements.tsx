import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime } from '../data';
import { Entitlement } from '../types';
import {
  Async,
  ConfirmButton,
  Created,
  Empty,
  ErrorNotice,
  Field,
  useAction,
  useResource,
  useSession,
  TableWrap,
} from '../ui';

/** The entitlement catalog: the codes licenses hold. A code never changes; a name may. */
export function EntitlementsPage() {
  const { canWrite } = useSession();
  const entitlements = useResource(
    () => api.get<{ entitlements: Entitlement[]; total: number }>('/entitlements?per_page=100'),
    [],
  );
  const [form, setForm] = useState({ code: '', name: '' });
  const { busy, error, run } = useAction();
  const [created, setCreated] = useState<Entitlement>();
  return (
    <>
      <h1>Entitlements</h1>
      {canWrite && (
        <form
          class="grid panel"
          aria-label="New entitlement"
          onSubmit={(event) => {
            event.preventDefault();
            setCreated(undefined);
            void run(async () => {
              setCreated(
                await api.post<Entitlement>('/entitlements', {
                  code: form.code.trim(),
                  name: form.name.trim(),
                }),
              );
              setForm({ code: '', name: '' });
              entitlements.reload();
            });
          }}
        >
          <Field
            label="Code"
            hint='Lowercase letters and digits, in parts joined by ".", "_" or "-". It never changes.'
          >
            <input
              name="code"
              required
              value={form.code}
              onInput={(e) => setForm({ ...form, code: e.currentTarget.value })}
            />
          </Field>
          <Field label="Entitlement name">
            <input
              name="name"
              required
              value={form.name}
              onInput={(e) => setForm({ ...form, name: e.currentTarget.value })}
            />
          </Field>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Create entitlement
            </button>
          </div>
          {error && <ErrorNotice message={error} />}
          {created && (
            <Created what="entitlement" name={`${created.code} (${created.name})`} id={created.id} />
          )}
        </form>
      )}
      <Async resource={entitlements}>
        {({ entitlements: rows, total }) =>
          rows.length === 0 ? (
            <Empty>No entitlement yet. Licenses hold entitlements that applications check for.</Empty>
          ) : (
            <TableWrap label="Entitlement catalog">
              <table>
                <caption>
                  {rows.length} of {total} entitlements, newest first
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Code</th>
                    <th scope="col">Name</th>
                    <th scope="col">Created</th>
                    {canWrite && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((entitlement) => (
                    <tr key={entitlement.id}>
                      <td class="mono">{entitlement.code}</td>
                      <td>{entitlement.name}</td>
                      <td>{formatTime(entitlement.created_at)}</td>
                      {canWrite && (
                        <td>
                          <ConfirmButton
                            label="Delete"
                            danger
                            question={`Delete the entitlement ${entitlement.code}? An entitlement a license holds cannot be deleted.`}
                            confirm="Delete entitlement"
                            action={() =>
                              api.delete(`/entitlements/${entitlement.id}`).then(entitlements.reload)
                            }
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
