/**
 * The production alert rules (k8s/overlays/prod/alert-rules.yaml), checked the way promtool would
 * reject them: the rule fields and their formats, every PromQL expression read by a small parser
 * (balanced brackets, label matchers, range durations, known functions and aggregations), and every
 * metric an expression names exported by the platform's /metrics or Node.js's process metrics.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { metricsRegistry } from '@licensing/shared/metrics';

const file = path.join(__dirname, '../k8s/overlays/prod/alert-rules.yaml');
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const document = parse(readFileSync(file, 'utf8')) as { spec: { groups: { name: string; rules: Rule[] }[] } };
const rules: Rule[] = document.spec.groups.flatMap((group) => group.rules);

const FUNCTIONS = new Set(['rate', 'increase', 'histogram_quantile', 'sum', 'max', 'min', 'avg', 'count']);
const AGGREGATIONS = new Set(['sum', 'max', 'min', 'avg', 'count']);
const KEYWORDS = new Set(['by', 'without', 'and', 'or', 'unless']);
const DURATION = /^\d+[smhd]$/;

/** Problems of one PromQL expression, and the metric names it reads. */
function checkExpression(expr: string): { problems: string[]; metrics: string[] } {
  const problems: string[] = [];
  const metrics: string[] = [];
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  let i = 0;
  while (i < expr.length) {
    const rest = expr.slice(i);
    const ch = expr[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if ('([{'.includes(ch)) {
      stack.push(ch);
      if (ch === '{') {
        // Label matchers: name op "value", comma separated.
        const end = expr.indexOf('}', i);
        const body = expr.slice(i + 1, end);
        for (const matcher of body.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/).filter((m) => m.trim())) {
          if (!/^\s*[a-zA-Z_]\w*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*$/.test(matcher))
            problems.push(`bad label matcher ${matcher}`);
        }
        stack.pop();
        i = end + 1;
        continue;
      }
      if (ch === '[') {
        const end = expr.indexOf(']', i);
        const duration = expr.slice(i + 1, end);
        if (!DURATION.test(duration)) problems.push(`bad range ${duration}`);
        stack.pop();
        i = end + 1;
        continue;
      }
      i++;
    } else if (')]}'.includes(ch)) {
      if (stack.pop() !== pairs[ch]) problems.push(`unbalanced ${ch} at ${i}`);
      i++;
    } else if (/^[a-zA-Z_:]/.test(rest)) {
      const word = /^[a-zA-Z_:][\w:]*/.exec(rest)![0];
      const next = expr.slice(i + word.length).trimStart();
      if (KEYWORDS.has(word)) {
        if ((word === 'by' || word === 'without') && !next.startsWith('('))
          problems.push(`${word} without labels`);
        if (word === 'by' || word === 'without') {
          const end = expr.indexOf(')', i);
          i = end + 1;
          continue;
        }
      } else if (next.startsWith('(') || (AGGREGATIONS.has(word) && /^(by|without)\b/.test(next))) {
        if (!FUNCTIONS.has(word)) problems.push(`unknown function ${word}`);
      } else {
        metrics.push(word);
      }
      i += word.length;
    } else if (/^\d+(\.\d+)?/.test(rest)) {
      i += /^\d+(\.\d+)?/.exec(rest)![0].length;
    } else if (/^(==|!=|>=|<=|>|<|\+|-|\*|\/|,)/.test(rest)) {
      i += /^(==|!=|>=|<=|>|<|\+|-|\*|\/|,)/.exec(rest)![0].length;
    } else {
      problems.push(`unexpected ${ch} at ${i}`);
      i++;
    }
  }
  if (stack.length > 0) problems.push(`unclosed ${stack.join('')}`);
  if (!/(==|!=|>=|<=|>|<)/.test(expr)) problems.push('an alert expression needs a comparison');
  return { problems, metrics };
}

describe('alert rules', () => {
  let exported: Set<string>;
  beforeAll(async () => {
    const names = (await metricsRegistry.getMetricsAsJSON()).flatMap((metric) =>
      String(metric.type) === 'histogram'
        ? [`${metric.name}_bucket`, `${metric.name}_count`, `${metric.name}_sum`]
        : [metric.name],
    );
    exported = new Set(names);
  });

  it('has rules, each with a unique name, a severity, a summary and a valid `for`', () => {
    expect(rules.length).toBeGreaterThan(5);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const rule of rules) {
      expect([rule.alert, /^[A-Z][A-Za-z0-9]+$/.test(String(rule.alert))]).toEqual([rule.alert, true]);
      expect([rule.alert, rule.labels?.severity]).toEqual([
        rule.alert,
        expect.stringMatching(/^(page|ticket)$/) as unknown,
      ]);
      expect([rule.alert, typeof rule.annotations?.summary]).toEqual([rule.alert, 'string']);
      if (rule.for !== undefined)
        expect([rule.alert, DURATION.test(String(rule.for))]).toEqual([rule.alert, true]);
    }
  });

  it('every expression parses and reads only metrics the platform exports', () => {
    for (const rule of rules) {
      const { problems, metrics } = checkExpression(String(rule.expr));
      expect([rule.alert, problems]).toEqual([rule.alert, []]);
      expect(metrics.length).toBeGreaterThan(0);
      for (const metric of metrics)
        expect([rule.alert, metric, exported.has(metric)]).toEqual([rule.alert, metric, true]);
    }
  });

  it('the parser refuses what promtool would', () => {
    expect(checkExpression('sum(rate(x_total[5m]) > 1').problems).not.toEqual([]);
    expect(checkExpression('rate(x_total[5 minutes]) > 1').problems).not.toEqual([]);
    expect(checkExpression('x_total{status=5xx} > 1').problems).not.toEqual([]);
    expect(checkExpression('frobnicate(x_total) > 1').problems).not.toEqual([]);
    expect(checkExpression('sum(x_total)').problems).not.toEqual([]);
    expect(checkExpression('sum by (le) (rate(x_bucket{a!="b"}[1h])) > 0.5').problems).toEqual([]);
  });
});
