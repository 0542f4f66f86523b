// Plans one tsc run that checks every type-equiv block and every ts example, and maps tsc's errors back to the docs.
//
// Each type-equiv block becomes a module holding the block verbatim (so its lines keep their
// numbers) followed by a trailer: imports for the names it uses, an alias to the package's type of
// each name it declares, and one assertion per question — the whole type (`Equals` over
// `Flatten`ed forms, so an intersection equals its flattened form at any depth), members only on one side, and per member its optionality, `readonly` and
// type. Every assertion has its own line, so a tsc error's line says which question failed.

import {
  type MemberDecl,
  parseDeclarations,
  referencedTypeNames,
  type TypeDecl,
} from "./declarations.js";
import type { DerivedType } from "./manifest.js";
import { FIX_TYPE_EQUIV, type Problem } from "./problem.js";
import type { TscDiagnostic, TscRun } from "./tsc.js";

/** A fenced block's text and where it stands. */
export interface CodeBlock {
  /** The Markdown file, as messages name it. */
  readonly file: string;
  /** The line of the opening fence: content line `n` is file line `openLine + n`. */
  readonly openLine: number;
  readonly content: string;
}

/** What one tsc run checks. */
export interface TypeCheckInput {
  readonly typeEquiv: readonly CodeBlock[];
  readonly examples: readonly CodeBlock[];
  /** The text of generated/types.gen.ts as the schema gives it now (rendered in memory). */
  readonly schemaTypes: string;
  /** Names the docs may declare that are defined over the package's types. */
  readonly derived: Readonly<Record<string, DerivedType>>;
}

/** Where a declared or referenced name is looked up: generated types, then derived names, then the SDK. */
export type TypeSource = "schema" | "derived" | "sdk";

/** The module specifier examples import the package by (mapped to src/index.ts). */
export const PACKAGE_SPECIFIER = "seedline";
/** Workspace files besides the blocks and examples. */
export const SCHEMA_TYPES_FILE = "schema-types.ts";
export const DERIVED_TYPES_FILE = "derived-types.ts";
export const HELPERS_FILE = "doc-sync-helpers.ts";

type Meaning =
  | { readonly kind: "import"; readonly name: string }
  | { readonly kind: "alias"; readonly name: string }
  | { readonly kind: "keys" | "union"; readonly name: string; readonly only: "package" | "doc" }
  | {
      readonly kind: "member";
      readonly name: string;
      readonly member: MemberDecl;
      readonly aspect: "optional" | "readonly" | "type";
    }
  | { readonly kind: "whole"; readonly name: string };

interface PlannedBlock {
  readonly block: CodeBlock;
  readonly fileName: string;
  readonly decls: readonly TypeDecl[];
  readonly contentLines: number;
  /** Trailer line → what its assertion asks. */
  readonly trailer: ReadonlyMap<number, Meaning>;
  readonly sources: ReadonlyMap<string, TypeSource>;
}

/** The workspace files of one tsc run and how to read its errors. */
export interface TypeCheckPlan {
  /** File name (in the workspace folder) → text. */
  readonly files: ReadonlyMap<string, string>;
  /** Problems found without the compiler: a name declared twice, a generic declaration. */
  readonly problems: readonly Problem[];
  readonly blocks: readonly PlannedBlock[];
  readonly examples: ReadonlyMap<string, CodeBlock>;
  /** Member types of the schema's object types, for messages. */
  readonly schemaMembers: ReadonlyMap<string, ReadonlyMap<string, MemberDecl>>;
  /** The names each block declares, by block index, for the manifest check. */
  readonly declared: ReadonlyMap<string, { readonly block: CodeBlock; readonly line: number }>;
}

