/**
 * The bundled server in VS Code: the install context from the extension's folder, its global
 * storage and version, with a progress notification while a new environment is made.
 */
import type * as vscode from "vscode";
import type { Logger } from "../common/logger";
import * as api from "../common/vscodeapi";
import { type InstallContext, bundledServer, installedServer, realIsFile } from "./environment";
import { runProcess } from "./run";

export function bundledServerCommand(context: vscode.ExtensionContext, logger: Logger): () => Promise<string[]> {
  return async () => {
    const base: InstallContext = {
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
    const existing = await installedServer(base);
    if (existing !== undefined) {
      return existing;
    }
    return api.withNotificationProgress("lecode: setting up its language server (first start of this version)", (report) =>
      bundledServer({ ...base, progress: report }),
    );
  };
}
