// `src/` is bundled into the server's browser console: it must compile with the browser's globals
// only (ES2022 + DOM, no Node types) and import nothing but its own files and openapi-fetch.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const srcDir = fileURLToPath(new URL("../../src/", import.meta.url));
const files = readdirSync(srcDir)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join(srcDir, f));

test("src/ imports only its own files and openapi-fetch", () => {
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022);
    for (const statement of source.statements) {
      if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier) {
        const spec = (statement.moduleSpecifier as ts.StringLiteral).text;
        assert.ok(spec.startsWith("./") || spec === "openapi-fetch", `${file} imports ${spec}`);
      }
    }
  }
});

test("src/ type-checks strictly without Node's types", () => {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
  });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => srcDir,
    getNewLine: () => "\n",
  };
  assert.equal(diagnostics.length, 0, ts.formatDiagnostics(diagnostics, host));
});