/** The helper types every assertion uses. */
export const HELPERS_SOURCE = `// Type equality as the compiler decides it; written by scripts/doc-sync for one run.
export type Equals<X, Y> =
  (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
// Intersections and interfaces flatten to the same mapped object, at every depth, keeping readonly
// and optional modifiers (the mapped type is homomorphic), so only what a reader can see counts.
export type Flatten<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends object
    ? { [K in keyof T]: Flatten<T[K]> }
    : T;
export type Same<D, P> = Equals<Flatten<D>, Flatten<P>>;
export type OnlyKeys<A, B> = [Exclude<keyof A, keyof B>] extends [never] ? true : Exclude<keyof A, keyof B>;
export type OnlyMembers<A, B> = [Exclude<A, B>] extends [never] ? true : Exclude<A, B>;
type IsOptional<T, K extends keyof T> = {} extends Pick<T, K> ? true : false;
type IsReadonly<T, K extends keyof T> = Equals<Pick<T, K>, Readonly<Pick<T, K>>>;
export type SameOptional<D, P, K extends PropertyKey> =
  K extends keyof D & keyof P ? Equals<IsOptional<D, K>, IsOptional<P, K>> : true;
export type SameReadonly<D, P, K extends PropertyKey> =
  K extends keyof D & keyof P ? Equals<IsReadonly<D, K>, IsReadonly<P, K>> : true;
export type SameMemberType<D, P, K extends PropertyKey> =
  K extends keyof D & keyof P
    ? Equals<Flatten<Required<Pick<D, K>>[K]>, Flatten<Required<Pick<P, K>>[K]>>
    : true;
`;

/**
 * Plans the workspace: the schema's types, the derived names, the helpers, one module per
 * type-equiv block (block text, then its trailer) and one per example (verbatim).
 */
export function planTypeChecks(input: TypeCheckInput): TypeCheckPlan {
  const schemaDecls = parseDeclarations(input.schemaTypes);
  const schemaNames = new Set(schemaDecls.map((d) => d.name));
  const schemaMembers = new Map(
    schemaDecls.map((d) => [d.name, new Map(d.members.map((m) => [m.name, m]))] as const),
  );
  const sourceOf = (name: string): TypeSource =>
    schemaNames.has(name) ? "schema" : Object.hasOwn(input.derived, name) ? "derived" : "sdk";
  const files = new Map<string, string>([
    [HELPERS_FILE, HELPERS_SOURCE],
    [SCHEMA_TYPES_FILE, input.schemaTypes],
    [DERIVED_TYPES_FILE, derivedModule(input.derived, sourceOf)],
  ]);
  const problems: Problem[] = [];
  const declared = new Map<string, { block: CodeBlock; line: number }>();
  const blocks: PlannedBlock[] = [];
  input.typeEquiv.forEach((block, index) => {
    const fileName = `type-equiv-${index}.ts`;
    const decls = parseDeclarations(block.content);
    const contentLines = block.content.split("\n").length - 1;
    const trailer = new Map<number, Meaning>();
    const sources = new Map<string, TypeSource>();
    const lines: string[] = [];
    const push = (text: string, meaning?: Meaning) => {
      if (meaning !== undefined) trailer.set(contentLines + lines.length + 1, meaning);
      lines.push(text);
    };
    if (decls.length === 0) {
      problems.push({
        rule: "type-equiv",
        file: block.file,
        line: block.openLine,
        message: "type-equiv block declares no interface or type alias",
        fix: FIX_TYPE_EQUIV,
      });
    }
    push(`import type * as __schema from "./${jsName(SCHEMA_TYPES_FILE)}";`);
    push(`import type * as __derived from "./${jsName(DERIVED_TYPES_FILE)}";`);
    push(`import type * as __sdk from "${PACKAGE_SPECIFIER}";`);
    push(`import type * as __h from "./${jsName(HELPERS_FILE)}";`);
    for (const name of referencedTypeNames(block.content)) {
      push(`import type { ${name} } from "${moduleOf(sourceOf(name))}";`, { kind: "import", name });
    }
    for (const decl of decls) {
      const docLine = block.openLine + decl.line;
      const earlier = declared.get(decl.name);
      if (earlier !== undefined) {
        problems.push({
          rule: "type-equiv",
          file: block.file,
          line: docLine,
          message: `type-equiv block ${decl.name}: ${decl.name} is declared again (first at ${earlier.block.file}:${earlier.line})`,
          fix: "declare each type in one type-equiv block",
        });
        continue;
      }
      declared.set(decl.name, { block, line: docLine });
      if (decl.generic) {
        problems.push({
          rule: "type-equiv",
          file: block.file,
          line: docLine,
          message: `type-equiv block ${decl.name}: ${decl.name} has type parameters; type-equiv blocks declare concrete types`,
          fix: FIX_TYPE_EQUIV,
        });
        continue;
      }
      const source = sourceOf(decl.name);
      sources.set(decl.name, source);
      const d = decl.name;
      const p = `__Pkg_${d}`;
      push(`type ${p} = ${namespaceOf(source)}.${d};`, { kind: "alias", name: d });
      push(`const __whole_${d}: __h.Same<${d}, ${p}> = true;`, { kind: "whole", name: d });
      if (decl.objectShape) {
        push(`const __onlyPackage_${d}: __h.OnlyKeys<${p}, ${d}> = true;`, {
          kind: "keys",
          name: d,
          only: "package",
        });
        push(`const __onlyDoc_${d}: __h.OnlyKeys<${d}, ${p}> = true;`, {
          kind: "keys",
          name: d,
          only: "doc",
        });
        decl.members.forEach((member, i) => {
          const key = JSON.stringify(member.name);
          for (const aspect of ["optional", "readonly", "type"] as const) {
            const helper =
              aspect === "optional"
                ? "SameOptional"
                : aspect === "readonly"
                  ? "SameReadonly"
                  : "SameMemberType";
            push(`const __${aspect}_${d}_${i}: __h.${helper}<${d}, ${p}, ${key}> = true;`, {
              kind: "member",
              name: d,
              member,
              aspect,
            });
          }
        });
      } else {
        push(`const __onlyPackage_${d}: __h.OnlyMembers<${p}, ${d}> = true;`, {
          kind: "union",
          name: d,
          only: "package",
        });
        push(`const __onlyDoc_${d}: __h.OnlyMembers<${d}, ${p}> = true;`, {
          kind: "union",
          name: d,
          only: "doc",
        });
      }
    }
    files.set(fileName, `${block.content}${lines.join("\n")}\n`);
    blocks.push({ block, fileName, decls, contentLines, trailer, sources });
  });
  const examples = new Map<string, CodeBlock>();
  input.examples.forEach((example, index) => {
    const fileName = `example-${index}.ts`;
    files.set(fileName, example.content);
    examples.set(fileName, example);
  });
  return { files, problems, blocks, examples, schemaMembers, declared };
}

