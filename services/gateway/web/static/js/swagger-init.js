// Swagger UI from this origin (the page allows no inline script). The API key entered at the top
// of the page is handed to its "Authorize" dialog, so "Try it out" sends it.
window.addEventListener("load", () => {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    onComplete: () => {
      const key = sessionStorage.getItem("treerag.api-key");
      if (key) window.ui.preauthorizeApiKey("HTTPBearer", key);
    },
  });
});
