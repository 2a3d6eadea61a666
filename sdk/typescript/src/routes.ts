// One method per /v1 route: the method's name, HTTP method and path. The
// parameter and result types of each come from the generated OpenAPI types.

export const routes = {
  brief: ["get", "/v1/brief"],
  briefBatch: ["get", "/v1/brief/batch"],
  categories: ["get", "/v1/categories/all"],
  entityById: ["get", "/v1/entities/byId"],
  entitiesByName: ["get", "/v1/entities/byName"],
  entityByTopName: ["get", "/v1/entities/byTopName"],
  entityMedia: ["get", "/v1/entities/{id}/media"],
  entityReferences: ["get", "/v1/entities/{id}/references"],
  entityRelationships: ["get", "/v1/entities/{id}/relationships"],
  entityResearch: ["get", "/v1/entities/{id}/research"],
  exportJobs: ["get", "/v1/export/jobs"],
  createExportJob: ["post", "/v1/export/jobs"],
  exportJob: ["get", "/v1/export/jobs/{id}"],
  keys: ["get", "/v1/keys"],
  createKey: ["post", "/v1/keys"],
  keysAudit: ["get", "/v1/keys/audit"],
  revokeKey: ["delete", "/v1/keys/{id}"],
  rotateKey: ["post", "/v1/keys/{id}/rotate"],
  latest: ["get", "/v1/latest"],
  organizations: ["get", "/v1/organizations/all"],
  organizationById: ["get", "/v1/organizations/byOrganizationId"],
  organizationsByName: ["get", "/v1/organizations/byOrganizationName"],
  organizationSignalHistory: ["get", "/v1/organizations/{id}/signal-history"],
  marketViews: ["get", "/v1/pmarket/all"],
  marketViewsByOrganization: ["get", "/v1/pmarket/byOrganizationId"],
  radarAll: ["get", "/v1/radar/all"],
  radarByCategory: ["get", "/v1/radar/byCategory"],
  radarByOrganization: ["get", "/v1/radar/byOrganizationId"],
  replayGlobal: ["get", "/v1/replay/global"],
  search: ["get", "/v1/search"],
  signalAll: ["get", "/v1/signal/all"],
  signalByCategory: ["get", "/v1/signal/byCategory"],
  signalByOrganization: ["get", "/v1/signal/byOrganizationId"],
  signalLatest: ["get", "/v1/signal/latest"],
  signalTop: ["get", "/v1/signal/top"],
  createStreamTicket: ["post", "/v1/stream/tickets"],
  timeline: ["get", "/v1/timeline/byOrganizationId"],
  usage: ["get", "/v1/usage"],
  webhooks: ["get", "/v1/webhooks"],
  createWebhook: ["post", "/v1/webhooks"],
  deleteWebhook: ["delete", "/v1/webhooks/{id}"],
  webhook: ["get", "/v1/webhooks/{id}"],
  updateWebhook: ["patch", "/v1/webhooks/{id}"],
  redeliverWebhook: ["post", "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver"],
  rotateWebhookSecret: ["post", "/v1/webhooks/{id}/rotate-secret"],
  testWebhook: ["post", "/v1/webhooks/{id}/test"],
} as const;

/** The routes walked with `cursor` / `next_cursor` (client.paginate). */
export const cursorRoutes = ["radarAll", "signalAll", "replayGlobal", "entityMedia", "entityResearch", "timeline", "search"] as const;

/** The routes whose events carry legacy aliases (they take `legacy`). */
export const legacyRoutes = new Set<string>([
  "brief", "briefBatch", "entityMedia", "entityResearch", "latest", "radarAll", "radarByCategory", "radarByOrganization",
  "replayGlobal", "search", "signalAll", "signalByCategory", "signalByOrganization", "signalLatest", "signalTop", "timeline",
]);
