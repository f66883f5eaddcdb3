import { useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { checkoutTtl, durationInput, formatDays, type DurationUnit } from '../data';
import type { Organization } from '../types';
import { Async, ConfirmDialog, ErrorNotice, Field, useAction, useResource, useSession } from '../ui';

const CLIENT_KEYS_LABEL = 'Client keys may act on licenses';
const CLIENT_KEYS_HINT =
  'Client keys may activate, validate with a fingerprint and sync. Turn off once every shipped application uses license tokens.';
const CHECKOUT_TTL_LABEL = 'Offline activation file lifetime';
const CHECKOUT_TTL_HINT = 'How long an air-gapped activation file stays valid: 1 hour to 365 days.';

/** The organization's settings: changed by admin keys, shown to the others. */
export function SettingsPage() {
  const { canWrite } = useSession();
  const organization = useResource(() => api.get<Organization>('/organizations/current'), []);
  return (
    <>
      <h1>Settings</h1>
      <Async resource={organization}>
        {(org) =>
          canWrite ? (
            <>
              <ClientKeysSwitch org={org} onSaved={organization.reload} />
              <CheckoutTtlForm key={org.checkout_ttl_seconds} org={org} onSaved={organization.reload} />
            </>
          ) : (
            <dl class="facts">
              <dt>Organization</dt>
              <dd>{org.name}</dd>
              <dt>{CLIENT_KEYS_LABEL}</dt>
              <dd>
                {org.client_keys_license_actions ? 'yes' : 'no'}
                <br />
                <small class="muted">{CLIENT_KEYS_HINT}</small>
              </dd>
              <dt>{CHECKOUT_TTL_LABEL}</dt>
              <dd>
                {formatDays(org.checkout_ttl_seconds)}
                <br />
                <small class="muted">{CHECKOUT_TTL_HINT}</small>
              </dd>
            </dl>
          )
        }
      </Async>
    </>
  );
}

/**
 * `client_keys_license_actions` as a switch that saves at once. Turning it off can lock out shipped
 * applications that still hold a client key, so that asks first.
 */
function ClientKeysSwitch({ org, onSaved }: { org: Organization; onSaved: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const { busy, error, run } = useAction();
  const on = org.client_keys_license_actions;
  const save = (value: boolean) =>
    void run(async () => {
      await api.patch<Organization>('/organizations/current', { client_keys_license_actions: value });
      onSaved();
    });
  return (
    <section aria-labelledby="client-keys">
      <h2 id="client-keys">Client keys</h2>
      <div class="switch-row">
        <button
          type="button"
          role="switch"
          class="switch"
          aria-checked={on}
          aria-labelledby="client-keys-label"
          aria-describedby="client-keys-hint"
          disabled={busy}
          onClick={() => (on ? dialog.current?.showModal() : save(true))}
        >
          <span class="switch-track" aria-hidden="true" />
          <span aria-hidden="true">{on ? 'On' : 'Off'}</span>
        </button>
        <span id="client-keys-label" class="switch-label">
          {CLIENT_KEYS_LABEL}
        </span>
      </div>
      <p id="client-keys-hint" class="muted">
        {CLIENT_KEYS_HINT}
      </p>
      <ConfirmDialog
        dialog={dialog}
        question="Turn off license actions for client keys? An application that still holds a client key is refused (403) at once when it activates, sends a heartbeat, validates with a fingerprint or syncs."
        confirm="Turn off"
        danger
        busy={busy}
        onConfirm={() => save(false)}
      />
      {error && <ErrorNotice message={error} />}
    </section>
  );
}

/** `checkout_ttl_seconds`, shown in days, edited in days or hours. */
function CheckoutTtlForm({ org, onSaved }: { org: Organization; onSaved: () => void }) {
  const initial = durationInput(org.checkout_ttl_seconds);
  const [amount, setAmount] = useState(initial.amount);
  const [unit, setUnit] = useState<DurationUnit>(initial.unit);
  const { busy, error, run } = useAction();
  return (
    <section aria-labelledby="offline-files">
      <h2 id="offline-files">Offline activation files</h2>
      <p role="status">
        Files live <strong data-testid="checkout-ttl">{formatDays(org.checkout_ttl_seconds)}</strong>.
      </p>
      <form
        class="grid panel"
        aria-label="Change the lifetime"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const ttl = checkoutTtl(amount, unit);
            if ('error' in ttl) throw new Error(ttl.error);
            await api.patch<Organization>('/organizations/current', { checkout_ttl_seconds: ttl.seconds });
            onSaved();
          });
        }}
      >
        <Field label={CHECKOUT_TTL_LABEL} hint={CHECKOUT_TTL_HINT}>
          <input
            name="checkout_ttl"
            type="number"
            inputMode="decimal"
            step="any"
            min={0}
            required
            value={amount}
            onInput={(e) => setAmount(e.currentTarget.value)}
          />
        </Field>
        <Field label="Unit">
          <select name="unit" value={unit} onChange={(e) => setUnit(e.currentTarget.value as DurationUnit)}>
            <option value="days">days</option>
            <option value="hours">hours</option>
          </select>
        </Field>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Save lifetime
          </button>
        </div>
        {error && <ErrorNotice message={error} />}
      </form>
    </section>
  );
}
