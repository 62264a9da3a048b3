/** `writ agreement`: sign, acknowledge, amend and revoke IntentAgreement manifests. */
import { defineGroup } from "../group.js";
import { agreementAck } from "./ack.js";
import { agreementAmend } from "./amend.js";
import { agreementRevoke } from "./revoke.js";
import { agreementSign } from "./sign.js";

/** The `writ agreement` group. */
export const agreementGroup = defineGroup("agreement", "sign, acknowledge, amend and revoke IntentAgreement manifests", [
  agreementSign,
  agreementAck,
  agreementAmend,
  agreementRevoke,
]);
