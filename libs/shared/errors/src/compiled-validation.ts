import {
  ValidationArguments,
  ValidationTypes,
  ValidatorConstraintInterface,
  getMetadataStorage,
} from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { transformMetadata } from './transform-metadata';

type Class<T = object> = new () => T;

/** Builds the instance class-transformer would build, or `undefined` where it might differ. */
type Build = (raw: Record<string, unknown>) => object | undefined;
/** Whether class-validator would accept the built instance. */
type Check = (instance: Record<string, unknown>) => boolean;

/**
 * A class's validation, compiled once from its own class-validator and class-transformer metadata:
 * `accept(raw)` builds the instance `plainToInstance` would build and runs every constraint the
 * class declares (the same constraint objects class-validator calls, with the same arguments), but
 * none of the per-call work around them: metadata look-ups, a `ValidationError` per property,
 * class-transformer's deep copy of every nested value. It answers only "accepted, here is the
 * instance" or "not sure": a rejection, and anything it was not compiled for, is decided again by
 * class-validator itself, so the answers and their error messages stay class-validator's.
 */
export interface CompiledValidation<T> {
  /** The instance, when class-validator would accept `raw`; `undefined` otherwise (or unsure). */
  accept(raw: unknown): T | undefined;
}

export interface CompileOptions {
  /** As class-validator's `whitelist` + `forbidNonWhitelisted`: a property with no rule is refused. */
  whitelist: boolean;
}

const validation = getMetadataStorage();
const compiled = {
  whitelist: new Map<Class, CompiledValidation<object> | null>(),
  open: new Map<Class, CompiledValidation<object> | null>(),
};

/**
 * The compiled validation of `type`, or `undefined` when the class uses what this compiler does not
 * reproduce exactly (a transform, an exposed or excluded member, a member of its prototype, an
 * async or promise rule, a nested member without a `@Type`, a class with no rules at all): the
 * caller then always takes class-validator's own path. Compiled on first use, once per class and
 * options.
 */
export function compiledValidation<T extends object>(
  type: Class<T>,
  options: CompileOptions,
): CompiledValidation<T> | undefined {
  const cache = options.whitelist ? compiled.whitelist : compiled.open;
  let entry = cache.get(type);
  if (entry === undefined) {
    const plan = planOf(type, options, new Set());
    entry = plan ? { accept: (raw) => accept(plan, raw) } : null;
    cache.set(type, entry);
  }
  return (entry ?? undefined) as CompiledValidation<T> | undefined;
}

function accept({ build, check }: Plan, raw: unknown): object | undefined {
  if (!isPlainObject(raw) || hasReservedKey(raw)) return undefined;
  const instance = build(raw);
  return instance && check(instance as Record<string, unknown>) ? instance : undefined;
}

