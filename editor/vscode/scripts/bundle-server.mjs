// Builds the lecode-ls wheel from this repository into server/, where the .vsix carries it and the
// extension installs it from on first start (src/install/environment.ts). Needs uv.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url));
const repo = fileURLToPath(new URL("../../..", import.meta.url));
const out = `${here}server`;
rmSync(out, { recursive: true, force: true });
mkdirSync(out);
const built = spawnSync("uv", ["build", "--wheel", "--quiet", "--out-dir", out, repo], { stdio: "inherit" });
if (built.error || built.status !== 0) {
  console.error(`building the lecode-ls wheel failed (${built.error?.message ?? `exit ${built.status}`}): uv is needed (https://docs.astral.sh/uv/)`);
  process.exit(1);
}
const wheels = readdirSync(out).filter((name) => /^lecode_ls-.+\.whl$/.test(name));
if (wheels.length !== 1) {
  console.error(`expected one lecode-ls wheel in ${out}, found ${JSON.stringify(readdirSync(out))}`);
  process.exit(1);
}
