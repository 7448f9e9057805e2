/**
 * The MCP API's shape as src/mcp/provider.ts types it, checked by the TypeScript compiler against
 * VS Code 1.101's own declarations (@types/vscode@1.101.0, installed as @types/vscode-1.101 beside
 * the engines minimum's 1.91 the extension compiles against): the real class constructs what the
 * provider expects, the provider is a vscode.McpServerDefinitionProvider, and lm's function fits.
 */
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const PROVIDER = fileURLToPath(new URL("../src/mcp/provider.ts", import.meta.url));
const VSCODE_1_101 = fileURLToPath(new URL("../node_modules/@types/vscode-1.101/index.d.ts", import.meta.url));
const CHECK = fileURLToPath(new URL("./mcpApiTypes.check.ts", import.meta.url));

const SOURCE = `
import * as vscode from "vscode";
import type { DefinitionProvider, McpApi, StdioDefinitionClass } from "${PROVIDER.replace(/\.ts$/, "")}";
export const definition: StdioDefinitionClass = vscode.McpStdioServerDefinition;
declare const ours: DefinitionProvider;
export const provider: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> = ours;
export const api: McpApi = {
  registerMcpServerDefinitionProvider: vscode.lm.registerMcpServerDefinitionProvider,
  McpStdioServerDefinition: vscode.McpStdioServerDefinition,
};
`;

/** The compiler's errors for `source`, with "vscode" resolved to 1.101's declarations. */
function errors(source: string): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    types: ["node"],
    baseUrl: ".",
    paths: { vscode: [VSCODE_1_101] },
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (file) => (file === CHECK ? source : read(file));
  host.fileExists = ((exists) => (file: string) => file === CHECK || exists(file))(host.fileExists.bind(host));
  const program = ts.createProgram([CHECK], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? d.file.fileName.split("/").slice(-2).join("/") : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}

describe("the MCP API's types of src/mcp/provider.ts", () => {
  it("fit VS Code 1.101's declarations", () => {
    expect(errors(SOURCE)).toEqual([]);
  }, 60_000);

  it("would be caught not fitting them", () => {
    const wrong = SOURCE.replace("vscode.McpStdioServerDefinition;", "class { constructor(readonly label: number) {} };");
    expect(errors(wrong).length).toBeGreaterThan(0);
  }, 60_000);
});
