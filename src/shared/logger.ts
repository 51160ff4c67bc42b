/** The pino root logger and child loggers per component. Logs go to stderr so stdout stays for output. */
import pino from "pino";

export type Logger = pino.Logger;

export function createLogger(level = "info", name = "gsindex"): Logger {
  return pino(
    {
      name,
      level,
      redact: { paths: ["*.key", "*.apiKey", "*.password", "config.steamWebApiKey"], remove: true },
    },
    pino.destination(2),
  );
}

/** A logger that drops everything (tests, library defaults). */
export const silentLogger: Logger = pino({ level: "silent" });
