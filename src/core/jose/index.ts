/** Keys and signatures: the public surface of the jose layer. */
export { JoseError, type JoseErrorCode } from "./errors.js";
export { ALLOWED_ALGS, PRIVATE_JWK_MEMBERS, algForJwk, keyId, parsePublicJwk, publicKeyObject, thumbprintInput } from "./jwk.js";
export { findPrivateJwkMembers, privateMemberMessage, type PrivateMember } from "./private-members.js";
export type { JwsAlg, PublicJwk, Ed25519PublicJwk, P256PublicJwk } from "./jwk.js";
export { decodeSeed, generateSigner, privateJwk, signerFromJwk, signerFromSeed, type Signer } from "./keys.js";
export {
  decodeJwsHeader,
  isCanonicalBase64url,
  jwsSignatureProblem,
  lowSJws,
  parseJwsObject,
  signJws,
  signJwsInput,
  verifyJwsInput,
  verifySignatureBytes,
  withLowSSignature,
} from "./jws.js";
export { keyEncodingProblem, lowS, lowSSignatureText, signatureEncodingProblem } from "./canonical-forms.js";
export type { JwsHeader, JwsObject } from "./jws.js";
export { inspectSignedRecord, signRecord, signedRecordVerifies, unsignedPart, verifySignedRecord } from "./signed-record.js";
export type { SignedRecordCheck, VerifiedRecord, VerifiedSignedRecord } from "./signed-record.js";
