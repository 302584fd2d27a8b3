// The package as an app gets it, outside the repository: `npm pack` gives a complete package
// (every file the exports map names), installed into a fresh project it imports from every
// entry point of the exports map (ESM; CommonJS where Node.js has require(esm); the types under
// tsc), and `npm install <clone>/clients/typescript` (a folder, as a clone has it: the files git
// tracks or would) works too. The packages come from the npm cache (--offline) when it has
// them, as after scripts/test-js.sh's npm ci; the peer dependencies are the versions installed
// here. Needs no server.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

const pkgDir = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const require = createRequire(join(pkgDir, "package.json"));

/** entries are the import specifiers of every entry point of the exports map. */
const entries = Object.keys(pkg.exports)
  .filter((k) => k !== "./package.json")
  .map((k) => (k === "." ? pkg.name : pkg.name + k.slice(1)));

/** targets lists every file the exports map names, without the leading "./". */
function targets(value) {
  if (typeof value === "string") return [value.replace(/^\.\//, "")];
  return Object.values(value ?? {}).flatMap(targets);
}

let work;
before(() => {
  work = mkdtempSync(join(tmpdir(), "agentmem-package-"));
});
after(() => rmSync(work, { recursive: true, force: true }));

/** run runs a command in dir and answers its standard output. */
const run = (cmd, args, dir) => execFileSync(cmd, args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** app makes a fresh ES module project named name and installs specs into it. */
function app(name, specs, extraArgs = []) {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  const args = ["install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", ...extraArgs, ...specs];
  try {
    run("npm", [...args, "--offline"], dir);
  } catch {
    run("npm", [...args, "--prefer-offline"], dir); // something not in the cache yet
  }
  return dir;
}

/** peers are the peer dependencies at the versions installed beside the client. */
const peers = () =>
  Object.keys(pkg.peerDependencies ?? {}).map((name) => `${name}@${require(`${name}/package.json`).version}`);

/** node runs an ES module's source in dir and answers what it prints. */
const node = (dir, source) => run(process.execPath, ["--input-type=module", "-e", source], dir);

test("npm pack: the tarball holds every file the exports map names", () => {
  const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], pkgDir));
  const files = new Set(packed.files.map((f) => f.path));
  const missing = [...targets(pkg.exports), pkg.main, pkg.types].map((f) => f.replace(/^\.\//, "")).filter((f) => !files.has(f));
  assert.deepEqual(missing, [], `npm pack left out ${missing}`);
  assert.ok(files.has("README.md"));
  writeFileSync(join(work, "tarball"), join(work, packed.filename));
});

test("the packed client, installed in a fresh project, imports from every entry point", () => {
  const tarball = readFileSync(join(work, "tarball"), "utf8");
  const dir = app("packed", [tarball, ...peers()]);
  const found = JSON.parse(
    node(
      dir,
      `const out = {};
for (const spec of ${JSON.stringify(entries)}) out[spec] = Object.keys(await import(spec));
console.log(JSON.stringify(out));`,
    ),
  );
  for (const spec of entries) assert.ok(found[spec].length > 0, `${spec} exports nothing`);
  assert.ok(found[pkg.name].includes("AgentMemClient"));
  assert.ok(found[`${pkg.name}/langchain`].includes("AgentMemChatMessageHistory"));

  // package.json is open to require, and CommonJS reaches every entry where Node.js has
  // require(esm) (20.19, 22.12 and later).
  const cjs = JSON.parse(
    node(
      dir,
      `import { createRequire } from "node:module";
const require = createRequire(process.cwd() + "/");
const out = { version: require(${JSON.stringify(pkg.name + "/package.json")}).version, entries: {} };
if (process.features.require_module) for (const spec of ${JSON.stringify(entries)}) out.entries[spec] = Object.keys(require(spec));
console.log(JSON.stringify(out));`,
    ),
  );
  assert.equal(cjs.version, pkg.version);
  if (process.features.require_module) for (const spec of entries) assert.ok(cjs.entries[spec]?.length > 0, `require(${spec}) exports nothing`);

  // The types of every entry point, under tsc --strict with Node.js's resolution.
  writeFileSync(
    join(dir, "index.ts"),
    entries.map((spec, i) => `import * as e${i} from ${JSON.stringify(spec)};\nexport { e${i} };\n`).join(""),
  );
  const compilerOptions = { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [], skipLibCheck: true };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["index.ts"] }));
  const tsc = join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
  const out = (() => {
    try {
      return run(process.execPath, [tsc, "-p", "."], dir);
    } catch (err) {
      return String(err.stdout) + String(err.stderr);
    }
  })();
  assert.equal(out.trim(), "", "tsc on the installed package");
});

test("npm install <clone>/clients/typescript: the folder as a clone has it works without a build", () => {
  // The files of a clone: what git tracks, and what it would (not ignored).
  const clone = join(work, "clone", "clients", "typescript");
  const listed = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "."], pkgDir).split("\0").filter(Boolean);
  for (const f of listed) {
    try {
      mkdirSync(dirname(join(clone, f)), { recursive: true });
      cpSync(join(pkgDir, f), join(clone, f));
    } catch (err) {
      if (err.code !== "ENOENT") throw err; // deleted in the work tree, not committed yet
    }
  }
  // As the README says: a link (no dependency of the app's), and a copy with --install-links.
  const linked = app("linked", [clone]);
  assert.deepEqual(JSON.parse(node(linked, `console.log(JSON.stringify(typeof (await import(${JSON.stringify(pkg.name)})).AgentMemClient))`)), "function");
  const copied = app("copied", [clone, ...peers()], ["--install-links"]);
  const found = JSON.parse(
    node(copied, `const out = {}; for (const spec of ${JSON.stringify(entries)}) out[spec] = Object.keys(await import(spec)); console.log(JSON.stringify(out));`),
  );
  for (const spec of entries) assert.ok(found[spec].length > 0, `${spec} exports nothing`);
});
