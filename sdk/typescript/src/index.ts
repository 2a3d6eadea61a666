export { Client, createCryptointelClient } from "./client.js";
export type { ClientOptions, CallOptions, Params, Result, Item, RouteName, CursorRoute, Methods } from "./client.js";
export * from "./errors.js";
export type { RateInfo } from "./rate.js";
export type { RetryOptions } from "./transport.js";
export type { StreamOptions, StreamMessage, ResumeOptions } from "./stream.js";
export type { SubscriptionMessage, GraphQLResult, Document } from "./graphql.js";
export { GraphQL } from "./graphql.js";
export { verifyWebhook } from "./webhook.js";
export type { WebhookDelivery, VerifyOptions } from "./webhook.js";
export { paymentResponse } from "./payment.js";
export type { PaymentOptions } from "./payment.js";
export { routes, cursorRoutes, legacyRoutes } from "./routes.js";
export * as documents from "./generated/graphql.js";
export type { paths, components, operations } from "./generated/openapi.js";
/** The API version this library follows. */
export const apiVersion = "1.0.0";
