// Checks what the server really sends against its OpenAPI document at run time: the generated
// types only hold if the document describes the wire. A small JSON Schema (2020-12 subset, as the
// document uses it) validator: $ref, oneOf (+ discriminator), allOf, anyOf, type (incl. "null"),
// enum, const, properties, required, additionalProperties, items, minimum/maximum,
// minLength/maxLength, pattern, minItems.
//
// Two kinds of problems are reported: a value the schema refuses, and an *undocumented field* (a
// property the server sends that the schema does not declare, in an object schema that does not
// say `additionalProperties`): the generated types do not have it, so clients cannot read it.

import type { Middleware } from "openapi-fetch";

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
}

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** A problem: `hard` when the schema refuses the value, else an undocumented field. */
interface Problem {
  path: string;
  message: string;
  hard: boolean;
}

export class OpenApiChecker {
  private doc: Document | undefined;
  /** Every problem found so far, as `where: $.path: message`. */
  readonly problems: string[] = [];
  /** How many values were checked, by schema (for the test's own sanity checks). */
  readonly checked = new Map<string, number>();

  load(document: unknown): void {
    const d = document as Partial<Document>;
    if (!d.paths || !d.components?.schemas) throw new Error("not an OpenAPI document");
    this.doc = d as Document;
  }

  /** Checks `value` against the component schema `name`; records and returns the problems. */
  check(name: string, value: unknown, where: string): string[] {
    return this.checkSchema({ $ref: `#/components/schemas/${name}` }, value, where, name);
  }

  private checkSchema(schema: Schema, value: unknown, where: string, label: string): string[] {
    this.checked.set(label, (this.checked.get(label) ?? 0) + 1);
    const out: Problem[] = [];
    this.validate(schema, value, "$", out, true);
    const found = out.map((p) => `${where}: ${p.path}: ${p.message}`);
    this.problems.push(...found);
    return found;
  }

  /** An openapi-fetch middleware checking every JSON response against the operation's response schema. */
  middleware(): Middleware {
    return {
      onResponse: async ({ request, response, schemaPath }) => {
        const doc = this.doc;
        if (!doc) return undefined;
        const method = request.method.toLowerCase();
        const where = `${request.method} ${schemaPath} → ${response.status}`;
        const op = doc.paths[schemaPath]?.[method];
        if (!op) {
          this.problems.push(`${where}: the operation is not in the document`);
          return undefined;
        }
        const status = String(response.status);
        const declared = op.responses?.[status] ?? op.responses?.[`${status[0]}XX`] ?? op.responses?.default;
        if (!declared) {
          this.problems.push(`${where}: the status is not documented for this operation`);
          return undefined;
        }
        const text = await response.clone().text();
        if (!text) {
          if (declared.content && response.status !== 204) this.problems.push(`${where}: empty body, but the document declares content`);
          return undefined;
        }
        const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
        const media = declared.content?.[type];
        if (!media) {
          this.problems.push(`${where}: content type ${type} is not documented (declared: ${Object.keys(declared.content ?? {}).join(", ") || "none"})`);
          return undefined;
        }
        if (type === "application/json" && media.schema) {
          this.checkSchema(media.schema, JSON.parse(text), where, `${method} ${schemaPath} ${status}`);
        }
        return undefined;
      },
    };
  }

  private resolve(ref: string): Schema {
    const prefix = "#/components/schemas/";
    const target = ref.startsWith(prefix) ? this.doc?.components.schemas[ref.slice(prefix.length)] : undefined;
    if (!target) throw new Error(`unresolvable $ref ${ref}`);
    return target;
  }

  /** Property names an object schema declares (through $ref and allOf), or `null` when any is allowed. */
  private declared(schema: Schema): Set<string> | null {
    if (schema.$ref) return this.declared(this.resolve(schema.$ref));
    if (schema.additionalProperties !== undefined) return null;
    const keys = new Set(Object.keys(schema.properties ?? {}));
    for (const member of schema.allOf ?? []) {
      const more = this.declared(member);
      if (more === null) return null;
      for (const k of more) keys.add(k);
    }
    return keys;
  }

