// Renders /openapi.json with Scalar's API reference. Everything comes from
// this server (the page's Content-Security-Policy allows nothing else): no
// fonts, proxy or telemetry from elsewhere. "Test Request" sends requests
// from the browser to this origin, with the key entered under
// Authentication (Bearer).
Scalar.createApiReference("#app", {
  url: "/openapi.json",
  servers: [{ url: window.location.origin, description: "this server" }],
  withDefaultFonts: false,
  telemetry: false,
  hideDownloadButton: false,
  showDeveloperTools: "never",
  defaultOpenAllTags: true,
  agent: { disabled: true },
  mcp: { disabled: true },
  authentication: { preferredSecurityScheme: "bearerAuth" },
  metaData: { title: "cryptointel API reference" },
});
