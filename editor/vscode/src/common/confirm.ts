/**
 * The one shape of every destructive confirmation (forget a fact, from the Facts view or the
 * light bulb; delete a session, from the palette or the chat's picker): a modal warning whose
 * message asks the question, whose detail names every consequence, and whose first button, the
 * one Enter presses, keeps things as they are. Escape and Cancel keep them too.
 */
import * as api from "./vscodeapi";

/** The safe choice of every destructive confirmation, first so that it is the default. */
export const KEEP = "Keep";

/** Whether the person chose `action` in the modal question (anything else keeps things). */
export async function confirmDestructive(question: string, consequences: string, action: string): Promise<boolean> {
  const answer = await api.showWarningMessage(question, { modal: true, detail: `${consequences} This cannot be undone.` }, KEEP, action);
  return answer === action;
}
