import { TracerProvider } from '@opentelemetry/api';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { Client } from 'pg';

/**
 * Makes every PostgreSQL query of the process a span (`@opentelemetry/instrumentation-pg`), and
 * answers how to undo it. The instrumentation's patch is applied to the `pg` module this process
 * has loaded rather than through its `require` hook: the hook sees only modules loaded after it
 * (the compiled apps load `pg` with their first import), and none at all under jest, whose module
 * registry bypasses Node's loader. A query outside any span (a sweep, the outbox relay's poll)
 * starts no trace of its own: `requireParentSpan`.
 */
export function patchPg(provider: TracerProvider): () => void {
  const instrumentation = new PgInstrumentation({ enabled: false, requireParentSpan: true });
  instrumentation.setTracerProvider(provider);
  const definition = instrumentation.getModuleDefinitions().find((module) => module.name === 'pg');
  if (!definition?.patch || !definition.unpatch) throw new Error('instrumentation-pg has no patch for pg');
  // The patch wraps `Client.prototype.query`: every pooled connection, already open or not.
  const module = { Client };
  const { patch, unpatch } = definition;
  patch(module);
  return () => unpatch(module);
}
