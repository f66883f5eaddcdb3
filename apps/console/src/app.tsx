import { useEffect, useState } from 'preact/hooks';
import { api, storedKey, storeKey, whenUnauthorized } from './api';
import { ApiKeysPage } from './pages/api-keys';
import { EntitlementsPage } from './pages/entitlements';
import { KeyPairsPage } from './pages/key-pairs';
import { LicenseDetail, LicensesPage } from './pages/licenses';
import { OverviewPage } from './pages/overview';
import { PoliciesPage } from './pages/policies';
import { ProductsPage } from './pages/products';
import { SettingsPage } from './pages/settings';
import { WebhookDetail, WebhooksPage } from './pages/webhooks';
import type { CurrentKey } from './types';
import { ErrorNotice, Session, SessionContext, useAction, useRoute } from './ui';

const PAGES = [
  ['overview', 'Overview'],
  ['licenses', 'Licenses'],
  ['products', 'Products'],
  ['entitlements', 'Entitlements'],
  ['policies', 'Policies'],
  ['key-pairs', 'Key pairs'],
  ['api-keys', 'API keys'],
  ['webhooks', 'Webhooks'],
  ['settings', 'Settings'],
] as const;

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [checking, setChecking] = useState(storedKey() !== null);
  const [refused, setRefused] = useState<string>();

  const signIn = async (key: string) => {
    const current = await api.withKey<CurrentKey>(key, '/api-keys/current');
    storeKey(key);
    setRefused(undefined);
    setSession({ key: current, canWrite: current.scopes.includes('admin') });
  };
  const signOut = (message?: string) => {
    storeKey(null);
    setSession(null);
    setRefused(message);
  };

  useEffect(() => {
    whenUnauthorized(signOut);
    const key = storedKey();
    if (key)
      signIn(key)
        .catch((error: Error) => signOut(error.message))
        .finally(() => setChecking(false));
  }, []);

  if (checking) return <p role="status">Signing in…</p>;
  if (!session) return <SignIn onSignIn={signIn} refused={refused} />;
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} onSignOut={() => signOut()} />
    </SessionContext.Provider>
  );
}

function SignIn({ onSignIn, refused }: { onSignIn: (key: string) => Promise<void>; refused?: string }) {
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  const message = error ?? refused;
  return (
    <main class="sign-in">
      <h1>Licensing console</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run(() => onSignIn(key.trim()));
        }}
      >
        <label class="field">
          <span>Organization API key</span>
          <input
            type="password"
            name="api-key"
            autoComplete="off"
            spellcheck={false}
            required
            placeholder="lk_…"
            value={key}
            onInput={(event) => setKey(event.currentTarget.value)}
          />
          <small class="muted">
            An <code>admin</code> key can change everything, a <code>read</code> key only looks. The key stays
            in this tab and is sent only to this API.
          </small>
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
        {message && <ErrorNotice message={message} />}
      </form>
    </main>
  );
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const [page = 'overview', id] = useRoute();
  return (
    <>
      {/* The hash is the route: skipping moves the focus, not the location. */}
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Licensing console</span>
        <span class="who">
          {session.key.org_name} · {session.key.name}{' '}
          <span class={`badge ${session.canWrite ? 'admin' : 'read'}`}>
            {session.canWrite ? 'admin' : 'read-only'}
          </span>
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <nav class="side" aria-label="Pages">
        <ul>
          {PAGES.map(([path, title]) => (
            <li key={path}>
              <a href={`#/${path}`} aria-current={page === path ? 'page' : undefined}>
                {title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Page page={page} id={id} />
      </main>
    </>
  );
}

function Page({ page, id }: { page: string; id?: string }) {
  switch (page) {
    case 'licenses':
      return id ? <LicenseDetail id={id} /> : <LicensesPage />;
    case 'products':
      return <ProductsPage />;
    case 'entitlements':
      return <EntitlementsPage />;
    case 'policies':
      return <PoliciesPage />;
    case 'key-pairs':
      return <KeyPairsPage />;
    case 'api-keys':
      return <ApiKeysPage />;
    case 'webhooks':
      return id ? <WebhookDetail id={id} /> : <WebhooksPage />;
    case 'settings':
      return <SettingsPage />;
    default:
      return <OverviewPage />;
  }
}
