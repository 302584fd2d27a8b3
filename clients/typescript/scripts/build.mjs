// build.mjs compiles src/ into dist/ with tsc (tsconfig.json). dist/ is committed, so that
// `npm install <clone>/clients/typescript` gives a working package without a build step (npm
// runs no install of a folder's devDependencies, so a `prepare` script could not reach tsc).
// With --check it writes nothing and fails when dist/ differs from what the sources give, a
// file more or less included.
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");

const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  },
});
const program = ts.createProgram(config.fileNames, config.options);
/** want maps each file of dist/, relative to it, to its text. */
const want = new Map();
const result = program.emit(undefined, (name, text) => want.set(relative(dist, name), text));
const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
if (diagnostics.length > 0) {
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" };
  console.error(ts.formatDiagnostics(diagnostics, host));
  process.exit(1);
}

/** files lists the files under dir, relative to it. */
async function files(dir) {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)));
}

const have = await files(dist);
if (process.argv.includes("--check")) {
  const stale = [];
  for (const [name, text] of want) {
    let current;
    try {
      current = await readFile(join(dist, name), "utf8");
    } catch {
      // missing: stale
    }
    if (current !== text) stale.push(name);
  }
  stale.push(...have.filter((name) => !want.has(name)).map((name) => `${name} (no source)`));
  if (stale.length > 0) {
    console.error(`build: dist/ is stale (${stale.sort().join(", ")}): run \`npm run build\` in clients/typescript and commit dist/`);
    process.exit(1);
  }
  console.error(`build: dist/ matches src/ (${want.size} files)`);
} else {
  for (const name of have.filter((name) => !want.has(name))) await rm(join(dist, name));
  for (const [name, text] of want) {
    await mkdir(dirname(join(dist, name)), { recursive: true });
    await writeFile(join(dist, name), text);
  }
  console.error(`build: wrote dist/ (${want.size} files)`);
}
