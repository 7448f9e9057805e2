/**
 * How failures reach the user: as the server's own sentence, never as a stack.
 *
 * A JSON-RPC error from lecode-ls carries `message` (a sentence naming the field at fault) and
 * `data.code` (a stable machine code, see protocol.md). vscode-languageclient rejects a request
 * with a `ResponseError` holding both; anything else is an ordinary `Error`.
 */

/** The stable `data.code` of a server error, if `error` is one. */
export function serverErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) {
    return undefined;
  }
  const data = (error as { data?: unknown }).data;
  if (typeof data === "object" && data !== null) {
    const code = (data as { code?: unknown }).code;
    if (typeof code === "string") {
      return code;
    }
  }
  return undefined;
}

/** One line for a person: the error's message without a stack, or a generic sentence. */
export function errorMessage(error: unknown): string {
  if (typeof error === "string" && error !== "") {
    return error;
  }
  if (typeof error === "object" && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") {
      return message;
    }
  }
  return "lecode: the operation failed; the lecode output channel has details";
}
