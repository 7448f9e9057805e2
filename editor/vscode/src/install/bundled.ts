/**
 * The bundled server in VS Code: the install context from the extension's folder, its global
 * storage and version, with a progress notification while a new environment is made.
 */
import type * as vscode from "vscode";
import type { Logger } from "../common/logger";
import * as api from "../common/vscodeapi";
import { type InstallContext, bundledServer, installedServer, realIsFile } from "./environment";
import { runProcess } from "./run";

/** The progress notification's title; its steps ("1/3: ...") follow it on the same line. */
export const SETUP_TITLE = "lecode: setting up its server";

/** `setUp` is told when an environment was made (a first start), so the person can hear "ready". */
export function bundledServerCommand(
  context: vscode.ExtensionContext,
  logger: Logger,
  setUp: () => void = () => undefined,
): () => Promise<string[]> {
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
    const command = await api.withNotificationProgress(SETUP_TITLE, (report) => bundledServer({ ...base, progress: report }));
    setUp();
    return command;
  };
}
