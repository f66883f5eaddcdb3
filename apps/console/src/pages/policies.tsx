import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime } from '../data';
import { LICENSE_TYPES, MACHINE_MATCHING_RULES, OVERAGE_RULES, Policy, Product } from '../types';
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
} from '../ui';

/** An empty field is a limit switched off (null); anything else is a whole number. */
const limit = (text: string): number | null => (text.trim() === '' ? null : Number(text));

/** Policies: a product's licensing model. List, create, delete (a policy licenses use stays). */
export function PoliciesPage() {
  const { canWrite } = useSession();
  const policies = useResource(() => api.get<{ policies: Policy[] }>('/policies?per_page=100'), []);
  const products = useResource(() => api.get<{ products: Product[] }>('/products?per_page=100'), []);
  const productList = products.data?.products ?? [];
  const productName = (id: string) => productList.find((p) => p.id === id)?.name ?? id.slice(0, 8);
  const or = (value: number | null, none: string, unit = '') => (value === null ? none : `${value}${unit}`);

  return (
    <>
      <h1>Policies</h1>
      {canWrite && (
        <details class="panel">
          <summary>Create a policy</summary>
          <PolicyForm products={productList} onSaved={policies.reload} />
        </details>
      )}
      <Async resource={policies}>
        {({ policies: rows }) =>
          rows.length === 0 ? (
            <Empty>No policy yet. A policy holds a product's licensing model for many licenses.</Empty>
          ) : (
            <ul class="cards">
              {rows.map((policy) => (
                <li key={policy.id} class="card">
                  <h2>{policy.name}</h2>
                  <dl class="facts">
                    <dt>Product</dt>
                    <dd>{productName(policy.product_id)}</dd>
                    <dt>Type</dt>
                    <dd>{policy.license_type}</dd>
                    <dt>Duration</dt>
                    <dd>{or(policy.duration_days, 'perpetual', ' days')}</dd>
                    <dt>Machines</dt>
                    <dd>
                      {policy.max_machines}
                      {policy.overage === 'none' ? '' : `, overage ${policy.overage}`}
                    </dd>
                    <dt>Processes per machine</dt>
                    <dd>{or(policy.max_processes, 'no limit')}</dd>
                    <dt>Heartbeat</dt>
                    <dd>
                      {or(policy.heartbeat_interval_seconds, 'not required', ' s')}
                      {policy.heartbeat_grace_seconds > 0
                        ? `, grace ${policy.heartbeat_grace_seconds} s`
                        : ''}
                    </dd>
                    <dt>Check-in</dt>
                    <dd>{or(policy.check_in_interval_days, 'not required', ' days')}</dd>
                    <dt>Components</dt>
                    <dd>{policy.machine_matching}</dd>
                    <dt>Created</dt>
                    <dd>{formatTime(policy.created_at)}</dd>
                  </dl>
                  {canWrite && (
                    <div class="actions">
                      <ConfirmButton
                        label="Delete"
                        danger
                        question={`Delete the policy ${policy.name}? A policy that licenses follow cannot be deleted.`}
                        confirm="Delete policy"
                        action={() => api.delete(`/policies/${policy.id}`).then(policies.reload)}
                      />
                    </div>
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

const NEW_POLICY = {
  product_id: '',
  name: '',
  license_type: 'subscription',
  duration_days: '',
  max_machines: '1',
  max_processes: '',
  heartbeat_interval_seconds: '',
  heartbeat_grace_seconds: '0',
  check_in_interval_days: '',
  overage: 'none',
  machine_matching: 'all',
};

function PolicyForm({ products, onSaved }: { products: Product[]; onSaved: () => void }) {
  const [form, setForm] = useState(NEW_POLICY);
  const [created, setCreated] = useState<Policy>();
  const { busy, error, run } = useAction();
  const set = (name: keyof typeof form) => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [name]: event.currentTarget.value });
  const number = (name: keyof typeof form, label: string, hint: string) => (
    <Field label={label} hint={hint}>
      <input name={name} type="number" min={0} value={form[name]} onInput={set(name)} />
    </Field>
  );
  return (
    <form
      class="grid"
      aria-label="New policy"
      onSubmit={(event) => {
        event.preventDefault();
        setCreated(undefined);
        void run(async () => {
          const policy = await api.post<Policy>('/policies', {
            product_id: form.product_id || products[0]?.id,
            name: form.name.trim(),
            license_type: form.license_type,
            // Left empty, the duration is the product's default validity.
            ...(form.duration_days.trim() === '' ? {} : { duration_days: Number(form.duration_days) }),
            max_machines: Number(form.max_machines),
            max_processes: limit(form.max_processes),
            heartbeat_interval_seconds: limit(form.heartbeat_interval_seconds),
            heartbeat_grace_seconds: Number(form.heartbeat_grace_seconds),
            check_in_interval_days: limit(form.check_in_interval_days),
            overage: form.overage,
            machine_matching: form.machine_matching,
          });
          setCreated(policy);
          setForm(NEW_POLICY);
          onSaved();
        });
      }}
    >
      <Field label="Policy name">
        <input name="name" required value={form.name} onInput={set('name')} />
      </Field>
      <Field label="Product">
        <select name="product_id" value={form.product_id || products[0]?.id} onChange={set('product_id')}>
          {products.map((product) => (
            <option key={product.id} value={product.id}>
              {product.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="License type">
        <select name="license_type" value={form.license_type} onChange={set('license_type')}>
          {LICENSE_TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
      </Field>
      {number('duration_days', 'Duration (days)', "Empty: the product's default validity")}
      {number('max_machines', 'Machines', 'Seats of each license')}
      {number('max_processes', 'Processes per machine', 'Empty: no limit')}
      {number('heartbeat_interval_seconds', 'Heartbeat interval (s)', 'Empty: no heartbeat')}
      {number('heartbeat_grace_seconds', 'Heartbeat grace (s)', 'How long a lapsed machine keeps its seat')}
      {number('check_in_interval_days', 'Check-in interval (days)', 'Empty: no check-in')}
      <Field label="Overage">
        <select name="overage" value={form.overage} onChange={set('overage')}>
          {OVERAGE_RULES.map((rule) => (
            <option key={rule} value={rule}>
              {rule}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Component matching">
        <select name="machine_matching" value={form.machine_matching} onChange={set('machine_matching')}>
          {MACHINE_MATCHING_RULES.map((rule) => (
            <option key={rule} value={rule}>
              {rule}
            </option>
          ))}
        </select>
      </Field>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Create policy
        </button>
      </div>
      {products.length === 0 && (
        <p class="notice">
          No product yet: <a href="#/products">create one</a> first.
        </p>
      )}
      {error && <ErrorNotice message={error} />}
      {created && <Created what="policy" name={created.name} id={created.id} />}
    </form>
  );
}
