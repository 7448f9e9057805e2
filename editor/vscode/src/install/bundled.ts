/**
 * The bundled server in VS Code: the install context from the extension's folder, its global
 * storage and version, with a progress notification while a new environment is made.
 */
import type * as vscode from "vscode";
import type { Logger } from "../common/logger";
import * as api from "../common/vscodeapi";
import { type InstallContext, bundledMcpServer, bundledServer, installedServer, realIsFile } from "./environment";
import { runProcess } from "./run";

/** The progress notification's title; its steps ("1/3: ...") follow it on the same line. */
export const SETUP_TITLE = "lecode: setting up its server";

/** The progress notification's title while the MCP SDK is installed for agent mode. */
export const MCP_SETUP_TITLE = "lecode: setting up its MCP server for agents";

/** `setUp` is told when an environment was made (a first start), so the person can hear "ready". */
export function bundledServerCommand(
  context: vscode.ExtensionContext,
  logger: Logger,
  setUp: () => void = () => undefined,
): () => Promise<string[]> {
  return async () => {
    const base = installContext(context, logger);
    const existing = await installedServer(base);
    if (existing !== undefined) {
      return existing;
    }
    const command = await api.withNotificationProgress(SETUP_TITLE, (report) => bundledServer({ ...base, progress: report }));
    setUp();
    return command;
  };
}

/** The bundled server's command once its environment also has the MCP SDK (installed the first
 *  time VS Code's agent mode starts `lecode-ls mcp`). */
export function bundledMcpCommand(context: vscode.ExtensionContext, logger: Logger): () => Promise<string[]> {
  return async () =>
    await api.withNotificationProgress(MCP_SETUP_TITLE, (report) => bundledMcpServer({ ...installContext(context, logger), progress: report }));
}

function installContext(context: vscode.ExtensionContext, logger: Logger): InstallContext {
  return {
    platform: process.platform,
    env: process.env,
    extensionDir: context.extensionUri.fsPath,
    storageDir: context.globalStorageUri.fsPath,
    version: String(context.extension.packageJSON.version),
    run: runProcess,
    isFile: realIsFile,
    progress: () => undefined,
    log: (line) => logger.info(`[setup] ${line}`),
  };
}
