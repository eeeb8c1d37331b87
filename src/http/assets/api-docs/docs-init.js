// Swagger UI over Cairn's own document. Everything it loads comes from this server:
// no validator badge (it would call validator.swagger.io), no remote presets.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  // "Authorize" with a personal access token (svc_…) or a JWT, kept across reloads.
  persistAuthorization: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
