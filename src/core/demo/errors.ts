/** The one error of the demo check's input: an amount, currency or field it cannot use. */

/** Stable code of a demo input error. */
export type DemoErrorCode = "DEMO_INPUT_INVALID";

/** Thrown for an unusable demo request; the message names the field and why. */
export class DemoInputError extends Error {
  override readonly name = "DemoInputError";
  readonly code: DemoErrorCode = "DEMO_INPUT_INVALID";
}
