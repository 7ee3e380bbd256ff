/* The episode explorer's viewer: a click on a row of the table shows that episode below it.
   Episodes come in gzip-compressed, base64-encoded chunks of {episode id: HTML}, each a classic script that
   stores itself in window.psitEpisodeChunks[key]: inline in a notebook, or a side file of the report folder
   loaded with <script src> on the first click that needs it (a page opened as file:// may load scripts,
   never fetch() files). The chunk is decoded in the page (DecompressionStream) and kept. */
(function () {
  var root = document.getElementById(ROOT_ID);
  if (!root || root.dataset.psitViewer) return;
  root.dataset.psitViewer = "1";
  var manifest = JSON.parse(root.querySelector("script.psit-chunks").textContent);
  var viewer = root.querySelector(".psit-transcript");
  var stored = window.psitEpisodeChunks = window.psitEpisodeChunks || {};
  var decoded = {};

  function decode(text) {
    var bytes = Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function chunk(index) {
    var key = manifest.keys[index];
    if (decoded[key]) return decoded[key];
    decoded[key] = new Promise(function (resolve, reject) {
      if (stored[key]) { resolve(); return; }
      var script = document.createElement("script");
      script.src = manifest.src[index];
      script.onload = function () { stored[key] ? resolve() : reject(new Error(script.src + " holds no episodes")); };
      script.onerror = function () { reject(new Error("could not load " + manifest.src[index])); };
      document.head.appendChild(script);
    }).then(function () { return decode(stored[key]); });
    decoded[key].catch(function () { delete decoded[key]; });
    return decoded[key];
  }

  function show(id, row) {
    var index = manifest.chunk[id];
    if (index === undefined) return;
    root.querySelectorAll("tbody tr.psit-open").forEach(function (r) { r.classList.remove("psit-open"); });
    row.classList.add("psit-open");
    viewer.innerHTML = "<i>Loading " + id.replace(/[<&]/g, "") + "…</i>";
    chunk(index).then(function (episodes) {
      viewer.innerHTML = episodes[id];
      viewer.scrollIntoView({block: "nearest"});
    }, function (error) {
      viewer.textContent = "This episode could not be shown: " + error.message + ".";
    });
  }

  root.addEventListener("click", function (event) {
    var row = event.target.closest("tbody tr");
    if (!row || !root.contains(row) || !row.querySelector("td")) return;
    show(row.querySelector("td").textContent.trim(), row);
  });
})();