/**
 * The problems a tsc run reports for the plan: per type-equiv block, the names it declares that
 * the package lacks, the members that differ (presence, optionality, `readonly`, type) and, when
 * no member explains it, the whole type; per example, each error at its line in the docs.
 * Errors in files outside the workspace (the package's own sources) are left to the typecheck.
 */
export function typeCheckProblems(plan: TypeCheckPlan, run: TscRun): Problem[] {
  const problems: Problem[] = [];
  const byFile = new Map<string, TscDiagnostic[]>();
  for (const diagnostic of run.diagnostics) {
    if (diagnostic.file === undefined) {
      problems.push({
        rule: "tsc",
        message: `tsc: error ${diagnostic.code}: ${oneLine(diagnostic.message)}`,
        fix: "fix the compiler setup of scripts/doc-sync",
      });
      continue;
    }
    const list = byFile.get(diagnostic.file) ?? [];
    list.push(diagnostic);
    byFile.set(diagnostic.file, list);
  }
  for (const planned of plan.blocks) {
    problems.push(...blockProblems(plan, planned, byFile.get(planned.fileName) ?? []));
  }
  for (const [fileName, example] of plan.examples) {
    for (const d of byFile.get(fileName) ?? []) {
      problems.push({
        rule: "example",
        file: example.file,
        line: example.openLine + d.line,
        message: `ts example does not compile against the package: ${d.code}: ${oneLine(d.message)}`,
        fix: `fix the example (it imports the package as "${PACKAGE_SPECIFIER}", mapped to src/index.ts)`,
      });
    }
  }
  for (const d of byFile.get(DERIVED_TYPES_FILE) ?? []) {
    problems.push({
      rule: "manifest",
      file: "scripts/doc-sync/manifest.ts",
      message: `a derived type of DERIVED_TYPES does not compile: ${d.code}: ${oneLine(d.message)}`,
      fix: "fix its definition in scripts/doc-sync/manifest.ts",
    });
  }
  for (const name of [HELPERS_FILE, SCHEMA_TYPES_FILE]) {
    for (const d of byFile.get(name) ?? []) {
      problems.push({
        rule: "tsc",
        message: `${name}(${d.line},${d.column}): ${d.code}: ${oneLine(d.message)}`,
        fix: name === SCHEMA_TYPES_FILE ? "fix the schema" : "fix scripts/doc-sync/type-checks.ts",
      });
    }
  }
  if (run.exitCode !== 0 && run.diagnostics.length === 0) {
    problems.push({
      rule: "tsc",
      message: `tsc exited with ${run.exitCode} without a diagnostic this check reads: ${oneLine(run.output)}`,
      fix: "run the compiler by hand in the workspace to see why",
    });
  }
  return problems;
}

