/**
 * RFC 9421 HTTP message signatures in the Web Bot Auth profile: agents sign requests, merchants
 * (and POST /v1/agents/verify-request) check them against Writ's key directory
 * (docs/reference/request-signatures.md). Pure.
 */
export * from "./params.js";
export { signBytes, signRequest, type HttpRequestLike, type SignRequestOptions, type SignatureFields } from "./sign.js";
export { checkSignature, type CheckOptions, type SignatureCheck, type SignatureFacts, type SignatureRefusal } from "./verify.js";
export {
  contentDigest,
  directoryKey,
  signDirectory,
  verifyDirectory,
  type DirectoryCheck,
  type DirectoryFields,
  type DirectoryKey,
  type KeyDirectory,
} from "./directory.js";
