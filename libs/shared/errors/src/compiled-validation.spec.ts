import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { Transform, Type, plainToInstance } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Min,
  ValidateIf,
  ValidateNested,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
  Validate,
  validateSync,
} from 'class-validator';
import fc from 'fast-check';
import { compiledValidation } from './compiled-validation';
import { DomainError } from './domain-error';
import { VALIDATION_OPTIONS, createValidationPipe } from './validation';

class Binding {
  @IsString() @Length(1, 8) fingerprint!: string;
}

class Item {
  @IsInt() @Min(0) count!: number;
  @IsOptional() @IsIn(['a', 'b']) kind?: string;
}

@ValidatorConstraint({ name: 'sameLength' })
class SameLength implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    const other = (args.object as Record<string, unknown>)[args.constraints[0] as string];
    return typeof value === 'string' && typeof other === 'string' && value.length === other.length;
  }
}

class Sample {
  @IsUUID('all') id!: string;
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(3)
  @IsString({ each: true })
  @Length(1, 4, { each: true })
  tags?: string[];
  @ValidateIf((sample: Sample) => sample.id !== undefined)
  @IsString()
  @Validate(SameLength, ['id'])
  mirror?: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => Binding) binding?: Binding;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Item) items?: Item[];
  @IsOptional() @IsObject() extra?: Record<string, unknown>;
}

const ID = '0190b4a6-5a39-7d55-9d47-6bc7d35f7f53';
const valid = {
  id: ID,
  tags: ['x', 'yz'],
  mirror: 'm'.repeat(ID.length),
  binding: { fingerprint: 'fp' },
  items: [{ count: 1 }, { count: 0, kind: 'a' }],
  extra: { any: ['thing', 1] },
};

const nest = new ValidationPipe(VALIDATION_OPTIONS);
const body = (metatype: new () => object) => ({ type: 'body' as const, metatype });

/** Nest's own verdict and instance, on a copy (the pipe strips keys in place). */
async function nestVerdict(type: new () => object, raw: unknown): Promise<object | undefined> {
  try {
    return (await nest.transform(structuredClone(raw), body(type))) as object;
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
}

/** class-validator's own verdict without a whitelist, as `decodeMessage` calls it. */
function openVerdict(type: new () => object, raw: object): object | undefined {
  const instance = plainToInstance(type, structuredClone(raw));
  return validateSync(instance, { forbidUnknownValues: true }).length === 0 ? instance : undefined;
}

const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** Whether a member anywhere in the value is named like one of Object.prototype's. */
function namesReserved(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => RESERVED.has(key) || namesReserved(item));
}

