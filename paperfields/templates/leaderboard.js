// The web leaderboard's one script: sorting and filtering. It holds no data; the page's state (sort
// column and direction, filters) lives in the URL's fragment, so a sorted, filtered view can be
// linked: #sort=main:headline-95-ci&dir=asc&strategy=few_shot&family=qwen2.5-coder&contamination=after%20cutoff
(function () {
  "use strict";
  var state = new URLSearchParams(location.hash.slice(1));
  var each = function (list, fn) { Array.prototype.forEach.call(list, fn); };

  function value(row, col, type) {
    var v = row.cells[col].getAttribute("data-v");
    if (v === null || v === "") return null;
    return type === "num" ? parseFloat(v) : v.toLowerCase();
  }

  function sortTable(table, th, dir) {
    var col = parseInt(th.getAttribute("data-col"), 10), type = th.getAttribute("data-type");
    each(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
    each(table.tBodies, function (body) {  // each section (contenders, references, partial runs) sorts on its own
      if (body.classList.contains("section-head")) return;
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = value(a, col, type), y = value(b, col, type);
        if (x === null || y === null) return (x === null) - (y === null);  // undefined last, either direction
        var c = x < y ? -1 : x > y ? 1 : 0;
        return dir === "asc" ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  }

  function applyFilters() {
    var wanted = {}, shown = 0, total = 0;
    each(document.querySelectorAll("select[data-filter]"), function (s) { wanted[s.getAttribute("data-filter")] = s.value; });
    each(document.querySelectorAll("tr[data-run]"), function (tr) {
      var ok = Object.keys(wanted).every(function (k) { return !wanted[k] || tr.getAttribute("data-" + k) === wanted[k]; });
      tr.hidden = !ok;
      if (tr.closest("#main")) { total += 1; shown += ok ? 1 : 0; }
    });
    each(document.querySelectorAll("tbody.section-head"), function (head) {  // a section with no row shown hides its heading
      var body = head.nextElementSibling;
      head.hidden = !body || !body.querySelector("tr[data-run]:not([hidden])");
    });
    document.getElementById("shown").textContent = shown + " of " + total + " runs shown";
  }

  function save() {
    try { history.replaceState(null, "", "#" + state.toString()); } catch (e) { /* a browser refusing it keeps the view, unlinked */ }
  }

  each(document.querySelectorAll("table.sortable"), function (table) {
    each(table.tHead.rows[0].cells, function (th) {
      th.querySelector("button").addEventListener("click", function () {
        var now = th.getAttribute("aria-sort");
        var dir = now === "descending" ? "asc" : now === "ascending" ? "desc" : th.getAttribute("data-type") === "num" ? "desc" : "asc";
        sortTable(table, th, dir);
        state.set("sort", table.id + ":" + th.getAttribute("data-key"));
        state.set("dir", dir);
        save();
      });
    });
  });
  each(document.querySelectorAll("select[data-filter]"), function (select) {
    var key = select.getAttribute("data-filter"), wanted = state.get(key);
    if (wanted && Array.prototype.some.call(select.options, function (o) { return o.value === wanted; })) select.value = wanted;
    select.addEventListener("change", function () {
      if (select.value) state.set(key, select.value); else state.delete(key);
      applyFilters();
      save();
    });
  });
  applyFilters();
  var sort = (state.get("sort") || "").split(":");
  var table = sort.length === 2 ? document.getElementById(sort[0]) : null;
  var th = table && table.tHead ? table.tHead.querySelector('th[data-key="' + (window.CSS ? CSS.escape(sort[1]) : sort[1]) + '"]') : null;
  if (th) sortTable(table, th, state.get("dir") === "asc" ? "asc" : "desc");
})();
