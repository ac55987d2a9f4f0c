// ReDoc from this origin (the page allows no inline script). Its inline-code red falls below
// WCAG AA contrast: the same hue, darker (its headers and response tabs are in api-docs.css).
// Its media-type and example pickers come without a label, so each is named once drawn.
const THEME = { typography: { code: { color: "#a8231f" } } };

function labelPickers(root) {
  for (const select of root.querySelectorAll("select:not([aria-label])")) {
    const options = [...select.options].map((o) => o.textContent.trim());
    const kind = options.every((o) => o.includes("/")) ? "Media type" : "Example";
    select.setAttribute("aria-label", kind);
  }
}

window.addEventListener("load", () => {
  const root = document.getElementById("redoc");
  Redoc.init(root.dataset.openapiUrl, { theme: THEME }, root, () => {
    labelPickers(root);
    // Pickers drawn later (an operation's samples opened) are named as they appear.
    new MutationObserver(() => labelPickers(root)).observe(root, { childList: true, subtree: true });
  });
});