describe('compiledValidation', () => {
  const strict = compiledValidation(Sample, { whitelist: true })!;
  const open = compiledValidation(Sample, { whitelist: false })!;

  it('compiles a class of plain rules, nested classes and custom constraints', () => {
    expect(strict).toBeDefined();
    expect(open).toBeDefined();
  });

  it('returns the instance class-transformer builds, nested instances included', async () => {
    const accepted = strict.accept(structuredClone(valid));
    expect(accepted).toBeInstanceOf(Sample);
    expect(accepted!.binding).toBeInstanceOf(Binding);
    expect(accepted!.items![1]).toBeInstanceOf(Item);
    expect(accepted).toStrictEqual(await nestVerdict(Sample, valid));
  });

  it.each([
    ['a field of the wrong type', { ...valid, id: 42 }],
    ['a missing required field', { ...valid, id: undefined }],
    ['an item of `each` out of bounds', { ...valid, tags: ['x', 'toolong'] }],
    ['a custom constraint', { ...valid, mirror: 'short' }],
    ['a nested field', { ...valid, binding: { fingerprint: '' } }],
    ['a nested primitive', { ...valid, binding: 'fp' }],
    ['an item of a nested array', { ...valid, items: [{ count: -1 }] }],
    ['an unknown nested field', { ...valid, items: [{ count: 1, more: true }] }],
  ])('leaves %s to class-validator', async (_case, raw) => {
    expect(strict.accept(raw)).toBeUndefined();
    expect(await nestVerdict(Sample, raw)).toBeUndefined();
  });

  it('refuses an unknown member only where unknown members are refused', () => {
    const raw = { ...valid, surprise: 1 };
    expect(strict.accept(raw)).toBeUndefined();
    expect(open.accept(raw)).toMatchObject({ surprise: 1 });
  });

  it('skips a property whose condition is false, as ValidateIf does', async () => {
    const raw = { tags: ['x'], mirror: 42 };
    // No id: `mirror` is not checked, and `id` itself fails.
    expect(strict.accept(raw)).toBeUndefined();
    expect(await nestVerdict(Sample, raw)).toBeUndefined();
  });

  it('leaves a value with a prototype key at any depth to Nest, which strips it', async () => {
    const raw = JSON.parse(
      `{"id":"${ID}","mirror":"${valid.mirror}","extra":{"deep":{"__proto__":{"polluted":true},"constructor":1}}}`,
    );
    expect(strict.accept(raw)).toBeUndefined();
    const stripped = (await nestVerdict(Sample, raw)) as Sample;
    expect(stripped.extra).toStrictEqual({ deep: {} });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves a value naming a member of Object.prototype at any depth to class-transformer, which drops it', async () => {
    const raw = { ...valid, extra: { deep: { valueOf: {}, toString: 'x', kept: 1 } } };
    expect(strict.accept(raw)).toBeUndefined();
    expect(open.accept(raw)).toBeUndefined();
    expect(((await nestVerdict(Sample, raw)) as Sample).extra).toStrictEqual({ deep: { kept: 1 } });
    expect((openVerdict(Sample, raw) as Sample).extra).toStrictEqual({ deep: { kept: 1 } });
  });

  it('is not compiled where class-transformer would convert or class-validator would await', () => {
    class Converted {
      @Transform(({ value }) => String(value).trim()) @IsString() name!: string;
    }
    class Coerced {
      @Type(() => Number) @IsInt() page!: number;
    }
    class WithMethod {
      @IsString() name!: string;
      shout(): string {
        return this.name.toUpperCase();
      }
    }
    class Untyped {
      @ValidateNested() binding!: Binding;
    }
    class NoRules {
      name!: string;
    }
    @ValidatorConstraint({ name: 'later', async: true })
    class Later implements ValidatorConstraintInterface {
      validate(): Promise<boolean> {
        return Promise.resolve(true);
      }
    }
    class Awaited {
      @Validate(Later) name!: string;
    }
    class Outer {
      @ValidateNested() @Type(() => Converted) inner!: Converted;
    }
    const types: Array<new () => object> = [Converted, Coerced, WithMethod, Untyped, NoRules, Awaited, Outer];
    for (const type of types) {
      expect(compiledValidation(type, { whitelist: true })).toBeUndefined();
    }
  });

  it('decides as Nest and class-validator do for any value (property)', async () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(ID, '', 'x', 'abcde', 'm'.repeat(ID.length), 0, -1, 1.5, null, [], {}),
      fc.constantFrom({ fingerprint: 'fp' }, [{ count: 2 }], [{ count: 1, kind: 'c' }], ['a', 'b', 'c', 'd']),
      fc.constantFrom({ valueOf: 1 }, [{ toString: 'x' }], { deep: { hasOwnProperty: {} } }),
    );
    const member = fc.constantFrom('id', 'tags', 'mirror', 'binding', 'items', 'extra', 'other');
    const edit = fc.tuple(member, fc.option(value, { nil: undefined }));
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { maxLength: 4 }), async (edits) => {
        const raw: Record<string, unknown> = structuredClone(valid);
        for (const [key, replacement] of edits) {
          if (replacement === undefined) delete raw[key];
          else raw[key] = replacement;
        }
        if (namesReserved(raw)) {
          // Left to Nest and class-transformer whatever they decide: they drop such members.
          expect(strict.accept(structuredClone(raw))).toBeUndefined();
          expect(open.accept(structuredClone(raw))).toBeUndefined();
          return;
        }
        expect(strict.accept(structuredClone(raw))).toStrictEqual(await nestVerdict(Sample, raw));
        expect(open.accept(structuredClone(raw))).toStrictEqual(openVerdict(Sample, raw));
      }),
      { numRuns: 400 },
    );
  });
});

describe('createValidationPipe', () => {
  it('answers a refused value with the field errors of Nest and class-validator', async () => {
    const raw = { ...valid, id: 'nope', surprise: true };
    const mine = await createValidationPipe()
      .transform(raw, body(Sample))
      .catch((error: unknown) => error);
    const theirs = await nest.transform(structuredClone(raw), body(Sample)).catch((error: unknown) => error);
    expect(mine).toBeInstanceOf(DomainError);
    expect(mine).toStrictEqual(theirs);
  });

  it('returns what Nest returns for an accepted value', async () => {
    const mine = await createValidationPipe().transform(structuredClone(valid), body(Sample));
    expect(mine).toBeInstanceOf(Sample);
    expect(mine).toStrictEqual(await nest.transform(structuredClone(valid), body(Sample)));
  });
});
