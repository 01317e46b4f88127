/** rummybot: the Node SDK for Rummy Referee bots. One import gives the SDK, the card helpers and the wire types. */
export * from "./sdk";
export * from "./cards";
export * from "./protocol";
export { greedyIndian, keepValues } from "./policies/indian";
export * from "./search";