function blockProblems(
  plan: TypeCheckPlan,
  planned: PlannedBlock,
  diagnostics: readonly TscDiagnostic[],
): Problem[] {
  const { block } = planned;
  const label = planned.decls.map((d) => d.name).join(", ") || "(none)";
  const docLineOf = (name: string) =>
    block.openLine + (planned.decls.find((d) => d.name === name)?.line ?? 1);
  const problems: Problem[] = [];
  /** Names with a precise problem: their whole-type error would only repeat it. */
  const explained = new Set<string>();
  /** Names whose whole-type assertion failed. */
  const wholes: string[] = [];
  /** Names the package lacks: nothing else is said about them. */
  const unknown = new Set<string>();
  const problem = (
    name: string | undefined,
    line: number,
    message: string,
    rule: Problem["rule"] = "type-equiv",
  ) => {
    if (name !== undefined) explained.add(name);
    problems.push({
      rule,
      file: block.file,
      line,
      message: `type-equiv block ${name ?? label}: ${message}`,
      fix: FIX_TYPE_EQUIV,
    });
  };
  for (const d of diagnostics) {
    if (d.line <= planned.contentLines) {
      problem(
        undefined,
        block.openLine + d.line,
        `does not compile: ${d.code}: ${oneLine(d.message)}`,
      );
      continue;
    }
    const meaning = planned.trailer.get(d.line);
    if (meaning !== undefined && meaning.kind !== "import" && unknown.has(meaning.name)) continue;
    if (meaning === undefined) {
      problem(
        undefined,
        block.openLine,
        `unexpected error in its checks: ${d.code}: ${oneLine(d.message)}`,
      );
      continue;
    }
    const source = planned.sources.get(meaning.name) ?? "sdk";
    const where = sourceLabel(source);
    switch (meaning.kind) {
      case "import": {
        const line = block.openLine + firstLineNaming(block.content, meaning.name);
        problem(
          undefined,
          line,
          `${meaning.name} is no type of the package (${NOWHERE})`,
          "unknown-type",
        );
        break;
      }
      case "alias":
        unknown.add(meaning.name);
        problem(
          meaning.name,
          docLineOf(meaning.name),
          `${meaning.name} is no type of the package (${NOWHERE}), so there is nothing to compare it with`,
          "unknown-type",
        );
        break;
      case "keys":
        for (const member of quotedNames(d.message)) {
          const decl = planned.decls.find((x) => x.name === meaning.name);
          const own = decl?.members.find((m) => m.name === member);
          problem(
            meaning.name,
            own === undefined ? docLineOf(meaning.name) : block.openLine + own.line,
            meaning.only === "package"
              ? `member ${member} is in ${where} but missing from the doc`
              : `member ${member} is in the doc but not in ${where}`,
          );
        }
        break;
      case "union":
        problem(
          meaning.name,
          docLineOf(meaning.name),
          meaning.only === "package"
            ? `${where} has ${expectedType(d.message)} that the doc's ${meaning.name} lacks`
            : `the doc has ${expectedType(d.message)} that ${where}'s ${meaning.name} lacks`,
        );
        break;
      case "member": {
        const { member, aspect } = meaning;
        const line = block.openLine + member.line;
        if (aspect === "optional") {
          problem(
            meaning.name,
            line,
            member.optional
              ? `member ${member.name} is required in ${where} but optional in the doc`
              : `member ${member.name} is optional in ${where} but required in the doc`,
          );
        } else if (aspect === "readonly") {
          problem(
            meaning.name,
            line,
            member.readonly
              ? `member ${member.name} is not readonly in ${where} but readonly in the doc`
              : `member ${member.name} is readonly in ${where} but not in the doc`,
          );
        } else {
          const theirs =
            source === "schema"
              ? plan.schemaMembers.get(meaning.name)?.get(member.name)?.type
              : undefined;
          problem(
            meaning.name,
            line,
            theirs === member.type
              ? `member ${member.name} has type ${member.type} in the doc and in ${where}, but the doc's ${member.type} is another type (a type it names differs; see that type's problem)`
              : `member ${member.name} has type ${member.type} in the doc but ${theirs ?? "another type"} in ${where}`,
          );
        }
        break;
      }
      case "whole":
        wholes.push(meaning.name);
        break;
    }
  }
  for (const name of wholes) {
    if (explained.has(name)) continue;
    const differing = [...explained].filter((other) => other !== name && !unknown.has(other));
    const why =
      differing.length > 0
        ? `; ${differing.join(" and ")}, declared in this block, ${differing.length > 1 ? "differ" : "differs"}`
        : " (look at extends clauses, index signatures, union members and nested types)";
    problem(
      name,
      docLineOf(name),
      `${name} is not type-equal to ${sourceLabel(planned.sources.get(name) ?? "sdk")}'s ${name}${why}`,
    );
  }
  return problems;
}

