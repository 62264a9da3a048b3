/**
 * Subscription webhook URLs: https anywhere, or http on the local machine only.
 *
 * Rules (docs/registry.md, "Subscriptions"): the URL parses with the WHATWG URL parser; its
 * scheme is `https:`, or `http:` when the host is `localhost`, an address in 127.0.0.0/8 or
 * `[::1]`; it carries no user name or password and no fragment; it is at most 2048
 * characters. The normalized form (`URL.href`) is what is stored.
 */
import { RegistryError } from "./errors.js";

/** Longest webhook URL accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** True when `hostname` (as URL.hostname gives it) is the local machine. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || LOOPBACK_V4.test(hostname);
}

function refuse(message: string): never {
  throw new RegistryError("WEBHOOK_URL_INVALID", message);
}

/** The normalized webhook URL, or throws RegistryError WEBHOOK_URL_INVALID. */
export function parseWebhookUrl(input: string): string {
  if (input.length > MAX_WEBHOOK_URL_LENGTH) refuse(`webhook_url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return refuse("webhook_url is not a valid URL");
  }
  if (url.username !== "" || url.password !== "") refuse("webhook_url must not carry credentials");
  if (url.hash !== "" || input.includes("#")) refuse("webhook_url must not carry a fragment");
  if (url.protocol === "https:") return url.href;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return url.href;
  return refuse("webhook_url must be https, or http on localhost");
}
