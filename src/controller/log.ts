/**
 * The controller's log: one JSON object per line on stdout, in the data plane's format
 * (`LOG_FORMAT` of src/api/app.ts): `{"level":"info","time":"<RFC 3339, ms>","pid":..,
 * "hostname":..,...fields,"msg":..}`, the level by name; filtered by LOG_LEVEL. Tests pass a
 * silent or capturing logger.
 */
import { hostname } from "node:os";

/** Levels, least to most severe. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
/** A log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A structured logger. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Text of an error for a log field. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A logger writing JSON lines at `level` and above through `write` (default stdout). */
export function jsonLogger(level: LogLevel = "info", write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const min = LOG_LEVELS.indexOf(level);
  const host = hostname();
  const at = (l: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(l) < min) return;
    write(`${JSON.stringify({ level: l, time: new Date().toISOString(), pid: process.pid, hostname: host, ...fields, msg })}\n`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
