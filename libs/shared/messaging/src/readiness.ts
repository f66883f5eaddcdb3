import { Injectable } from '@nestjs/common';

export type DependencyState = 'up' | 'down';

/**
 * - `required`: down means not ready (NATS, PostgreSQL: nothing is answered correctly without them).
 * - `degradable`: required until it has been up once, then only reported. Every replica shares it
 *   and the process works around its loss (Redis: the revocation cache falls back to PostgreSQL,
 *   the rate limiter fails open), so taking every replica out of the load balancer at once would
 *   turn a degraded service into an outage; a pod that never reached it is misconfigured, and
 *   staying unready stops the rollout that brought it.
 */
export type DependencyKind = 'required' | 'degradable';

export interface Dependency {
  name: string;
  kind: DependencyKind;
  /** Whether it answers now: a connection flag, or one cheap query. */
  isUp(): boolean | Promise<boolean>;
}

export interface ReadinessReport {
  ready: boolean;
  /** Why not ready, when it is not. */
  reason?: string;
  checks: Record<string, DependencyState>;
}

/**
 * What one process depends on, and whether it may take traffic now. Modules that open a
 * connection add it here (`add`); the health probes and the metrics read it; the first step of a
 * shutdown (`stop`) makes the process unready before anything drains.
 */
@Injectable()
export class Readiness {
  private readonly dependencies = new Map<string, Dependency>();
  private readonly seenUp = new Set<string>();
  private stopping = false;
  private drainMs = 0;

  /** How long a shutdown waits, unready but still serving, before it drains (READINESS_DRAIN_MS). */
  setDrainDelay(ms: number): void {
    this.drainMs = ms;
  }

  /**
   * Resolves once the load balancers have had the drain delay to see the process unready. On
   * SIGINT it resolves at once: that is Ctrl-C at a terminal, where no balancer is waiting.
   */
  async drained(signal?: string): Promise<void> {
    if (this.drainMs > 0 && signal !== 'SIGINT') {
      await new Promise((resolve) => setTimeout(resolve, this.drainMs));
    }
  }

  add(dependency: Dependency): void {
    this.dependencies.set(dependency.name, dependency);
  }

  /** From now on not ready, whatever the connections say. */
  stop(): void {
    this.stopping = true;
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  async report(): Promise<ReadinessReport> {
    const checks: Record<string, DependencyState> = {};
    let reason = this.stopping ? 'shutting down' : undefined;
    for (const dependency of this.dependencies.values()) {
      let up: boolean;
      try {
        up = await dependency.isUp();
      } catch {
        up = false;
      }
      checks[dependency.name] = up ? 'up' : 'down';
      if (up) this.seenUp.add(dependency.name);
      const blocking = dependency.kind === 'required' || !this.seenUp.has(dependency.name);
      if (!up && blocking) reason ??= `${dependency.name} unavailable`;
    }
    return { ready: reason === undefined, reason, checks };
  }
}
