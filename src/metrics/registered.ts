/**
 * One metric per name on a registry: the metric already registered under `name`, or the one
 * `make` creates (registered on `registry`; with no registry, a private one that no scrape
 * sees). Lets two workers of one process, or a test's second app, share a registry without
 * prom-client's "already registered" error.
 */
import type { Registry } from "prom-client";

export function registered<T>(registry: Registry | undefined, name: string, make: (registers: Registry[]) => T): T {
  return (registry?.getSingleMetric(name) as T | undefined) ?? make(registry ? [registry] : []);
}
