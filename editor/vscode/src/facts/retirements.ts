/**
 * The retirement commands: Retire… and Keep on a proposal under "Proposed retirements" in the
 * Facts view, and Retire Fact… and Restore Fact on a fact.
 *
 * Retiring asks first, in a modal dialog that says what it does: the fact leaves chat's memory
 * and learning's "already known", but stays listed (status retired), recallable with its
 * evidence and restorable. Keep (`lecode/facts/restore` on a fact that is not retired) dismisses
 * the proposal: the fact's unused clock starts again. Restore brings a retired fact back. Each
 * redraws the Facts view; a refusal is shown as the server's sentence.
 */
import { serverErrorCode } from "../common/errors";
import { Requests } from "../common/protocol";
import { request } from "../common/requests";
import * as api from "../common/vscodeapi";
import { guarded } from "../notes/commands";
import type { FactNode, FactNodeOf } from "../views/nodes";
import type { FactDeps } from "./commands";

export type RetirementNode = FactNodeOf<"retirement">;
type FactItem = FactNodeOf<"fact">;

export const RETIRE = "Retire";

/** The modal question before a retirement; `why` is the proposal's reason, when there is one. */
export function retireConfirmation(factId: number, text: string | undefined, why?: string): { message: string; detail: string } {
  const lines = text ? [text, ""] : [];
  if (why !== undefined) {
    lines.push(`Proposed because: ${why}.`);
  }
  lines.push(
    "A retired fact is no longer in chat's memory, nor offered to learning as already known. " +
      "It stays listed (status retired), recallable with its evidence, and Restore Fact brings it back.",
  );
  return { message: `Retire fact #${factId}?`, detail: lines.join("\n") };
}

async function retire(deps: FactDeps, folderUri: string, factId: number, text: string | undefined, why?: string): Promise<void> {
  const { message, detail } = retireConfirmation(factId, text, why);
  if ((await api.showWarningMessage(message, { modal: true, detail }, RETIRE)) !== RETIRE) {
    return;
  }
  const result = await request(deps.sender, Requests.factsRetire, { workspaceUri: folderUri, factId });
  deps.refresh();
  await api.showInformationMessage(
    result.changed ? `Fact #${factId} is retired: Restore Fact brings it back.` : `Fact #${factId} was already retired.`,
  );
}

async function restore(deps: FactDeps, folderUri: string, factId: number, kept: boolean): Promise<void> {
  const result = await request(deps.sender, Requests.factsRestore, { workspaceUri: folderUri, factId });
  deps.refresh();
  if (kept) {
    await api.showInformationMessage(`Fact #${factId} is kept: its unused clock starts again.`);
  } else {
    await api.showInformationMessage(result.changed ? `Fact #${factId} is restored: chat's memory has it again.` : `Fact #${factId} was not retired.`);
  }
}

export const retireProposed = (deps: FactDeps, node: RetirementNode): Promise<void> =>
  retire(deps, node.folderUri, node.retirement.factId, node.fact?.text ?? undefined, node.retirement.why);

export const keepFact = (deps: FactDeps, node: RetirementNode): Promise<void> => restore(deps, node.folderUri, node.retirement.factId, true);

export const retireFact = (deps: FactDeps, node: FactItem): Promise<void> =>
  retire(deps, node.folderUri, node.fact.factId, node.fact.text ?? undefined);

export const restoreFact = (deps: FactDeps, node: FactItem): Promise<void> => restore(deps, node.folderUri, node.fact.factId, false);

function asNode<K extends "retirement" | "fact">(kind: K, where: string): (value: unknown) => FactNodeOf<K> {
  return (value) => {
    if (typeof value === "object" && value !== null && (value as FactNode).kind === kind) {
      return value as FactNodeOf<K>;
    }
    throw new Error(`Run this command on ${where} in the "Facts" view.`);
  };
}

/** A command on a node; a fact that is gone (forgotten elsewhere) also redraws the tree. */
function on<N>(deps: FactDeps, parse: (value: unknown) => N, body: (deps: FactDeps, node: N) => Promise<void>) {
  return guarded(async (arg?: unknown) => {
    try {
      await body(deps, parse(arg));
    } catch (error) {
      if (serverErrorCode(error) !== undefined) {
        deps.refresh();
      }
      throw error;
    }
  });
}

/** The retirement commands, by id; extension.ts registers them. */
export function retirementCommands(deps: FactDeps): Record<string, (arg?: unknown) => Promise<void>> {
  const proposal = asNode("retirement", 'a proposal under "Proposed retirements"');
  const fact = asNode("fact", "a fact");
  return {
    "lecode.retireProposed": on(deps, proposal, retireProposed),
    "lecode.keepFact": on(deps, proposal, keepFact),
    "lecode.retireFact": on(deps, fact, retireFact),
    "lecode.restoreFact": on(deps, fact, restoreFact),
  };
}
