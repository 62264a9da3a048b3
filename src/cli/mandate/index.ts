/** `writ mandate`: inspect (offline) and submit AP2 open payment mandates. */
import { defineGroup } from "../group.js";
import { mandateInspect } from "./inspect.js";
import { mandateSubmit } from "./submit.js";

/** The `writ mandate` group. */
export const mandateGroup = defineGroup("mandate", "inspect (offline) and submit AP2 payment mandates", [mandateInspect, mandateSubmit]);
