// ReDoc from this origin (the page allows no inline script).
window.addEventListener("load", () => {
  const root = document.getElementById("redoc");
  Redoc.init(root.dataset.openapiUrl, {}, root);
});
