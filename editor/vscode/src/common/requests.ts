/**
 * The seam between the extension's logic and the language server: an object that sends custom
 * requests. In VS Code it is the LanguageClient (through `ServerClient`); in tests a fake that
 * records each call. `request` types params and result by method name from protocol.ts.
 */
import {
  Requests,
  type AgentsReadParams,
  type AgentsReadResult,
  type ChatHistoryParams,
  type ChatHistoryResult,
  type ChatSendParams,
  type ChatSendResult,
  type CommandParams,
  type CommandResult,
  type DismissProposalParams,
  type DismissProposalResult,
  type FactRevisionResult,
  type CorrectSelectionParams,
  type FactsCorrectParams,
  type FactsForgetParams,
  type FactsForgetResult,
  type FactsListParams,
  type FactsListResult,
  type FactsPinParams,
  type FactsPinResult,
  type FactsRetireResult,
  type FactsShareParams,
  type FactsShareResult,
  type FactsUnshareParams,
  type FactsUnshareResult,
  type DoctorParams,
  type DoctorResult,
  type FactsRecallParams,
  type FactsRememberParams,
  type MemoryEditParams,
  type MemoryEditResult,
  type MemoryListParams,
  type MemoryListResult,
  type MemoryReadParams,
  type MemoryReadResult,
  type MemorySearchParams,
  type MemorySearchResult,
  type MemoryWriteParams,
  type MemoryWriteResult,
  type PingParams,
  type ReanchorParams,
  type ReanchorResult,
  type ScanSecretsParams,
  type ScanSecretsResult,
  type ScrubSecretsParams,
  type ScrubSecretsResult,
  type RememberSelectionParams,
  type SelectionResult,
  type PingResult,
  type ProjectInfoParams,
  type ProjectInfoResult,
  type ProviderInfoParams,
  type ProviderInfoResult,
  type RecallFactResult,
  type RecallSessionResult,
  type SessionImportParams,
  type SessionIdResult,
  type SessionImportResult,
  type SessionListParams,
  type SessionListResult,
  type SessionNewParams,
  type SessionParams,
  type SessionDeleteResult,
  type SessionReadParams,
  type SessionRenameParams,
  type SessionRenameResult,
  type SessionSnapshotParams,
  type SourceRefModel,
  type TeamForgetParams,
  type TeamForgetResult,
  type TeamListParams,
  type TeamListResult,
  type TeamRecallParams,
  type TeamRecallResult,
} from "./protocol";

export interface RequestTypes {
  [Requests.ping]: [PingParams, PingResult];
  [Requests.projectInfo]: [ProjectInfoParams, ProjectInfoResult];
  [Requests.memoryList]: [MemoryListParams, MemoryListResult];
  [Requests.memoryRead]: [MemoryReadParams, MemoryReadResult];
  [Requests.memoryWrite]: [MemoryWriteParams, MemoryWriteResult];
  [Requests.memoryEdit]: [MemoryEditParams, MemoryEditResult];
  [Requests.memorySearch]: [MemorySearchParams, MemorySearchResult];
  [Requests.agentsRead]: [AgentsReadParams, AgentsReadResult];
  [Requests.sessionList]: [SessionListParams, SessionListResult];
  [Requests.sessionImport]: [SessionImportParams, SessionImportResult];
  [Requests.sessionRead]: [SessionReadParams, RecallSessionResult];
  [Requests.sessionSnapshot]: [SessionSnapshotParams, SourceRefModel];
  [Requests.sessionNew]: [SessionNewParams, SessionIdResult];
  [Requests.sessionDelete]: [SessionParams, SessionDeleteResult];
  [Requests.sessionRename]: [SessionRenameParams, SessionRenameResult];
  [Requests.chatSend]: [ChatSendParams, ChatSendResult];
  [Requests.chatHistory]: [ChatHistoryParams, ChatHistoryResult];
  [Requests.command]: [CommandParams, CommandResult];
  [Requests.providerInfo]: [ProviderInfoParams, ProviderInfoResult];
  [Requests.factsList]: [FactsListParams, FactsListResult];
  [Requests.factsDismissProposal]: [DismissProposalParams, DismissProposalResult];
  [Requests.factsAcceptProposal]: [DismissProposalParams, FactRevisionResult];
  [Requests.factsPin]: [FactsPinParams, FactsPinResult];
  [Requests.factsUnpin]: [FactsPinParams, FactsPinResult];
  [Requests.factsRetire]: [FactsPinParams, FactsRetireResult];
  [Requests.factsRestore]: [FactsPinParams, FactsRetireResult];
  [Requests.memoryDoctor]: [DoctorParams, DoctorResult];
  [Requests.factsRemember]: [FactsRememberParams, FactRevisionResult];
  [Requests.factsRecall]: [FactsRecallParams, RecallFactResult];
  [Requests.factsCorrect]: [FactsCorrectParams, FactRevisionResult];
  [Requests.factsForget]: [FactsForgetParams, FactsForgetResult];
  [Requests.factsRememberSelection]: [RememberSelectionParams, SelectionResult];
  [Requests.factsCorrectSelection]: [CorrectSelectionParams, SelectionResult];
  [Requests.factsReanchor]: [ReanchorParams, ReanchorResult];
  [Requests.memoryScanSecrets]: [ScanSecretsParams, ScanSecretsResult];
  [Requests.memoryScrubSecrets]: [ScrubSecretsParams, ScrubSecretsResult];
  [Requests.factsShare]: [FactsShareParams, FactsShareResult];
  [Requests.factsUnshare]: [FactsUnshareParams, FactsUnshareResult];
  [Requests.factsTeam]: [TeamListParams, TeamListResult];
  [Requests.factsTeamRecall]: [TeamRecallParams, TeamRecallResult];
  [Requests.factsTeamForget]: [TeamForgetParams, TeamForgetResult];
}

export type Method = keyof RequestTypes;

/** Anything that can send a JSON-RPC request to lecode-ls. */
export interface RequestSender {
  /** Aborting `signal` cancels the request; the server still answers it (or with -32800). */
  sendRequest(method: string, params: unknown, signal?: AbortSignal): Promise<unknown>;
}

export function request<M extends Method>(
  sender: RequestSender,
  method: M,
  params: RequestTypes[M][0],
  signal?: AbortSignal,
): Promise<RequestTypes[M][1]> {
  return sender.sendRequest(method, params, signal) as Promise<RequestTypes[M][1]>;
}
