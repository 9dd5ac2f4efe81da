// The oracle of bench/methods_ts.py: the TypeScript compiler's language service.
//
//   node bench/ts_oracle.mjs sites   <typescript> <root> <src>            > sites.json
//   node bench/ts_oracle.mjs resolve <typescript> <root> <src> <limit>    < ordered sites
//
// <typescript>: the folder of the `typescript` package (bench/methods_ts.py installs it in
// .bench-cache/ts-oracle); <root>: the corpus; <src>: its source folder, relative to <root>.
//
// `sites` lists every call `X.m(` (a property access, not `X?.m(`, the name right after its
// dot on one line) in the corpus's .ts source files (no .d.ts, no test or spec file), in file
// and source order. `resolve` reads such a list, in the order it is to be tried (the caller
// shuffles it), and asks `getDefinitionAtPosition` at `m` for each until <limit> tasks are
// found. A site is a task when there is exactly one definition, a method (a method declaration
// or a method signature; a property whose type is a function is not one) of a named class or
// interface, in another .ts source file of the corpus, and the receiver X is not a namespace
// or module (`import * as ns`, `namespace N`). It prints {tasks, tried, sites, skipped}: tasks
// in bench/methods.py's MethodTask shape (lines 1-based, columns UTF-8 byte offsets).

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const [cmd, tsDir, rootArg, src, limitArg] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const ts = require(path.resolve(tsDir));
const root = path.resolve(rootArg);

const TEST_DIRS = new Set(["test", "tests", "testing", "__tests__", "spec", "specs", "__mocks__"]);

function isSource(rel) {
  if (!rel.endsWith(".ts") || rel.endsWith(".d.ts")) return false;
  const parts = rel.split("/");
  if (parts.some((p) => TEST_DIRS.has(p) || p === "node_modules" || p === "dist")) return false;
  return !/\.(test|spec)\.ts$/.test(rel);
}

function walk(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  )) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") walk(full, out);
    } else if (entry.name.endsWith(".ts")) {
      out.push(path.relative(root, full).split(path.sep).join("/"));
    }
  }
  return out;
}

const allTs = walk(path.join(root, src), []); // every .ts of the source folder, .d.ts included
const sources = allTs.filter(isSource);
const texts = new Map();
const textOf = (rel) => {
  if (!texts.has(rel)) texts.set(rel, fs.readFileSync(path.join(root, rel), "utf8"));
  return texts.get(rel);
};

// Lines as bench/methods.py counts them (split on "\n"), columns in UTF-8 bytes.
function lineCol(text, pos) {
  const start = text.lastIndexOf("\n", pos - 1) + 1;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < pos; i = text.indexOf("\n", i + 1)) line++;
  return { line, start };
}
const bytes = (s) => Buffer.byteLength(s, "utf8");

