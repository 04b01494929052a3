// Copies the console's runtime libraries from node_modules into
// static/vendor/, where the Rust binary embeds them (src/console.rs).
// Run after changing a version in package.json: `npm ci && npm run vendor`,
// then commit static/vendor/ so `cargo build` needs no npm.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const nm = join(root, 'node_modules');
const out = join(root, 'static', 'vendor');
mkdirSync(out, { recursive: true });

const files = [
  ['preact', 'dist/preact.mjs', 'preact.module.js'],
  ['preact', 'hooks/dist/hooks.mjs', 'hooks.module.js'],
  ['htm', 'dist/htm.module.js', 'htm.module.js'],
  // uPlot ships its ES module unminified only; minified here, it is most
  // of a hundred KB less of the binary's (and image's) size budget.
  ['uplot', 'dist/uPlot.esm.js', 'uPlot.esm.js', { minify: true }],
  ['uplot', 'dist/uPlot.min.css', 'uPlot.min.css'],
];
for (const [pkg, from, to, options] of files) {
  let text = readFileSync(join(nm, pkg, from), 'utf8');
  // Source maps are not shipped; drop the comment that would ask for one.
  text = text.replace(/\n?\/[/*]# sourceMappingURL=.*$/m, '');
  if (options?.minify) {
    const { version, license } = JSON.parse(readFileSync(join(nm, pkg, 'package.json'), 'utf8'));
    const { code } = transformSync(text, { minify: true, format: 'esm', legalComments: 'none' });
    text = `/* ${pkg} ${version} (${license}), minified; see LICENSES.txt */\n${code}`;
  }
  writeFileSync(join(out, to), text);
}

let licenses = 'Third-party code embedded in the Retsu console (static/vendor/).\n';
for (const pkg of ['preact', 'htm', 'uplot']) {
  const meta = JSON.parse(readFileSync(join(nm, pkg, 'package.json'), 'utf8'));
  const license = readFileSync(join(nm, pkg, 'LICENSE'), 'utf8');
  licenses += `\n==== ${pkg} ${meta.version} (${meta.license}) ====\n\n${license.trim()}\n`;
}
writeFileSync(join(out, 'LICENSES.txt'), licenses);
console.log(`vendored ${files.length} files into ${out}`);