const NOWHERE =
  "not in generated/types.gen.ts, not a derived name of scripts/doc-sync/manifest.ts, not exported by src/index.ts";

function sourceLabel(source: TypeSource): string {
  return source === "sdk" ? "src/index.ts" : "the schema";
}

function derivedModule(
  derived: Readonly<Record<string, DerivedType>>,
  sourceOf: (name: string) => TypeSource,
): string {
  const names = Object.keys(derived).sort();
  const refs = new Set<string>();
  for (const name of names) {
    for (const ref of referencedTypeNames(
      `type __X = ${(derived[name] as DerivedType).definition};`,
    )) {
      if (!Object.hasOwn(derived, ref)) refs.add(ref);
    }
  }
  const imports = [...refs]
    .sort()
    .map((ref) => `import type { ${ref} } from "${moduleOf(sourceOf(ref))}";`);
  const types = names.map(
    (name) => `export type ${name} = ${(derived[name] as DerivedType).definition};`,
  );
  return `${[...imports, ...types].join("\n")}\n`;
}

function moduleOf(source: TypeSource): string {
  if (source === "schema") return `./${jsName(SCHEMA_TYPES_FILE)}`;
  if (source === "derived") return `./${jsName(DERIVED_TYPES_FILE)}`;
  return PACKAGE_SPECIFIER;
}

function namespaceOf(source: TypeSource): string {
  return source === "schema" ? "__schema" : source === "derived" ? "__derived" : "__sdk";
}

function jsName(tsFile: string): string {
  return tsFile.replace(/\.ts$/, ".js");
}

/** The 1-based content line where `name` first appears as a word (1 when it does not). */
function firstLineNaming(content: string, name: string): number {
  const index = content.split("\n").findIndex((l) => new RegExp(`\\b${name}\\b`).test(l));
  return index === -1 ? 1 : index + 1;
}

/** The type tsc says a `true` was not assignable to: the set of members one side lacks. */
function expectedType(message: string): string {
  const m = /is not assignable to type '(.*)'\.?$/m.exec(message);
  return m?.[1] ?? "members";
}

/** The string literal names in tsc's "not assignable to type '"a" | "b"'" message. */
function quotedNames(message: string): string[] {
  return [...expectedType(message).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] as string);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
