/** The extension's entry point: it only creates the parts and wires them together. */
import type * as vscode from "vscode";
import { anchorCommands, anchorMiddleware } from "./anchors/commands";
import { API_KEY_SECRET, apiKeyCommands, askAndStoreKey } from "./chat/apiKey";
import { ChatController } from "./chat/controller";
import { FactIndex } from "./chat/factIndex";
import { chatOpeners } from "./chat/open";
import { saveProvider } from "./chat/providerSettings";
import { ChatStatus, SET_UP_COMMAND } from "./chat/statusBar";
import { CHAT_VIEW, ChatViewProvider } from "./chat/view";
import { ServerClient } from "./common/client";
import { errorMessage } from "./common/errors";
import { createLogger } from "./common/logger";
import { ProjectIndex } from "./common/projects";
import { Requests } from "./common/protocol";
import { request } from "./common/requests";
import { SECTION, apiKeyVariable, needsRestart, serverCommand } from "./common/settings";
import * as api from "./common/vscodeapi";
import { bundledMcpCommand, bundledServerCommand } from "./install/bundled";
import { type FactDeps, factCommands } from "./facts/commands";
import { proposalCommands } from "./facts/proposals";
import { retirementCommands } from "./facts/retirements";
import { secretCommands, traceLogsParams } from "./facts/secrets";
import { teamCommands } from "./facts/team";
import { TEAM_SCHEME, TeamDocumentProvider } from "./facts/teamDocument";
import { PROVIDE_SETTING, registerMcpProvider } from "./mcp/provider";
import { guarded, memoryCommands } from "./notes/commands";
import { MemoryFileSystem } from "./notes/fileSystem";
import { SCHEME } from "./notes/uri";
import { confirmAndDelete, sessionCommands } from "./sessions/deleteSession";
import { renameSession } from "./sessions/renameSession";
import { TranscriptProvider } from "./sessions/transcriptProvider";
import { TRANSCRIPT_SCHEME } from "./sessions/uri";
import { FactsFileFilter } from "./views/factsFilter";
import { FactsTreeProvider } from "./views/factsTree";
import { type MemoryNode, MemoryTreeProvider } from "./views/memoryTree";
import type { FactNode } from "./views/nodes";

let server: ServerClient | undefined;

const RESTART = "Restart Server";
const SHOW_LOG = "Show Log";

