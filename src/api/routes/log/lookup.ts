/**
 * Maps the log store's lookup misses onto API errors (one place, by code, never by message).
 */
import { LogLookupError } from "../../../store/index.js";
import { ApiError, type ApiErrorCode } from "../../errors.js";

/**
 * The API error for a `LogLookupError` (`noHead`: the answer when the log is still empty, which
 * differs per route); any other error is returned unchanged.
 */
export function lookupFailure(e: unknown, noHead: ApiErrorCode): unknown {
  if (!(e instanceof LogLookupError)) return e;
  switch (e.code) {
    case "NO_TREE_HEAD":
      return new ApiError(noHead);
    case "ENTRY_NOT_FOUND":
      return new ApiError("LOG_ENTRY_NOT_FOUND");
    case "TREE_SIZE_BEYOND_HEAD":
      return new ApiError("LOG_TREE_SIZE_NOT_FOUND");
    case "SIZES_OUT_OF_ORDER":
      return new ApiError("LOG_SIZES_OUT_OF_ORDER");
  }
}
