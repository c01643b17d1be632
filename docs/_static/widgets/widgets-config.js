// Loaded after require.js and before embed-amd.js.
// Each module of the bundle looks for its icon fonts in the folder of its own URL,
// which RequireJS derives from the module's name (relative to the page, by default).
// Map every name to this folder, where the fonts are. The modules are defined by
// embed-amd.js itself, so nothing is fetched from these paths.
(function () {
  var here = document.currentScript.src.replace(/[^/]*$/, "");
  var names = ["base", "base7", "controls", "controls7", "output", "html-manager",
               "html-manager/dist/libembed-amd"];
  var paths = {};
  names.forEach(function (name) {
    paths["@jupyter-widgets/" + name] = here + name.replace(/\//g, "-");
  });
  window.require.config({ paths: paths });
})();

// The widgets typeset LaTeX in their labels with MathJax 2's API
// (MathJax.Hub.Queue); this site loads MathJax 3. Translate, once both are loaded
// (this listener runs before the one with which embed-amd.js renders the widgets).
window.addEventListener("load", function () {
  var mathjax = window.MathJax;
  if (mathjax && !mathjax.Hub) {
    mathjax.Hub = {
      Queue: function (job) {
        if (mathjax.typesetPromise) {
          mathjax.typesetPromise(job && job[2] ? [job[2]] : undefined);
        }
      },
    };
  }
});
