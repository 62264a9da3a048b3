/** Mandates from open mandate protocols, imported as delegation evidence. */
export { Ap2ImportError, type Ap2ImportErrorCode } from "./ap2-errors.js";
export { OPEN_PAYMENT_MANDATE_VCT, importOpenPaymentMandate, type Ap2ImportOptions } from "./ap2.js";
