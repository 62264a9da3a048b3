/**
 * Reading settings from environment variables (pure: the environment is passed in).
 *
 * Every settings module reads through these, so a value means the same everywhere: blank is
 * unset, surrounding spaces are ignored, and a bad integer falls back to its default with one
 * start-up problem of the one form `NAME must be an integer from MIN to MAX; using DEFAULT`.
 */

/** Environment variables (process.env or a test's record). */
export type Env = Readonly<Record<string, string | undefined>>;

/** `env[name]` trimmed, or null when unset or blank. */
export function envText(env: Env, name: string): string | null {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? null : v;
}

/** The limits and default of an integer setting. */
export interface IntegerRange {
  min: number;
  max: number;
  dflt: number;
}

/**
 * `env[name]` as a decimal integer in [min, max]; unset gives `dflt`, anything else outside
 * the range (or not an integer) gives `dflt` and appends a problem to `problems`.
 */
export function envInteger(env: Env, name: string, r: IntegerRange, problems: string[]): number {
  const raw = envText(env, name);
  if (raw === null) return r.dflt;
  if (/^\d{1,15}$/.test(raw) && Number(raw) >= r.min && Number(raw) <= r.max) return Number(raw);
  problems.push(`${name} must be an integer from ${r.min} to ${r.max}; using ${r.dflt}`);
  return r.dflt;
}

/** Another setting an integer setting must not pass: its name and loaded value. */
export type SettingBound = readonly [name: string, value: number];

/**
 * `envInteger`, then kept on the right side of another setting: above `atMost` (or below
 * `atLeast`) it becomes that setting's value, with one problem of the form
 * `NAME is above OTHER; using OTHER's value`.
 */
export function envIntegerWithin(
  env: Env,
  name: string,
  r: IntegerRange,
  bound: { atMost?: SettingBound; atLeast?: SettingBound },
  problems: string[],
): number {
  const v = envInteger(env, name, r, problems);
  if (bound.atMost && v > bound.atMost[1]) {
    problems.push(`${name} is above ${bound.atMost[0]}; using ${bound.atMost[0]}'s value`);
    return bound.atMost[1];
  }
  if (bound.atLeast && v < bound.atLeast[1]) {
    problems.push(`${name} is below ${bound.atLeast[0]}; using ${bound.atLeast[0]}'s value`);
    return bound.atLeast[1];
  }
  return v;
}

/**
 * Settings fail fast: the lines that refuse a start for `problems` (one per problem, naming the
 * variable and what it accepts). A problem's text ends with the fallback a lenient loader would
 * take ("; using info"), which is not taken when the start is refused, so it is cut.
 */
export function settingRefusals(command: string, problems: readonly string[]): string[] {
  return problems.map((p) => `${command}: ${p.replace(/; [^;]*$/, "")}`);
}
