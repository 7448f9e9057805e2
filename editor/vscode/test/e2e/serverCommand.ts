/** The lecode-ls command the end-to-end tests run. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../../../", import.meta.url));

/** $LECODE_LS_E2E_COMMAND (a JSON array), else the repository's .venv python -m lecode_ls. */
export function serverCommand(): string[] {
  const configured = process.env.LECODE_LS_E2E_COMMAND;
  if (configured) {
    return JSON.parse(configured) as string[];
  }
  const python = join(repo, ".venv", "bin", "python");
  if (!existsSync(python)) {
    throw new Error(`no ${python}: run \`uv sync\` at the repository root, or set LECODE_LS_E2E_COMMAND`);
  }
  return [python, "-m", "lecode_ls"];
}
