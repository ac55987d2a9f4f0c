// Swagger UI from this origin (the page allows no inline script). The API key entered in the web
// app (kept for its tab, or remembered on this device) is handed to its "Authorize" dialog, so
// "Try it out" sends it. Deep links are off: they put a link inside each operation's toggle
// button, a control inside a control that keyboards and screen readers cannot reach apart.
window.addEventListener("load", () => {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    deepLinking: false,
    onComplete: () => {
      const item = "treerag.api-key";
      const key = sessionStorage.getItem(item) || localStorage.getItem(item);
      if (key) window.ui.preauthorizeApiKey("HTTPBearer", key);
    },
  });
});
