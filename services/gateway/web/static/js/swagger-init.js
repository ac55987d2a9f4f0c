// Swagger UI from this origin (the page allows no inline script).
window.addEventListener("load", () => {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({ url: root.dataset.openapiUrl, dom_id: "#swagger-ui", deepLinking: true });
});