function listSites() {
  const sites = [];
  for (const rel of sources) {
    const text = textOf(rel);
    const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node) => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        !node.expression.questionDotToken &&
        ts.isIdentifier(node.expression.name)
      ) {
        const name = node.expression.name;
        const pos = name.getStart(sf);
        const end = name.getEnd();
        const { line, start } = lineCol(text, pos);
        if (pos > start && text[pos - 1] === "." && text[pos - 2] !== "?") {
          sites.push({
            path: rel,
            pos,
            line,
            col_a: bytes(text.slice(start, end)),
            col_b: bytes(text.slice(start, pos)),
            method: name.text,
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return sites;
}

function compilerOptions() {
  // The package's own tsconfig when it ships one (its paths, lib, target), else defaults.
  const defaults = {
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ["lib.es2020.d.ts", "lib.dom.d.ts"],
    allowJs: false,
    skipLibCheck: true,
    strict: true,
  };
  for (const dir of [path.join(root, src), root]) {
    const file = path.join(dir, "tsconfig.json");
    if (!fs.existsSync(file)) continue;
    const { config } = ts.readConfigFile(file, ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config || {}, ts.sys, dir);
    return { ...parsed.options, incremental: false, composite: false, allowJs: false, skipLibCheck: true, noEmit: true, types: [] };
  }
  return { ...defaults, noEmit: true, types: [] };
}

function resolveSites(sites, limit) {
  const options = compilerOptions();
  const files = allTs.map((rel) => path.join(root, rel));
  const host = {
    getScriptFileNames: () => files,
    getScriptVersion: () => "1",
    getScriptSnapshot: (file) =>
      fs.existsSync(file) ? ts.ScriptSnapshot.fromString(fs.readFileSync(file, "utf8")) : undefined,
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  const service = ts.createLanguageService(host, ts.createDocumentRegistry());
  const program = service.getProgram();
  const checker = program.getTypeChecker();
  const skipped = {};
  const skip = (why) => {
    skipped[why] = (skipped[why] || 0) + 1;
  };
  const tasks = [];
  let tried = 0;
  for (const site of sites) {
    if (tasks.length >= limit) break;
    tried++;
    const file = path.join(root, site.path);
    const sf = program.getSourceFile(file);
    if (!sf) {
      skip("file not in the program");
      continue;
    }
    const defs = service.getDefinitionAtPosition(file, site.pos) || [];
    if (defs.length !== 1) {
      skip(defs.length ? "several definitions" : "no definition");
      continue;
    }
    const def = defs[0];
    const defRel = path.relative(root, def.fileName).split(path.sep).join("/");
    if (defRel.startsWith("..") || path.isAbsolute(defRel) || !isSource(defRel)) {
      skip("defined outside the corpus's .ts sources");
      continue;
    }
    if (defRel === site.path) {
      skip("defined in the same file");
      continue;
    }
    const defSf = program.getSourceFile(def.fileName);
    const nameNode = defSf && findNode(defSf, def.textSpan.start);
    const node = nameNode && nameNode.parent;
    if (!node || !(ts.isMethodDeclaration(node) || ts.isMethodSignature(node)) || node.name !== nameNode) {
      skip(`not a method (${def.kind})`);
      continue;
    }
    const owner = node.parent;
    if (
      !(ts.isClassDeclaration(owner) || ts.isInterfaceDeclaration(owner)) ||
      !owner.name
    ) {
      skip("a method of an object literal, a class expression or a type literal");
      continue;
    }
    // the receiver: not a namespace or module (`ns.f(`), as jedi's "not a module"
    const call = findNode(sf, site.pos).parent; // the property access `X.m`
    let sym = checker.getSymbolAtLocation(call.expression);
    if (sym && sym.flags & ts.SymbolFlags.Alias) {
      const isNamespaceImport = (sym.declarations || []).some(
        (d) => ts.isNamespaceImport(d) || ts.isImportEqualsDeclaration(d),
      );
      if (isNamespaceImport) {
        skip("the receiver is a namespace import");
        continue;
      }
      sym = checker.getAliasedSymbol(sym);
    }
    if (sym && sym.flags & (ts.SymbolFlags.ValueModule | ts.SymbolFlags.NamespaceModule)) {
      skip("the receiver is a module or namespace");
      continue;
    }
    const defText = defSf.text;
    tasks.push({
      path: site.path,
      line: site.line,
      col_a: site.col_a,
      col_b: site.col_b,
      method: site.method,
      cls: owner.name.text,
      def_path: defRel,
      def_line: lineCol(defText, def.textSpan.start).line,
    });
  }
  return { tasks, tried, sites: sites.length, skipped, typescript: ts.version };
}

function findNode(sf, pos) {
  // the innermost node that starts at pos (its token)
  let found;
  const visit = (node) => {
    if (node.getStart(sf) <= pos && pos < node.getEnd()) {
      if (node.getStart(sf) === pos) found = node;
      ts.forEachChild(node, visit);
    }
  };
  visit(sf);
  return found;
}

if (cmd === "sites") {
  process.stdout.write(JSON.stringify(listSites()));
} else if (cmd === "resolve") {
  const sites = JSON.parse(fs.readFileSync(0, "utf8"));
  process.stdout.write(JSON.stringify(resolveSites(sites, Number(limitArg))));
} else {
  process.stderr.write("usage: ts_oracle.mjs sites|resolve <typescript> <root> <src> [limit]\n");
  process.exit(2);
}
