/** `writ request`: HTTP requests an agent sends (RFC 9421 signatures, Web Bot Auth). */
import { defineGroup } from "../group.js";
import { requestSign } from "./sign.js";

/** The `writ request` group. */
export const requestGroup = defineGroup("request", "sign HTTP requests as an agent (RFC 9421, Web Bot Auth)", [requestSign]);