export function activate(context: vscode.ExtensionContext): void {
  const output = api.createLogOutputChannel("lecode");
  const logger = createLogger(output);
  const configuration = () => api.getConfiguration(SECTION);
  // A failure to set up or start the server says what happened and offers the way out.
  const serverProblem = async (message: string): Promise<void> => {
    const choice = await api.showErrorMessage(message, RESTART, SHOW_LOG);
    if (choice === RESTART) {
      background("restarting lecode-ls", client.restart());
    } else if (choice === SHOW_LOG) {
      output.show();
    }
  };
  // After a first start's set-up, the person hears that it is ready once the server runs.
  let justSetUp = false;
  // One set-up at a time for the language server and the MCP server offered to agents: whoever
  // asks while another set-up runs waits for it instead of making a second environment.
  const makeBundled = bundledServerCommand(context, logger, () => (justSetUp = true));
  let bundling: Promise<string[]> | undefined;
  const bundled = (): Promise<string[]> => {
    bundling ??= makeBundled().finally(() => (bundling = undefined));
    return bundling;
  };
  server = new ServerClient(
    output,
    logger,
    configuration,
    serverProblem,
    () => context.secrets.get(API_KEY_SECRET),
    undefined,
    bundled,
  );
  const client = server;
  const projects = new ProjectIndex(client, () =>
    api.workspaceFolders().map((folder) => ({ uri: folder.uri.toString(), name: folder.name })),
  );
  const files = new MemoryFileSystem(client, projects);
  const tree = new MemoryTreeProvider(client, projects, client);
  const facts = new FactsTreeProvider(client, projects, client);
  const transcripts = new TranscriptProvider(client);
  const teamDocuments = new TeamDocumentProvider(client);
  const firstFolder = (): string | undefined => api.workspaceFolders()[0]?.uri.toString();
  const factIndex = new FactIndex(client);
  const refreshFacts = (): void => {
    facts.refresh();
    transcripts.refresh();
    teamDocuments.refresh();
    factIndex.clear();
    void chat.factsChanged();
  };
  const storedKey = async (): Promise<string | undefined> => {
    try {
      return await context.secrets.get(API_KEY_SECRET);
    } catch {
      return undefined; // a secret store that cannot be read: as if no key were stored
    }
  };
  const LAST_SESSION = "lecode.chat.lastSession";
  const chat: ChatController = new ChatController({
    sender: client,
    projects: () =>
      projects.projects.map((project) => ({
        folderUri: project.folderUri,
        label: project.folders.map((folder) => folder.name).join(", "),
      })),
    ...chatOpeners(firstFolder),
    copy: async (text) => {
      await api.writeClipboard(text);
    },
    insert: async (text) => {
      if (!(await api.insertAtCursor(text))) {
        throw new Error("Open a file to insert the code into: no editor is open.");
      }
    },
    renameSession: (folderUri, session) => renameSession(client, folderUri, session),
    deleteSession: (folderUri, session) => confirmAndDelete(factDeps, folderUri, session),
    facts: factIndex,
    lastSession: {
      get: () => context.workspaceState.get(LAST_SESSION),
      set: (value) => void context.workspaceState.update(LAST_SESSION, value),
    },
    setup: {
      fetch: (url, init) => fetch(url, init),
      storedKey,
      askKey: () => askAndStoreKey(context.secrets),
      save: (choice) =>
        saveProvider(choice, {
          configuration,
          update: (key, value) => api.updateUserSetting(SECTION, key, value),
          restart: () => client.restart(),
        }),
    },
  });
  const status = new ChatStatus();
  const showProvider = (): void => {
    if (client.state.state === "running") {
      request(client, Requests.providerInfo, {}).then(
        (info) => status.providerChanged(info),
        (error: unknown) => logger.warn(`lecode/provider/info: ${errorMessage(error)}`),
      );
    }
  };
  const focusChat = async (): Promise<void> => {
    await api.executeCommand(`${CHAT_VIEW}.focus`);
    chat.focus();
  };
  // Nothing runs unobserved: a background step that fails is logged and shown.
  const background = (what: string, step: Promise<unknown>): void => {
    step.catch((error: unknown) => {
      logger.error(`${what}: ${errorMessage(error)}`);
      void api.showErrorMessage(`lecode: ${what} failed: ${errorMessage(error)}`);
    });
  };
  const refreshProjects = (): void => background("resolving projects", projects.refresh());

  const factDeps: FactDeps = {
    sender: client,
    projects,
    transcripts,
    refresh: refreshFacts,
    showMore: (folderUri) => facts.showMore(folderUri),
  };
  // Before the client starts: anchors' CodeLens and code actions, the VS Code way.
  client.middleware = anchorMiddleware(factDeps);
  const memoryView = api.createTreeView<MemoryNode>("lecode.memory", { treeDataProvider: tree, showCollapseAll: true });
  const factsView = api.createTreeView<FactNode>("lecode.facts", { treeDataProvider: facts, showCollapseAll: true });
  const fileFilter = new FactsFileFilter(facts, factsView);
  // The secret scan's listing, in a channel of its own, made the first time a scan finds one.
  let secretsChannel: vscode.OutputChannel | undefined;
  const secretsListing = {
    write: (text: string) => {
      secretsChannel ??= api.createOutputChannel("lecode: Secrets");
      secretsChannel.replace(text);
    },
    reveal: () => secretsChannel?.show(true),
  };
  const commands: Record<string, (arg?: unknown) => unknown> = {
    ...memoryCommands({ sender: client, projects, now: () => new Date() }),
    ...factCommands(factDeps),
    ...proposalCommands(factDeps),
    ...retirementCommands(factDeps),
    ...teamCommands(factDeps),
    ...anchorCommands(factDeps),
    ...secretCommands({
      sender: client,
      projects,
      listing: secretsListing,
      tracesParams: () => traceLogsParams(configuration().get("trace.server")),
    }),
    "lecode.showFactsOfFile": guarded(async () => fileFilter.on()),
    "lecode.showAllFacts": guarded(async () => fileFilter.off()),
    "lecode.searchFacts": guarded(async () => {
      const query = await api.showInputBox({
        title: "Search Facts",
        prompt: "Words to rank the facts by (the server ranks them, best first); empty shows all",
        value: fileFilter.query ?? "",
      });
      if (query !== undefined) {
        fileFilter.search(query);
      }
    }),
    // A deleted session leaves the chat view's list as well as the Facts view.
    ...sessionCommands({
      ...factDeps,
      refresh: () => {
        refreshFacts();
        void chat.refresh();
      },
    }),
    ...apiKeyCommands({
      secrets: context.secrets,
      variable: () => apiKeyVariable(configuration()),
      restart: () => client.restart(),
    }),
    "lecode.openChat": guarded(focusChat),
    "lecode.stopChat": guarded(async () => chat.stop()),
    [SET_UP_COMMAND]: guarded(async () => {
      await focusChat();
      await chat.openSetup();
    }),
    "lecode.restartServer": guarded(() => client.restart()),
    "lecode.refreshMemory": guarded(async () => {
      await projects.refresh();
      tree.refresh();
      refreshFacts();
    }),
    "lecode.refreshFacts": guarded(async () => {
      await projects.refresh();
      refreshFacts();
    }),
  };

  const bundledMcp = bundledMcpCommand(context, logger);
  // VS Code 1.101+: agent mode lists the memory tools of `lecode-ls mcp` (nothing on older ones).
  const mcp = registerMcpProvider(
    api.mcpServerApi(),
    {
      folders: api.workspaceFolders,
      enabled: () => configuration().get<boolean>(PROVIDE_SETTING) !== false,
      command: async () => {
        const setting = serverCommand(configuration());
        return "command" in setting ? setting.command : "error" in setting ? undefined : bundled();
      },
      prepare: async () => {
        if ("bundled" in serverCommand(configuration())) {
          await bundledMcp();
        }
      },
      version: String(context.extension.packageJSON.version),
      env: process.env,
      log: (line) => logger.warn(line),
    },
    api.eventEmitter,
  );

  context.subscriptions.push(
    ...mcp.disposables,
    api.onDidChangeWorkspaceFolders(mcp.refresh),
    output,
    status,
    projects,
    files,
    tree,
    facts,
    transcripts,
    teamDocuments,
    api.registerFileSystemProvider(SCHEME, files, { isCaseSensitive: true }),
    api.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, transcripts),
    api.registerTextDocumentContentProvider(TEAM_SCHEME, teamDocuments),
    memoryView,
    factsView,
    api.onDidChangeActiveTextEditor((editor) => fileFilter.editorChanged(editor?.document.uri)),
    api.registerWebviewViewProvider(CHAT_VIEW, new ChatViewProvider(context.extensionUri, chat)),
    client.onDidChangeState((state) => {
      status.serverChanged(state);
      showProvider();
      if (state.state === "running") {
        if (justSetUp) {
          justSetUp = false;
          void api.showInformationMessage("lecode is ready: its language server is set up and running.");
        }
        refreshProjects();
      } else {
        projects.clear();
      }
    }),
    client.onDidChangeFolders(refreshProjects),
    client.onDidSendSettings(() => {
      refreshProjects();
      showProvider();
      void chat.refresh(); // the provider may have been chosen, or unset
    }),
    client.onMemoryDidChange((params) => {
      files.handleDidChange(params);
      tree.refresh();
    }),
    client.onFactsDidChange(refreshFacts),
    // Drift changed while someone edits: the tree and the chat's "memory used" show it
    // (transcripts are not affected).
    client.onAnchorsDidChange(() => {
      facts.refresh();
      factIndex.clear();
      void chat.factsChanged();
    }),
    client.onChatDelta((delta) => {
      chat.handleDelta(delta);
      // Automatic learning after a compaction may have left proposals, which are session events,
      // not fact changes: the server sends no lecode/facts/didChange for them.
      if (delta.kind === "learning") {
        refreshFacts();
      }
    }),
    projects.onDidChange(() => {
      tree.refresh();
      refreshFacts();
      void chat.refresh();
    }),
    api.onDidChangeConfiguration((event) => {
      if (needsRestart(event)) {
        background("restarting lecode-ls", client.restart());
      }
      if (event.affectsConfiguration(`${SECTION}.${PROVIDE_SETTING}`) || event.affectsConfiguration(`${SECTION}.server`)) {
        mcp.refresh();
      }
    }),
    ...Object.entries(commands).map(([id, run]) => api.registerCommand(id, run)),
    { dispose: () => secretsChannel?.dispose() },
  );
  background("starting lecode-ls", client.start());
}

export async function deactivate(): Promise<void> {
  await server?.dispose();
  server = undefined;
}
