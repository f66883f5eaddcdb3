import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { ValidationTypes, getMetadataStorage, validateSync } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import fc from 'fast-check';
import * as contracts from '@licensing/contracts';
import { DomainError, VALIDATION_OPTIONS, compiledValidation } from '@licensing/shared/errors';

type Class = new () => object;
type Metadata = ValidationMetadata;

/** Edits tried per class and per mode: about 60 classes, twice each. */
const RUNS = 150;

const ID = '0190b4a6-5a39-7d55-9d47-6bc7d35f7f53';
const AT = '2026-11-25T10:00:00.000Z';
const storage = getMetadataStorage();

/** Every class the contracts export that declares rules: requests, replies' parts and stream records. */
const validated = Object.entries(contracts).filter(
  (entry): entry is [string, Class] =>
    typeof entry[1] === 'function' &&
    storage.getTargetValidationMetadatas(entry[1], '', false, false).length > 0,
);
/** The ones a compiled validation serves: checked here against class-validator, whatever their number. */
const compiledClasses = validated.filter(
  ([, type]) =>
    compiledValidation(type, { whitelist: true }) && compiledValidation(type, { whitelist: false }),
);

/** Values of every shape the contracts take. */
const COMMON_VALUES: unknown[] = [
  ID,
  AT,
  'ops@example.com',
  'https://example.com/hook',
  'LIC-A',
  'a',
  0,
  1,
  30,
  true,
  { name: 'fp' },
];

/**
 * A valid sample of a contract class, built from its own rules: each member gets the first value
 * that passes its rules, out of values of every shape the contracts take and the values the rules
 * name (`@IsIn`'s, strings matching a `@Matches`, `@Min` and `@Max` bounds). A nested member gets a
 * sample of its `@Type`. Rules between members are not read: a class with one would fail its
 * first test below, and need more here.
 */
function sampleOf(type: Class): Record<string, unknown> {
  const sample: Record<string, unknown> = {};
  const byProperty = storage.groupByPropertyName(
    storage.getTargetValidationMetadatas(type, '', false, false),
  );
  for (const [property, metadatas] of Object.entries(byProperty)) {
    const rules = metadatas.filter((m) => m.type === ValidationTypes.CUSTOM_VALIDATION);
    const nested = metadatas.some((m) => m.type === ValidationTypes.NESTED_VALIDATION)
      ? nestedType(type, property)
      : undefined;
    const pool = nested ? [sampleOf(nested)] : distinct([...COMMON_VALUES, ...valuesNamedBy(rules)]);
    const items = pool.filter((value) => rules.every((m) => !m.each || passes(m, value)));
    const whole = rules.filter((m) => !m.each);
    const isArray = whole.some((m) => ruleName(m) === 'isArray');
    const candidates = isArray ? [1, 2, 3].map((size) => items.slice(0, size)) : items;
    const value = candidates.find((candidate) => whole.every((m) => passes(m, candidate)));
    if (value !== undefined) sample[property] = value;
  }
  return sample;
}

/** The values a member's rules name. */
function valuesNamedBy(rules: Metadata[]): unknown[] {
  return rules.flatMap((m) => {
    const [first, second] = (m.constraints ?? []) as unknown[];
    switch (ruleName(m)) {
      case 'isIn':
        return [...(first as unknown[])];
      case 'matches': {
        const pattern = first instanceof RegExp ? first : new RegExp(first as string, second as string);
        return fc.sample(fc.stringMatching(pattern), { numRuns: 5, seed: 1 });
      }
      case 'min':
      case 'max':
      case 'equals':
        return [first];
      default:
        return [];
    }
  });
}

const ruleName = (m: Metadata): string | undefined =>
  storage.getTargetValidatorConstraints(m.constraintCls)[0]?.name;

/** Whether a value passes one rule, judged by the rule's own constraint as class-validator calls it. */
function passes(m: Metadata, value: unknown): boolean {
  return storage.getTargetValidatorConstraints(m.constraintCls).every(
    ({ instance }) =>
      instance.validate(value, {
        targetName: '',
        property: m.propertyName,
        object: {},
        value,
        constraints: (m.constraints ?? []) as unknown[],
      }) === true,
  );
}

/** A nested member's `@Type`: the class class-transformer builds for it. */
function nestedType(type: Class, property: string): Class {
  const probe = plainToInstance(type, { [property]: {} }) as Record<string, object>;
  return probe[property].constructor as Class;
}

function distinct(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((value) => !seen.has(JSON.stringify(value)) && seen.add(JSON.stringify(value)));
}