  private validate(schema: Schema, v: unknown, path: string, out: Problem[], checkUndeclared: boolean): void {
    if (schema.$ref) {
      this.validate(this.resolve(schema.$ref), v, path, out, checkUndeclared);
      return;
    }
    const hard = (message: string) => out.push({ path, message, hard: true });

    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (!types.some((t) => hasType(v, t))) {
        hard(`expected ${types.join(" | ")}, got ${describe(v)}`);
        return;
      }
    }
    if (schema.enum && !schema.enum.some((e) => e === v)) hard(`${JSON.stringify(v)} is not one of ${JSON.stringify(schema.enum)}`);
    if (schema.const !== undefined && schema.const !== v) hard(`${JSON.stringify(v)} is not ${JSON.stringify(schema.const)}`);
    if (typeof v === "number") {
      if (schema.minimum !== undefined && v < schema.minimum) hard(`${v} < minimum ${schema.minimum}`);
      if (schema.maximum !== undefined && v > schema.maximum) hard(`${v} > maximum ${schema.maximum}`);
    }
    if (typeof v === "string") {
      const len = [...v].length;
      if (schema.minLength !== undefined && len < schema.minLength) hard(`length ${len} < minLength ${schema.minLength}`);
      if (schema.maxLength !== undefined && len > schema.maxLength) hard(`length ${len} > maxLength ${schema.maxLength}`);
      if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(v)) hard(`${JSON.stringify(v)} does not match ${schema.pattern}`);
    }
    if (Array.isArray(v)) {
      if (schema.minItems !== undefined && v.length < schema.minItems) hard(`${v.length} items < minItems ${schema.minItems}`);
      if (schema.items) v.forEach((item, i) => this.validate(schema.items!, item, `${path}[${i}]`, out, true));
    }

    for (const member of schema.allOf ?? []) this.validate(member, v, path, out, false);
    if (schema.anyOf && !schema.anyOf.some((m) => this.hardProblems(m, v, path).length === 0)) hard("matches none of anyOf");
    if (schema.oneOf) this.validateOneOf(schema, v, path, out);

    if (isObject(v)) {
      const props = schema.properties ?? {};
      for (const name of schema.required ?? []) if (!(name in v)) hard(`missing required property \`${name}\``);
      for (const [name, value] of Object.entries(v)) {
        const sub = props[name];
        if (sub) this.validate(sub, value, `${path}.${name}`, out, true);
        else if (typeof schema.additionalProperties === "object") this.validate(schema.additionalProperties, value, `${path}.${name}`, out, true);
        else if (schema.additionalProperties === false) hard(`property \`${name}\` is not allowed`);
      }
      if (checkUndeclared && !schema.oneOf && !schema.anyOf && (schema.properties || schema.allOf)) {
        const declared = this.declared(schema);
        if (declared) {
          for (const name of Object.keys(v)) {
            if (!declared.has(name)) out.push({ path, message: `undocumented field \`${name}\` = ${JSON.stringify(v[name])}`, hard: false });
          }
        }
      }
    }
  }

  private validateOneOf(schema: Schema, v: unknown, path: string, out: Problem[]): void {
    const branches = schema.oneOf!;
    const prop = schema.discriminator?.propertyName;
    if (prop && isObject(v) && typeof v[prop] === "string") {
      const tag = v[prop] as string;
      const mapped = schema.discriminator?.mapping?.[tag];
      const chosen = mapped
        ? [{ $ref: mapped }]
        : branches.filter((b) => {
            const target = b.$ref ? this.resolve(b.$ref) : b;
            const p = target.properties?.[prop];
            return p?.enum?.includes(tag) || p?.const === tag;
          });
      if (chosen.length !== 1) {
        out.push({ path, message: `${prop} ${JSON.stringify(tag)} selects ${chosen.length} variants`, hard: true });
        return;
      }
      this.validate(chosen[0]!, v, path, out, true);
      return;
    }
    const matching = branches.filter((b) => this.hardProblems(b, v, path).length === 0);
    if (matching.length !== 1) {
      out.push({ path, message: `matches ${matching.length} of the ${branches.length} oneOf variants (${describe(v)})`, hard: true });
      return;
    }
    this.validate(matching[0]!, v, path, out, true);
  }

  private hardProblems(schema: Schema, v: unknown, path: string): Problem[] {
    const out: Problem[] = [];
    this.validate(schema, v, path, out, false);
    return out.filter((p) => p.hard);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case "null":
      return v === null;
    case "object":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    case "integer":
      return Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "string":
    case "boolean":
      return typeof v === t;
    default:
      return false;
  }
}

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? "undefined" : s.length > 80 ? `${s.slice(0, 80)}…` : s;
}
