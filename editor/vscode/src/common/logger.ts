/** The extension's log: one "lecode" output channel, shared with the server's stderr. */

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** The methods of a vscode.LogOutputChannel the logger needs. */
export type LogSink = Logger;

export function createLogger(sink: LogSink): Logger {
  return {
    debug: (message) => sink.debug(message),
    info: (message) => sink.info(message),
    warn: (message) => sink.warn(message),
    error: (message) => sink.error(message),
  };
}

/**
 * Log one line of the server's stderr at the level the server gave it. lecode-ls formats its
 * log as `<date> <time> <LEVEL> <logger>: <message>`; a line without a level (a traceback line,
 * a crash message) is logged as an error, as vscode-languageclient would.
 */
export function logServerLine(logger: Logger, line: string): void {
  const level = /^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) /.exec(line)?.[1];
  switch (level) {
    case "DEBUG":
      logger.debug(line);
      break;
    case "INFO":
      logger.info(line);
      break;
    case "WARNING":
      logger.warn(line);
      break;
    default:
      logger.error(line);
  }
}