const nest = new ValidationPipe(VALIDATION_OPTIONS);

async function nestVerdict(type: Class, raw: unknown): Promise<object | undefined> {
  try {
    return (await nest.transform(structuredClone(raw), { type: 'body', metatype: type })) as object;
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
}

function recordVerdict(type: Class, raw: object): object | undefined {
  const instance = plainToInstance(type, structuredClone(raw));
  return validateSync(instance, { forbidUnknownValues: true }).length === 0 ? instance : undefined;
}

/**
 * Edits of a sample: a member, at any depth (an array's first item included), replaced by a value
 * of any shape, by a value another member's rules name, or removed.
 */
function edits(sample: Record<string, unknown>) {
  const paths: string[][] = [];
  const walk = (value: unknown, path: string[]): void => {
    paths.push([...path, 'unknown_member']);
    if (typeof value !== 'object' || value === null || path.length >= 3) return;
    for (const [key, inner] of Object.entries(value)) {
      paths.push([...path, key]);
      if (typeof inner === 'object' && inner !== null) walk(inner, [...path, key]);
    }
  };
  walk(sample, []);
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(ID, AT, '', 'x'.repeat(201), 'a\u0000b', 0, -1, 1.5, 2 ** 31, null, [], {}, ['']),
    fc.constantFrom(...Object.values(sample).flatMap(leaves)),
  );
  return fc.array(fc.tuple(fc.constantFrom(...paths), fc.option(value, { nil: undefined })), {
    minLength: 1,
    maxLength: 3,
  });
}

/** Every value in a sample, at any depth: valid for one member, perhaps not for another. */
function leaves(value: unknown): unknown[] {
  if (typeof value !== 'object' || value === null) return [value];
  return [value, ...Object.values(value).flatMap(leaves)];
}

function edited(
  sample: Record<string, unknown>,
  changes: Array<[string[], unknown]>,
): Record<string, unknown> {
  const raw = structuredClone(sample);
  for (const [path, value] of changes) {
    let target: Record<string, unknown> = raw;
    for (const key of path.slice(0, -1)) {
      const next = target[key];
      if (typeof next !== 'object' || next === null) break;
      target = next as Record<string, unknown>;
    }
    const last = path[path.length - 1];
    if (value === undefined) delete target[last];
    else target[last] = structuredClone(value);
  }
  // As it arrives, parsed from JSON: an array keeps no named member and no hole.
  return JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
}

/** Member names compiledValidation leaves to class-validator (it answers "not sure"). */
const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

function hasReservedKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, inner]) => RESERVED.has(key) || hasReservedKey(inner));
}

describe('compiled validation of the contracts', () => {
  it('compiles every contract class but the query strings, which convert their numbers', () => {
    const notCompiled = validated
      .filter(([, type]) => !compiledValidation(type, { whitelist: true }))
      .map(([name]) => name);
    expect(validated.length).toBeGreaterThan(40);
    expect(
      notCompiled.every((name) => /Query|List.*(Request|Message)|^LicenseUsageRequest$/.test(name)),
    ).toBe(true);
    expect(compiledClasses.length).toBeGreaterThan(50);
  });

  describe.each(compiledClasses)('%s', (_name, type) => {
    const sample = sampleOf(type);
    const edge = compiledValidation(type, { whitelist: true })!;
    const record = compiledValidation(type, { whitelist: false })!;

    it('accepts its sample as Nest and class-validator do', async () => {
      const accepted = edge.accept(structuredClone(sample));
      expect(accepted).toBeInstanceOf(type);
      expect(accepted).toStrictEqual(await nestVerdict(type, sample));
      expect(record.accept(structuredClone(sample))).toStrictEqual(recordVerdict(type, sample));
    });

    it('decides every edit of it as Nest does, as a request (property)', async () => {
      await fc.assert(
        fc.asyncProperty(edits(sample), async (changes) => {
          const raw = edited(sample, changes);
          fc.pre(!hasReservedKey(raw));
          expect(edge.accept(structuredClone(raw))).toStrictEqual(await nestVerdict(type, raw));
        }),
        { numRuns: RUNS },
      );
    });

    it('decides every edit of it as class-validator does, as a stream record (property)', () => {
      fc.assert(
        fc.property(edits(sample), (changes) => {
          const raw = edited(sample, changes);
          fc.pre(!hasReservedKey(raw));
          expect(record.accept(structuredClone(raw))).toStrictEqual(recordVerdict(type, raw));
        }),
        { numRuns: RUNS },
      );
    });
  });
});
