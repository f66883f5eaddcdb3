import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime, wordList } from '../data';
import type { KeyPair, Product } from '../types';
import {
  Async,
  Created,
  DownloadButton,
  Empty,
  ErrorNotice,
  Field,
  useAction,
  useResource,
  useSession,
} from '../ui';

/** Products: list, create, edit (name, description, defaults, key pair), public key download. */
export function ProductsPage() {
  const { canWrite } = useSession();
  const products = useResource(
    () => api.get<{ products: Product[]; total: number }>('/products?per_page=100'),
    [],
  );
  const keyPairs = useResource(() => api.get<{ key_pairs: KeyPair[] }>('/key-pairs?per_page=100'), []);
  const [editing, setEditing] = useState<string>();
  const pairs = keyPairs.data?.key_pairs ?? [];
  const pairName = (id: string | null) =>
    pairs.find((p) => p.id === id)?.name ?? (id ? id.slice(0, 8) : 'none');

  return (
    <>
      <h1>Products</h1>
      {canWrite && (
        <details class="panel">
          <summary>Create a product</summary>
          <ProductForm keyPairs={pairs} onSaved={products.reload} />
        </details>
      )}
      <Async resource={products}>
        {({ products: rows }) =>
          rows.length === 0 ? (
            <Empty>
              No product yet. {canWrite ? 'Create one above (it needs a key pair to sign with).' : ''}
            </Empty>
          ) : (
            <ul class="cards">
              {rows.map((product) => (
                <li key={product.id} class="card">
                  <h2>{product.name}</h2>
                  <dl class="facts">
                    <dt>Code</dt>
                    <dd class="mono">{product.code}</dd>
                    <dt>Key pair</dt>
                    <dd>{pairName(product.key_pair_id)}</dd>
                    <dt>Defaults</dt>
                    <dd>
                      {product.default_valid_days} days; features {product.default_features.join(', ') || '—'}
                    </dd>
                    <dt>Created</dt>
                    <dd>{formatTime(product.created_at)}</dd>
                  </dl>
                  <div class="actions">
                    <a href={`#/licenses?product=${product.id}`}>Licenses</a>
                    {product.key_pair_id && (
                      <DownloadButton
                        label="Download public key"
                        file={async () => {
                          const key = await api.get<{ public_key: string }>(
                            `/products/${product.id}/public-key`,
                          );
                          return {
                            blob: new Blob([key.public_key], { type: 'application/x-pem-file' }),
                            name: `${product.code}.pem`,
                          };
                        }}
                      />
                    )}
                    {canWrite && (
                      <button
                        type="button"
                        aria-expanded={editing === product.id}
                        onClick={() => setEditing(editing === product.id ? undefined : product.id)}
                      >
                        Edit
                      </button>
                    )}
                  </div>
                  {editing === product.id && (
                    <ProductForm
                      product={product}
                      keyPairs={pairs}
                      onSaved={() => {
                        setEditing(undefined);
                        products.reload();
                      }}
                    />
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Async>
    </>
  );
}

function ProductForm({
  product,
  keyPairs,
  onSaved,
}: {
  product?: Product;
  keyPairs: KeyPair[];
  onSaved: () => void;
}) {
  const blank = {
    name: product?.name ?? '',
    code: product?.code ?? '',
    description: product?.description ?? '',
    key_pair_id: product?.key_pair_id ?? '',
    default_features: product?.default_features.join(', ') ?? '',
    default_valid_days: String(product?.default_valid_days ?? 365),
  };
  const [form, setForm] = useState(blank);
  const [created, setCreated] = useState<Product>();
  const { busy, error, run } = useAction();
  const set = (name: keyof typeof form) => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [name]: event.currentTarget.value });
  const prefix = product ? `edit-${product.id}` : 'new';
  return (
    <form
      class="grid"
      aria-label={product ? `Edit ${product.name}` : 'New product'}
      onSubmit={(event) => {
        event.preventDefault();
        const fields = {
          name: form.name.trim(),
          description: form.description,
          key_pair_id: form.key_pair_id || keyPairs[0]?.id || null,
          default_features: wordList(form.default_features),
          default_valid_days: Number(form.default_valid_days),
        };
        setCreated(undefined);
        void run(async () => {
          if (product) await api.put(`/products/${product.id}`, fields);
          else {
            setCreated(await api.post<Product>('/products', { ...fields, code: form.code.trim() }));
            setForm(blank);
          }
          onSaved();
        });
      }}
    >
      <Field label="Name">
        <input name="name" required value={form.name} onInput={set('name')} />
      </Field>
      {!product && (
        <Field
          label="Code"
          hint="Lowercase letters and digits in hyphen-separated groups; part of every serial"
        >
          <input name="code" required value={form.code} onInput={set('code')} />
        </Field>
      )}
      <Field label="Key pair">
        <select
          name="key_pair_id"
          value={form.key_pair_id || keyPairs[0]?.id}
          onChange={set('key_pair_id')}
          id={`${prefix}-key-pair`}
        >
          {keyPairs.map((pair) => (
            <option key={pair.id} value={pair.id}>
              {pair.name} ({pair.algorithm})
            </option>
          ))}
        </select>
      </Field>
      <Field label="Default features" hint="Comma-separated">
        <input name="default_features" value={form.default_features} onInput={set('default_features')} />
      </Field>
      <Field label="Default valid days" hint="0: no end">
        <input
          name="default_valid_days"
          type="number"
          min={0}
          value={form.default_valid_days}
          onInput={set('default_valid_days')}
        />
      </Field>
      <Field label="Description">
        <input name="description" value={form.description} onInput={set('description')} />
      </Field>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {product ? 'Save product' : 'Create product'}
        </button>
      </div>
      {keyPairs.length === 0 && (
        <p class="notice">
          No key pair yet: <a href="#/key-pairs">create one</a> to sign this product's licenses.
        </p>
      )}
      {error && <ErrorNotice message={error} />}
      {created && <Created what="product" name={`${created.name} (${created.code})`} id={created.id} />}
    </form>
  );
}
