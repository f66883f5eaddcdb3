import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime } from '../data';
import { KEY_ALGORITHMS, KeyPair } from '../types';
import {
  Async,
  ConfirmButton,
  Created,
  DownloadButton,
  Empty,
  ErrorNotice,
  Field,
  useAction,
  useResource,
  useSession,
} from '../ui';

/** Signing key pairs: the private key never leaves the license service; the public key is shown. */
export function KeyPairsPage() {
  const { canWrite } = useSession();
  const pairs = useResource(() => api.get<{ key_pairs: KeyPair[] }>('/key-pairs?per_page=100'), []);
  const [form, setForm] = useState({ name: '', algorithm: 'ed25519' });
  const { busy, error, run } = useAction();
  const [created, setCreated] = useState<KeyPair>();
  return (
    <>
      <h1>Key pairs</h1>
      {canWrite && (
        <form
          class="grid panel"
          aria-label="New key pair"
          onSubmit={(event) => {
            event.preventDefault();
            setCreated(undefined);
            void run(async () => {
              setCreated(
                await api.post<KeyPair>('/key-pairs', {
                  name: form.name.trim() || undefined,
                  algorithm: form.algorithm,
                }),
              );
              setForm({ name: '', algorithm: 'ed25519' });
              pairs.reload();
            });
          }}
        >
          <Field label="Key pair name">
            <input
              name="name"
              value={form.name}
              onInput={(e) => setForm({ ...form, name: e.currentTarget.value })}
            />
          </Field>
          <Field label="Algorithm">
            <select
              name="algorithm"
              value={form.algorithm}
              onChange={(e) => setForm({ ...form, algorithm: e.currentTarget.value })}
            >
              {KEY_ALGORITHMS.map((algorithm) => (
                <option key={algorithm} value={algorithm}>
                  {algorithm}
                </option>
              ))}
            </select>
          </Field>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Create key pair
            </button>
          </div>
          {error && <ErrorNotice message={error} />}
          {created && <Created what={`${created.algorithm} key pair`} name={created.name} id={created.id} />}
        </form>
      )}
      <Async resource={pairs}>
        {({ key_pairs: rows }) =>
          rows.length === 0 ? (
            <Empty>No key pair yet. Products sign their licenses with one.</Empty>
          ) : (
            <ul class="cards">
              {rows.map((pair) => (
                <li key={pair.id} class="card">
                  <h2>{pair.name}</h2>
                  <dl class="facts">
                    <dt>Algorithm</dt>
                    <dd>{pair.algorithm}</dd>
                    <dt>Fingerprint</dt>
                    <dd class="mono wrap">{pair.fingerprint}</dd>
                    <dt>Created</dt>
                    <dd>{formatTime(pair.created_at)}</dd>
                  </dl>
                  <div class="actions">
                    <DownloadButton
                      label="Download public key"
                      file={async () => ({
                        blob: new Blob([pair.public_key], { type: 'application/x-pem-file' }),
                        name: `${pair.name}.pem`,
                      })}
                    />
                    {canWrite && (
                      <ConfirmButton
                        label="Delete"
                        danger
                        question={`Delete the key pair ${pair.name}? A key pair a product uses cannot be deleted.`}
                        confirm="Delete key pair"
                        action={() => api.delete(`/key-pairs/${pair.id}`).then(pairs.reload)}
                      />
                    )}
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
    </>
  );
}
