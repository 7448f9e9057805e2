/**
 * The shape of the extension (STYLE 15): the modules of src/ import one another without a cycle,
 * type-only imports included (a cycle through types is still one a reader has to untangle), as
 * tests/unit/test_architecture.py checks for the server.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The files of src/ that `file` imports (relative imports only: packages cannot import back). */
function imports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .filter(({ fileName }) => fileName.startsWith("."))
    .map(({ fileName }) => {
      const base = resolve(dirname(file), fileName);
      const found = [`${base}.ts`, join(base, "index.ts"), base].find((path) => existsSync(path) && path.endsWith(".ts"));
      if (found === undefined) {
        throw new Error(`${relative(SRC, file)} imports ${fileName}, which is no .ts file of src/`);
      }
      return found;
    });
}

/** Every cycle's modules (src-relative), found by depth-first search; none: []. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file].map((f) => relative(SRC, f)));
      return;
    }
    if (done.has(file)) {
      return;
    }
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      visit(next);
    }
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) {
    visit(file);
  }
  return found;
}

describe("the modules of src/", () => {
  const graph = new Map(sources(SRC).map((file) => [file, imports(file)]));

  it("are all seen", () => {
    expect(graph.has(join(SRC, "extension.ts"))).toBe(true);
    expect(graph.has(join(SRC, "views", "nodes.ts"))).toBe(true);
  });

  it("import one another without a cycle", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("would have a cycle found", () => {
    const a = join(SRC, "a.ts");
    const b = join(SRC, "b.ts");
    expect(cycles(new Map([[a, [b]], [b, [a]]]))).toEqual([["a.ts", "b.ts", "a.ts"]]);
  });
});