interface Plan {
  build: Build;
  check: Check;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  // Object.prototype of any realm (a value cloned across a vm context has another's), or none.
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/**
 * Members a value holding one anywhere is left to Nest and class-transformer for: those Nest's
 * validation pipe deletes at any depth before it builds the instance (`__proto__`, `constructor`,
 * `prototype`), and the names of Object.prototype's members (`valueOf`, `toString`, …), which
 * class-transformer does not copy as data (the instance already has a function by that name).
 */
const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

function hasReservedKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (hasReservedKey(item)) return true;
    return false;
  }
  for (const key of Object.keys(value)) {
    if (RESERVED.has(key) || hasReservedKey((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function planOf(type: Class, options: CompileOptions, inProgress: Set<Class>): Plan | undefined {
  if (!transformMetadata.readable) return undefined;
  if (inProgress.has(type)) return undefined; // a recursive shape: left to class-validator
  if (!plainDataClass(type)) return undefined;
  const metadatas = validation.getTargetValidationMetadatas(type, '', false, false);
  if (metadatas.length === 0) return undefined; // forbidUnknownValues refuses it anyway
  const byProperty = validation.groupByPropertyName(metadatas);
  inProgress.add(type);
  try {
    const nestedTypes = new Map<string, Plan>();
    const checks: Check[] = [];
    for (const [property, propertyMetadatas] of Object.entries(byProperty)) {
      const nested = propertyMetadatas.some((m) => m.type === ValidationTypes.NESTED_VALIDATION);
      const typeMetadata = transformMetadata.findTypeMetadata(type, property);
      let nestedPlan: Plan | undefined;
      if (nested || typeMetadata) {
        // Only `@ValidateNested() @Type(() => Class)`: anything else converts or fails differently.
        if (!nested || !typeMetadata || typeMetadata.options?.discriminator) return undefined;
        const nestedType = typeMetadata.typeFunction() as Class;
        if (PRIMITIVES.has(nestedType)) return undefined;
        nestedPlan = planOf(nestedType, options, inProgress);
        if (!nestedPlan) return undefined;
        nestedTypes.set(property, nestedPlan);
      }
      const check = propertyCheck(type, property, propertyMetadatas, nestedPlan);
      if (!check) return undefined;
      checks.push(check);
    }
    // A `@Type` on a member with no rules would still convert it: not compiled.
    for (let owner: unknown = type; typeof owner === 'function' && owner !== Function.prototype;) {
      if (transformMetadata.typedProperties(owner).some((name) => !nestedTypes.has(name))) return undefined;
      owner = Object.getPrototypeOf(owner);
    }
    const allowed = new Set(Object.keys(byProperty));
    const build = builder(type, nestedTypes);
    const check: Check = (instance) => {
      if (options.whitelist) {
        for (const key in instance) {
          if (Object.hasOwn(instance, key) && !allowed.has(key)) return false;
        }
      }
      for (const one of checks) if (!one(instance)) return false;
      return true;
    };
    return { build, check };
  } finally {
    inProgress.delete(type);
  }
}

const PRIMITIVES = new Set<unknown>([String, Number, Boolean, Date, Object, Array, Map, Set, Buffer]);

/**
 * A class whose `plainToInstance` is `Object.assign(new Class(), raw)` with its nested members
 * built the same way: no member on its prototype but the constructor (class-transformer leaves
 * those alone), no `@Transform`, `@Expose` or `@Exclude` anywhere in its chain.
 */
function plainDataClass(type: Class): boolean {
  for (let current: unknown = type; typeof current === 'function' && current !== Function.prototype;) {
    const owner = current as Class;
    if (Object.getOwnPropertyNames(owner.prototype).some((name) => name !== 'constructor')) return false;
    if (transformMetadata.hasTransforms(owner)) return false;
    current = Object.getPrototypeOf(owner);
  }
  return true;
}

function builder(type: Class, nested: Map<string, Plan>): Build {
  const members = [...nested];
  return (raw) => {
    const instance = Object.assign(new type(), raw) as Record<string, unknown>;
    for (const [property, plan] of members) {
      const value = raw[property];
      if (value === null || value === undefined) continue;
      if (Array.isArray(value)) {
        const items: unknown[] = [];
        for (const item of value) {
          if (!isPlainObject(item)) return undefined; // class-transformer's own business
          const built = plan.build(item);
          if (!built) return undefined;
          items.push(built);
        }
        instance[property] = items;
      } else if (isPlainObject(value)) {
        const built = plan.build(value);
        if (!built) return undefined;
        instance[property] = built;
      } else {
        return undefined;
      }
    }
    return instance;
  };
}

/**
 * One property, as class-validator's executor checks it: its `ValidateIf` conditions (all true, or
 * the property is not checked at all), then every constraint (each item of an array for `each`),
 * then the nested instance or instances.
 */
function propertyCheck(
  type: Class,
  property: string,
  metadatas: ValidationMetadata[],
  nested: Plan | undefined,
): Check | undefined {
  const conditions: Array<(object: object, value: unknown) => boolean> = [];
  const constraints: Array<(object: object, value: unknown) => boolean> = [];
  for (const metadata of metadatas) {
    switch (metadata.type) {
      case ValidationTypes.CONDITIONAL_VALIDATION:
        conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
        break;
      case ValidationTypes.CUSTOM_VALIDATION:
      case ValidationTypes.IS_DEFINED:
        for (const constraint of validation.getTargetValidatorConstraints(metadata.constraintCls)) {
          if (constraint.async) return undefined;
          constraints.push(constraintCheck(type, metadata, constraint.instance));
        }
        break;
      case ValidationTypes.NESTED_VALIDATION:
      case ValidationTypes.WHITELIST:
        break;
      default:
        return undefined; // promise validation
    }
  }
  const nestedCheck = nested && nestedValueCheck(nested.check);
  return (instance) => {
    const value = instance[property];
    for (const condition of conditions) if (!condition(instance, value)) return true;
    for (const constraint of constraints) if (!constraint(instance, value)) return false;
    return nestedCheck ? nestedCheck(value) : true;
  };
}

function constraintCheck(
  type: Class,
  metadata: ValidationMetadata,
  constraint: ValidatorConstraintInterface,
): (object: object, value: unknown) => boolean {
  const { propertyName: property, constraints, each } = metadata;
  const passes = (value: unknown, args: ValidationArguments): boolean => {
    const result = constraint.validate(value, args) as unknown;
    // A promise would be awaited by class-validator; here it is "not sure".
    if (typeof result === 'object' && result !== null) return false;
    return Boolean(result);
  };
  return (object, value) => {
    const args: ValidationArguments = { targetName: type.name, property, object, value, constraints };
    if (each && Array.isArray(value)) {
      for (const item of value) if (!passes(item, args)) return false;
      return true;
    }
    return passes(value, args);
  };
}

/** `@ValidateNested()`: undefined passes, an instance or an array of instances is checked. */
function nestedValueCheck(check: Check): (value: unknown) => boolean {
  return (value) => {
    if (value === undefined) return true;
    if (Array.isArray(value)) {
      for (const item of value) {
        if (item === undefined) continue;
        if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
        if (!check(item as Record<string, unknown>)) return false;
      }
      return true;
    }
    if (typeof value !== 'object' || value === null) return false;
    return check(value as Record<string, unknown>);
  };
}
