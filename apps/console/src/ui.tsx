import type { ComponentChildren, RefObject, VNode } from 'preact';
import { cloneElement, createContext } from 'preact';
import { useCallback, useContext, useEffect, useId, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { ApiError, saveFile } from './api';
import type { ChartData, PageInfo } from './data';
import type { CurrentKey } from './types';

/** Who is signed in; `canWrite` is false for a key without `admin` (no write control is rendered). */
export interface Session {
  key: CurrentKey;
  canWrite: boolean;
}
export const SessionContext = createContext<Session | null>(null);
export const useSession = (): Session => useContext(SessionContext)!;

export interface Resource<T> {
  data?: T;
  error?: string;
  loading: boolean;
  reload: () => void;
}

/** Loads on mount and whenever `deps` change; a late answer to an older request is dropped. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) =>
        current &&
        setState({ error: error instanceof Error ? error.message : String(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { ...state, reload };
}

/** Loading, the API's problem, or the content. */
export function Async<T>({
  resource,
  children,
}: {
  resource: Resource<T>;
  children: (data: T) => ComponentChildren;
}) {
  if (resource.error) return <ErrorNotice message={resource.error} />;
  if (resource.data === undefined)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  return <>{children(resource.data)}</>;
}

export function ErrorNotice({ message }: { message: string }) {
  return (
    <p class="notice error" role="alert">
      {message}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/**
 * A form's submit: runs `action`, shows its failure, and stays disabled while it runs. `fields`
 * holds the API's (or the form's own) message per invalid field, to show at the field.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      await action();
      return true;
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
      if (failure instanceof ApiError || failure instanceof FieldErrors) setFields(failure.fields);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, fields, run, setError };
}

/** A form's own refusal, before any request: a message per field. */
export class FieldErrors extends Error {
  constructor(readonly fields: Record<string, string>) {
    super('Some fields need a change (see below each).');
  }
}

/**
 * What a create form made, said once it is made: what, its name, and its id (or serial). The form
 * has been reset meanwhile; the notice stays until the next submit.
 */
export function Created({
  what,
  name,
  id,
  href,
}: {
  what: string;
  name?: string;
  id: string;
  href?: string;
}) {
  return (
    <p class="notice ok" role="status" data-testid="created">
      Created the {what}
      {name ? (
        <>
          {' '}
          <strong>{name}</strong>
        </>
      ) : null}
      , id{' '}
      {href ? (
        <a href={href} class="mono">
          {id}
        </a>
      ) : (
        <code>{id}</code>
      )}
      .
    </p>
  );
}

/**
 * A modal question (focus moves into it, Escape cancels), opened with `dialog.current.showModal()`;
 * confirming closes it and calls `onConfirm`.
 */
export function ConfirmDialog(props: {
  dialog: RefObject<HTMLDialogElement>;
  question: string;
  confirm: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
}) {
  const id = useId();
  return (
    <dialog ref={props.dialog} aria-labelledby={`${id}-question`}>
      <p id={`${id}-question`}>{props.question}</p>
      <div class="actions">
        <button type="button" onClick={() => props.dialog.current?.close()}>
          Cancel
        </button>
        <button
          type="button"
          class={props.danger ? 'danger' : 'primary'}
          disabled={props.busy}
          onClick={() => {
            props.dialog.current?.close();
            props.onConfirm();
          }}
        >
          {props.confirm}
        </button>
      </div>
    </dialog>
  );
}

/** A button that asks first, in a `ConfirmDialog`, then runs `action`; its failure is shown beside the button. */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirm: string;
  danger?: boolean;
  action: () => Promise<unknown>;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const { busy, error, run } = useAction();
  return (
    <>
      <button type="button" class={props.danger ? 'danger' : ''} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <ConfirmDialog
        dialog={dialog}
        question={props.question}
        confirm={props.confirm}
        danger={props.danger}
        busy={busy}
        onConfirm={() => void run(props.action)}
      />
      {error && <ErrorNotice message={error} />}
    </>
  );
}

/**
 * A table that scrolls sideways when it is wider than the screen: a named region the keyboard can
 * reach, so that its hidden columns can be scrolled to without a mouse.
 */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

export function Pager({
  info,
  onPage,
  label,
}: {
  info: PageInfo;
  onPage: (page: number) => void;
  label: string;
}) {
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={!info.hasPrevious} onClick={() => onPage(info.page - 1)}>
        Previous
      </button>
      <span aria-live="polite">
        {info.first}–{info.last} · page {info.page} of {info.pages}
      </span>
      <button type="button" disabled={!info.hasNext} onClick={() => onPage(info.page + 1)}>
        Next
      </button>
    </nav>
  );
}

/**
 * A labelled field: its one control, a hint, and the problem with its value (`error`), which the
 * control points to (`aria-describedby`) and marks (`aria-invalid`).
 */
export function Field({
  label,
  hint,
  error,
  wide,
  children,
}: {
  label: string;
  hint?: string;
  error?: string;
  /** Takes a whole row of its form's grid (a text area). */
  wide?: boolean;
  children: ComponentChildren;
}) {
  const id = useId();
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  const single = typeof children === 'object' && children !== null && 'props' in (children as VNode);
  const control = single
    ? cloneElement(children as VNode, {
        'aria-describedby': described,
        ...(error ? { 'aria-invalid': 'true' } : {}),
      })
    : children;
  return (
    <label class={wide ? 'field wide' : 'field'}>
      <span>{label}</span>
      {control}
      {hint && (
        <small class="muted" id={`${id}-hint`}>
          {hint}
        </small>
      )}
      {error && (
        <small class="field-error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </label>
  );
}

/**
 * Counts per time bucket as a uPlot bar chart sized to its container, the series' bars side by side
 * in each bucket. `summary` says in words what the chart shows, for screen readers (the canvas
 * itself says nothing). The legend names the series only: no live readout, which would say
 * "Time: --" while the pointer is elsewhere.
 */
export function Chart(props: { title: string; data: ChartData; series: string[]; summary: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current!;
    const colors = ['#1f5fbf', '#b3541e'];
    const xs = props.data[0];
    const step = xs.length > 1 ? xs[1]! - xs[0]! : 3600;
    // Each bar takes a share of its bucket, left and right of the bucket's start.
    const share = 0.8 / props.series.length;
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 220,
        legend: { live: false },
        cursor: { show: false },
        series: [
          {},
          ...props.series.map((label, index) => ({
            label,
            stroke: colors[index % colors.length],
            fill: colors[index % colors.length],
            width: 0,
            points: { show: false },
            paths: uPlot.paths.bars!({
              size: [share, 40],
              align: (props.series.length === 1 ? 0 : index === 0 ? -1 : 1) as -1 | 0 | 1,
            }),
          })),
        ],
        axes: [{}, { size: 50 }],
        scales: {
          // Half a bucket of room on each side, so that the first and last bars are whole.
          x: { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
      },
      props.data,
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, element.clientWidth), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.data, props.series]);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={`${props.title}: ${props.summary}`} />
    </figure>
  );
}

/** The current hash route, `#/licenses/<id>` → `['licenses', '<id>']` (its `?query` aside). */
export function useRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** The hash route's query: `#/licenses?status=active` → `status=active`. */
export const routeQuery = (): URLSearchParams =>
  new URLSearchParams(window.location.hash.split('?')[1] ?? '');

/** A button that fetches a file with the key (a plain link could not send it) and saves it. */
export function DownloadButton({
  label,
  file,
}: {
  label: string;
  file: () => Promise<{ blob: Blob; name: string }>;
}) {
  const { busy, error, run } = useAction();
  return (
    <>
      <button
        type="button"
        disabled={busy}
        onClick={() =>
          void run(async () => {
            const { blob, name } = await file();
            saveFile(blob, name);
          })
        }
      >
        {label}
      </button>
      {error && <ErrorNotice message={error} />}
    </>
  );
}
